# rehearse: clean
# rule: none
"""An epoch-level synced key logged only on batches with positives: synced once an epoch, so the
number of calls per rank does not matter.
(From a review of the rehearsal.)"""
import torch
import lightning as L
from torch.utils.data import DataLoader, TensorDataset


def data(n, seed):
    x = torch.randn(n, 8, generator=torch.Generator().manual_seed(seed))
    y = torch.zeros(n, dtype=torch.long)
    y[[0, 1, 8, 16, 17, 24, 25]] = 1                      # positives are rare
    x[:, 0] += 2 * y
    return TensorDataset(x, y)


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 2)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.layer(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        pred = self.layer(x).argmax(1)
        self.log("val_acc", (pred == y).float().mean(), sync_dist=True)
        positives = y == 1
        if positives.any():  # recall is undefined on a batch without positives
            recall = (pred[positives] == 1).float().mean()
            self.log("val_recall", recall, sync_dist=True, batch_size=int(positives.sum()))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0)
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=2, logger=False,
                        enable_checkpointing=False)
    trainer.fit(Model(), DataLoader(data(32, 0), batch_size=4), DataLoader(data(32, 0), batch_size=4))
    print(f"rank {trainer.global_rank} val_recall {trainer.callback_metrics['val_recall'].item():.4f}", flush=True)
