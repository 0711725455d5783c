# differential: safe
"""A column permutation kept as a plain int64 tensor attribute, in a subclass of a base of this file.

The base (a LightningModule of this file) holds the training loop and never names the attribute,
so it cannot define it; the permutation is name-mangled, built from literals through a known
method chain (torch.arange(6).flip(0)), never written after __init__, and only read in a helper
that forward calls. As a plain attribute it stays on the CPU when Lightning moves the module to a
GPU; as a non-persistent buffer it moves with it. The fix is safe: on CPU the rewrite must train
exactly like the original, with the same state_dict keys.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Regressor(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)


class ReversedInputs(Regressor):
    def __init__(self):
        super().__init__()
        self.__order = torch.arange(6).flip(0)
        self.net = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))

    def reorder(self, x):
        return x.gather(1, self.__order.expand(x.shape[0], -1))

    def forward(self, x):
        return self.net(self.reorder(x))


if __name__ == "__main__":
    L.seed_everything(70, verbose=False)
    g = torch.Generator().manual_seed(71)
    x = torch.randn(48, 6, generator=g)
    y = (x[:, 5] - 2 * x[:, 0]).unsqueeze(1)
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=8)
    model = ReversedInputs()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, train, val)
    probe.record(trainer, model)
    probe.finish()
