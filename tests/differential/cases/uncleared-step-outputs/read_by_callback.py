# differential: unchanged
"""A list of validation losses that the model averages in on_validation_epoch_end and that a
callback of the same file reads after the validation loop (pl_module.val_losses) to keep the
worst batch of each epoch.

The callback reads the list after the epoch-end hook: cleared at the end of that hook, the
callback would see an empty list (max() of an empty sequence raises). ddpfix reports the list
but offers no fix, not even with --unsafe-fixes.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)
        self.val_losses = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_losses.append(nn.functional.mse_loss(self.net(x), y))

    def on_validation_epoch_end(self):
        self.log("val_loss", torch.stack(self.val_losses).mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class WorstBatch(L.Callback):
    def __init__(self):
        self.worst = []

    def on_validation_end(self, trainer, pl_module):
        self.worst.append(float(max(pl_module.val_losses[-2:])))


if __name__ == "__main__":
    L.seed_everything(104, verbose=False)
    g = torch.Generator().manual_seed(105)
    x = torch.randn(48, 3, generator=g)
    y = x[:, :1] * 3
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    worst = WorstBatch()
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, callbacks=[worst], **probe.trainer_kwargs())
    trainer.fit(model, train, val)
    probe.record(trainer, model, worst=worst.worst)
    probe.finish()
