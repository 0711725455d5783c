# rehearse: clean
# rule: none
"""Trainer(sync_batchnorm=True), common on GPUs: SyncBatchNorm needs GPUs, so the rehearsal turns it
off (said) rather than calling it the script's crash.
(From a review of the rehearsal.)"""
import torch
import lightning as L
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.BatchNorm1d(16), torch.nn.ReLU(),
                                       torch.nn.Linear(16, 2))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.cross_entropy(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loader():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 8, generator=g)
    return DataLoader(TensorDataset(x, (x[:, 0] > 0).long()), batch_size=8)


if __name__ == "__main__":
    L.seed_everything(0)
    # small per-GPU batches: keep BatchNorm statistics over the global batch
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", sync_batchnorm=True, max_epochs=3,
                        logger=False, enable_checkpointing=False)
    trainer.fit(Model(), loader(), loader())
