# differential: unchanged
"""ModelCheckpoint monitors the metric the environment names (MONITOR, default val_acc); the model
logs val_acc under a rank-0 guard.

No reading of the file can say which metric is monitored: marking the log rank_zero_only=True
keeps rank 1 without the key ModelCheckpoint reads, so the DDP run still fails while the fix
claims to have fixed it; only moving the log out of the guard fixes it.
"""
import os

import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe

MONITOR = os.environ.get("MONITOR", "val_acc")


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.hits = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.hits.append((self.net(x).argmax(dim=1) == y).float())

    def on_validation_epoch_end(self):
        acc = torch.cat(self.hits).mean()
        self.hits.clear()
        if self.trainer.is_global_zero:
            self.log("val_acc", acc)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long()
    checkpoint = ModelCheckpoint(monitor=MONITOR, mode="max", save_top_k=1)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, callbacks=[checkpoint], **probe.trainer_kwargs(enable_checkpointing=True))
    trainer.fit(model, DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8), DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
