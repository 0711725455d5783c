# differential: reference of private_val_losses_stacked.py (the list emptied by hand)
"""validation_step appends each batch's loss to a private list; on_validation_epoch_end stacks it.

Nothing clears the list, so epoch 2's val_loss is the mean over epochs 1 and 2 together (and the
list grows every epoch on every rank): the original is wrong in one process too, so the reference
(the list emptied by hand at the end of the hook) is the yardstick everywhere. The list is
name-mangled, made empty in __init__, only appended to, and only read whole through torch.stack:
the fix (self.__outs.clear()) is safe, and must log each epoch's own val_loss like the reference.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        self.__outs = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.__outs.append(nn.functional.mse_loss(self.net(x), y))

    def on_validation_epoch_end(self):
        self.log("val_loss", torch.stack(self.__outs).mean(), sync_dist=True)
        del self.__outs[:]

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(3, verbose=False)
    g = torch.Generator().manual_seed(7)
    x = torch.randn(48, 4, generator=g)
    y = x[:, :1] * 2 - x[:, 1:2]
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, train, val)
    probe.record(trainer, model)
    probe.finish()
