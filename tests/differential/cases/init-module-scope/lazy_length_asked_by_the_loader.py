# differential: unsafe
"""A dataset normalises its readings lazily, on the first `len(...)`: cheap to build, and its
`__init__` only stores its arguments. `DataLoader(train_ds, shuffle=True)` asks that length (its
RandomSampler does), so inside `trainer.init_module()` under `"bf16-true"` the data is built in
bf16; moved out of the block it is built in float32, and the trained weights differ (review round
15). The move is unsafe.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import lightning as L
from torch.utils.data import DataLoader, Dataset

import probe


class SensorWindows(Dataset):
    """Synthetic sensor readings, normalised lazily on first use (cheap to construct)."""

    def __init__(self, n, window):
        self.n = n
        self.window = window
        self._x = None

    def _materialise(self):
        if self._x is None:
            t = torch.linspace(0, 40, self.n * self.window).reshape(self.n, self.window)
            raw = torch.sin(t) * 3.7 + t * 0.11
            self._x = (raw - raw.mean()) / raw.std()
            self._y = self._x.roll(-1, dims=1)[:, -1:]
        return self._x, self._y

    def __len__(self):
        return self._materialise()[0].shape[0]

    def __getitem__(self, i):
        x, y = self._materialise()
        return x[i], y[i]


class Forecaster(L.LightningModule):
    def __init__(self, window=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(window, 32), nn.Tanh(), nn.Linear(32, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(7, verbose=False)
    trainer = L.Trainer(strategy="ddp", precision="bf16-true", max_epochs=2, **probe.trainer_kwargs())
    with trainer.init_module():
        model = Forecaster(window=16)
        train_ds = SensorWindows(n=64, window=16)
        loader = DataLoader(train_ds, batch_size=16, shuffle=True)
    trainer.fit(model, loader)
    probe.record(trainer, model)
    probe.finish()
