# differential: reference of plateau_scheduler.py (sync_dist=True by hand)
"""ReduceLROnPlateau watches val_loss, which validation_step logs without sync_dist.

Under DDP each rank's scheduler steps on its own shard's val_loss, so the ranks can cut their
learning rates at different epochs, and from then on the replicas drift apart (DDP averages the
gradients, not the step sizes). The fix syncs val_loss, so every rank's scheduler sees the same
value; the reference syncs it by hand.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def on_train_epoch_end(self):
        self.log("lr", self.optimizers().param_groups[0]["lr"], sync_dist=True)

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.2)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.1, patience=0, threshold=0.05)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "monitor": "val_loss"}}


if __name__ == "__main__":
    L.seed_everything(3, verbose=False)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(64, 4, generator=g)
    y = torch.sin(x[:, :1] * 2) + x[:, 1:2] * x[:, 2:3]
    train = DataLoader(TensorDataset(x[:40], y[:40]), batch_size=5, shuffle=True)
    val = DataLoader(TensorDataset(x[40:], y[40:]), batch_size=4)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=4, **probe.trainer_kwargs())
    trainer.fit(model, train, val)
    probe.record(trainer, model)
    probe.finish()
