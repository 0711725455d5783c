# differential: unsafe
"""validation_step keeps its loss on the module (`self.last_loss = loss`) and calls a method that
averages the kept loss over the ranks in place (`_sync_last`: `dist.all_reduce(self.last_loss)`,
then `self.last_loss /= world_size`), then logs `loss` (a mean over the epoch).

`loss` is global once `_sync_last` has run, not this rank's own: an attribute assignment binds the
attribute to the same object, not a copy, so a method that changes the attribute's tensor in place
changes `loss`. DDP004 counts a value handed to the module as one that any later method of the
class or unknown call may change, and leaves the fix to --unsafe-fixes, naming the call. (A mean of
a value every rank shares gives it back, to rounding; with reduce_fx="sum" it would double.)
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

    def _sync_last(self):
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(self.last_loss)
            self.last_loss /= dist.get_world_size()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.last_loss = loss
        self._sync_last()
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
