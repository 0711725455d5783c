# differential: reference of monitored_moved_out.py (the log moved out of the guard by hand)
"""EarlyStopping monitors val_loss, which on_validation_epoch_end logs (with sync_dist=True) under a
rank-0 guard next to a print.

Only rank 0 enters the sync and only rank 0 has the key: the run hangs or rank 1 fails ("Early
stopping conditioned on metric `val_loss` which is not available"). The fix moves the log out of
the guard (every rank logs the synced mean) and keeps the print guarded; the reference is that
hand fix.
"""
from datetime import timedelta

import lightning as L
import torch
from lightning.pytorch.callbacks import EarlyStopping
from lightning.pytorch.strategies import DDPStrategy
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.val_losses = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_losses.append(nn.functional.mse_loss(self.net(x), y).detach())

    def on_validation_epoch_end(self):
        loss = torch.stack(self.val_losses).mean()
        self.log("val_loss", loss, sync_dist=True)
        if self.trainer.is_global_zero:
            print(f"val_loss={loss:.4f}")
        self.val_losses.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(48, 4, generator=g), torch.randn(48, 1, generator=g)
    model = Model()
    trainer = L.Trainer(
        strategy=DDPStrategy(timeout=timedelta(seconds=20)), max_epochs=3,
        callbacks=[EarlyStopping(monitor="val_loss", patience=1)], **probe.trainer_kwargs(),
    )
    trainer.fit(model, DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8), DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
