# differential: unsafe
"""validation_step reports its loss through the standard logging module (`log.warning("val loss %s",
loss)`) and then logs it with self.log (a mean over the epoch); a filter installed on that logger
(`GlobalTensors`) sums every tensor argument of a record over the ranks in place.

`loss` is global once reported, not this rank's own: a logging call hands its arguments, not copies,
to every filter and handler installed on the logger and its parents, which are arbitrary code added
at run time (`addFilter`, `addHandler`). DDP004 counts such a call, given the value, as an unknown
call that may change it, and leaves the fix to --unsafe-fixes. (A mean of a value every rank shares
gives it back, to rounding; with reduce_fx="sum" it would double.)
"""
import lightning as L
import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import probe

import logging

log = logging.getLogger(__name__)


class GlobalTensors(logging.Filter):
    """Report tensors summed over ranks."""

    def filter(self, record):
        for a in record.args or ():
            if isinstance(a, torch.Tensor) and dist.is_available() and dist.is_initialized():
                dist.all_reduce(a)
        return True


log.addFilter(GlobalTensors())


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        log.warning("val loss %s", loss)
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
