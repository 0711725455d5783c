# differential: unsafe
"""A helper averages its argument over the ranks in place from a function nested in it (`_sync(t)`
defines `reduce()`, which runs `dist.all_reduce(t)` and `t.div_(world_size)`, and calls it), and
validation_step logs the loss it handed the helper (a mean over the epoch).

The loss is global once the helper has run, not this rank's own: a nested function's free name
is the enclosing function's own object (a closure reads it, it does not copy it), so the nested
collective changes the caller's tensor. DDP004 follows the helper, counts a helper that changes an
argument in a nested function as one that changes it, and leaves the fix to --unsafe-fixes, naming
the call. (A mean of a value every rank shares gives it back, to rounding; with reduce_fx="sum" it
would double.)
"""
import lightning as L
import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def _sync(self, t):
        def reduce():
            if dist.is_available() and dist.is_initialized():
                dist.all_reduce(t)
                t.div_(dist.get_world_size())

        reduce()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self._sync(loss)
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
