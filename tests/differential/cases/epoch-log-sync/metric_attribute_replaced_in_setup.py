# differential: unsafe
"""The module builds a torchmetrics `MeanMetric` in `__init__` (`self.val_mean`) and replaces it in
`setup("fit")` with a running mean of its own (`GlobalMean`), whose `update` sums the value it is
given over the ranks in place (`dist.all_reduce(value)`); validation_step calls
`self.val_mean.update(loss)` and then logs `loss` (a mean over the epoch).

`loss` is global once updated, not this rank's own: an attribute's object is whatever was last
assigned to it, and Lightning calls `setup` after `__init__`, so the `update` that runs is
GlobalMean's, which changes the tensor itself, not a copy. DDP004 counts an attribute as a torchmetrics
object only where every assignment of it builds one, so the update is an unknown call, and leaves
the fix to --unsafe-fixes. (A mean of a value every rank shares gives it back, to rounding; with
reduce_fx="sum" it would double.)
"""
import lightning as L
import torch
import torch.distributed as dist
import torchmetrics
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import probe


class GlobalMean(nn.Module):
    """A running mean over every rank: sums the values in place across ranks first."""

    def __init__(self):
        super().__init__()
        self.total, self.count = 0.0, 0

    def update(self, value):
        world = 1
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(value)
            world = dist.get_world_size()
        self.total += float(value)
        self.count += world


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 1)
        self.val_mean = torchmetrics.MeanMetric()

    def setup(self, stage):
        if stage == "fit":
            self.val_mean = GlobalMean()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.val_mean.update(loss)
        self.log("val_loss", loss)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(48, 2, generator=g), torch.randn(48, 1, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:16], y[:16]), batch_size=4), DataLoader(TensorDataset(x[16:], y[16:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
