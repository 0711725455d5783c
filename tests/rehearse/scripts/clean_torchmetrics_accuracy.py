# rehearse: clean
# rule: none
"""A torchmetrics metric object logged with self.log.

Logging the Metric object (not a tensor) lets torchmetrics accumulate the
counts on each rank and reduce them across ranks when the epoch value is
computed, so every rank gets the same `val_acc` without sync_dist=True.
ModelCheckpoint monitors it.
"""
import lightning as L
import torch
import torchmetrics
from lightning.pytorch.callbacks import ModelCheckpoint
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Classifier(L.LightningModule):
    def __init__(self, num_classes=3):
        super().__init__()
        self.layer = nn.Linear(12, num_classes)
        self.val_acc = torchmetrics.classification.MulticlassAccuracy(num_classes=num_classes)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.layer(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_acc(self.layer(x), y)
        self.log("val_acc", self.val_acc)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-2)


if __name__ == "__main__":
    L.seed_everything(15)
    train = TensorDataset(torch.randn(48, 12), torch.randint(0, 3, (48,)))
    val = TensorDataset(torch.randn(24, 12), torch.randint(0, 3, (24,)))
    trainer = L.Trainer(
        accelerator="cuda",
        devices=2,
        strategy="ddp",
        max_epochs=2,
        callbacks=[ModelCheckpoint(monitor="val_acc", mode="max")],
        logger=False,
        enable_progress_bar=False,
    )
    trainer.fit(Classifier(), DataLoader(train, batch_size=8, shuffle=True), DataLoader(val, batch_size=8))
