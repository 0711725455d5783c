# differential: unchanged
"""on_validation_epoch_end returns early when the private list is empty, before it averages it.

An appended clear() at the end of the hook would not run on the early return, and a clear placed
elsewhere changes when the list empties: ddpfix reports the list but offers no fix (an epoch-end
hook that can return early), not even with --unsafe-fixes.
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
        self.__outs = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.__outs.append(nn.functional.mse_loss(self.net(x), y))

    def on_validation_epoch_end(self):
        if not self.__outs:
            return
        self.log("val_loss", torch.stack(self.__outs).mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(106, verbose=False)
    g = torch.Generator().manual_seed(107)
    x = torch.randn(48, 3, generator=g)
    y = x[:, 1:2] - x[:, :1]
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, train, val)
    probe.record(trainer, model)
    probe.finish()
