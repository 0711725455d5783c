# differential: unsafe
"""validation_step stores its loss in a dict the module holds, through a local name for that dict
(`stats = self.stats`, then `stats["val_loss"] = loss`), and calls a method that sums every value
of the dict over the ranks in place (`_share_stats`: `dist.all_reduce(value)` for each), then logs
`loss` (a mean over the epoch).

`loss` is global once `_share_stats` has run, not this rank's own: a name bound to an attribute is
the same object, not a copy, so storing into the alias stores into the module's dict, and a method
that changes the dict's tensors in place changes `loss`. DDP004 counts a value stored into any
object the module may hold as one that any later method of the class or unknown call may change,
and leaves the fix to --unsafe-fixes. (A mean of a value every rank shares gives it back, to
rounding; with reduce_fx="sum" it would double.)
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
        self.stats = {}

    def _share_stats(self):
        if dist.is_available() and dist.is_initialized():
            for value in self.stats.values():
                dist.all_reduce(value)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        stats = self.stats
        stats["val_loss"] = loss
        self._share_stats()
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
