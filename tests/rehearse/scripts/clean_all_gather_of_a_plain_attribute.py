# rehearse: clean
# rule: none
"""self.all_gather of a plain tensor attribute: LightningModule.all_gather moves the data to the rank's device
first, so NCCL gets a CUDA tensor: correct on GPUs (the NCCL emulation must not fire).
(From a review of the rehearsal.)"""
import torch
import lightning as L
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 2)
        self.val_preds = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.layer(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_preds.append(self.layer(x).argmax(1) == y)

    def on_validation_epoch_end(self):
        # keep this epoch's per-sample correctness (on the model's device), gather it from all GPUs
        self.epoch_correct = torch.cat(self.val_preds).float()
        self.val_preds.clear()
        everything = self.all_gather(self.epoch_correct)
        self.log("val_acc", everything.mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loader():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 8, generator=g)
    y = (x[:, 0] > 0).long()
    return DataLoader(TensorDataset(x, y), batch_size=8)


if __name__ == "__main__":
    L.seed_everything(0)
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=3, logger=False,
                        enable_checkpointing=False)
    trainer.fit(Model(), loader(), loader())
