# differential: unchanged
"""ModelCheckpoint monitors val_full_score, an expensive score over the whole validation set that
only rank 0 computes (in on_validation_epoch_start); on_validation_epoch_end logs it under a rank-0
guard.

On the other ranks the attribute holds a NaN placeholder: a log moved out of the guard with
sync_dist=True averages rank 0's score with those NaNs, so every rank (rank 0 included) logs NaN
and the checkpoint follows NaN. The value exists on rank 0 only; the fix must be a person's.
"""
import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self, full_val):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.full_val = full_val
        self.full_score = float("nan")

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def on_validation_epoch_start(self):
        self.full_score = float("nan")
        if self.trainer.is_global_zero:
            x, y = self.full_val
            with torch.no_grad():
                self.full_score = -nn.functional.mse_loss(self.net(x), y)

    def on_validation_epoch_end(self):
        if self.trainer.is_global_zero:
            self.log("val_full_score", self.full_score)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(48, 4, generator=g), torch.randn(48, 1, generator=g)
    model = Model(full_val=(x[32:], y[32:]))
    checkpoint = ModelCheckpoint(monitor="val_full_score", mode="max")
    trainer = L.Trainer(strategy="ddp", max_epochs=2, callbacks=[checkpoint], **probe.trainer_kwargs(enable_checkpointing=True))
    trainer.fit(model, DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8), DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
