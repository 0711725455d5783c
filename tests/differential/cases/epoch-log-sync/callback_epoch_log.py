# differential: unsafe
"""A Callback logs the mean of the validation losses the module kept for this epoch through
`pl_module.log` in `on_validation_epoch_end`: per epoch, each rank's own mean without sync_dist.

DDP004 reports it and leaves the fix to a person: the proof does not cover callbacks (which modules
one is attached to, and whether every rank reaches its log in the same order, is not read).
"""
import lightning as L
import torch
from lightning.pytorch.callbacks import Callback
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class ValidationMean(Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        pl_module.log("val_loss_mean", torch.stack(pl_module.val_losses).mean())
        pl_module.val_losses.clear()


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.val_losses = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x).squeeze(1), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_losses.append(nn.functional.mse_loss(self.net(x).squeeze(1), y).detach())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 4, generator=g)
    y = x[:, 0] - 2 * x[:, 1]
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, callbacks=[ValidationMean()], **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8), DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
