# differential: safe
"""A sequence regressor adds a sinusoidal positional encoding whose table `__init__` computes on the
CPU (`torch.zeros`, `torch.arange`, filled in place) only to register it as a buffer, which moves
with the module. validation_step logs each rank's batch loss per epoch.

Under DDP each rank logs its own shard's mean. Nothing the encoding made in `__init__` stays on the
CPU (the buffer moves; the locals are gone), so the logged value is on the rank's device and NCCL
takes it: DDP004 adds sync_dist=True by default. The reference syncs by hand.
"""
import math

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class PositionalEncoding(nn.Module):
    def __init__(self, width, longest=16):
        super().__init__()
        table = torch.zeros(longest, width)
        position = torch.arange(0, longest, dtype=torch.float).unsqueeze(1)
        scale = torch.exp(torch.arange(0, width, 2).float() * (-math.log(10000.0) / width))
        table[:, 0::2] = torch.sin(position * scale)
        table[:, 1::2] = torch.cos(position * scale)
        self.register_buffer("table", table.unsqueeze(0), persistent=False)

    def forward(self, x):
        return x + self.table[:, : x.size(1)]


class SequenceRegressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.position = PositionalEncoding(4)
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(self.position(x)).mean(dim=(1, 2))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_mse", nn.functional.mse_loss(self(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loaders():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(48, 6, 4, generator=g)
    y = x[:, :, 0].mean(dim=1) * 2 - x[:, 0, 1]
    train, val = TensorDataset(x[:32], y[:32]), TensorDataset(x[32:], y[32:])
    return DataLoader(train, batch_size=8, shuffle=True), DataLoader(val, batch_size=4)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = SequenceRegressor()
    train_loader, val_loader = loaders()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, train_loader, val_loader)
    probe.record(trainer, model)
    probe.finish()
