# differential: unsafe
"""A shared-step helper computes the loss, keeps it on the module (`self.last_loss = loss`) and
returns it; validation_step calls it, then a method that averages the kept loss over the ranks in
place (`_sync_last`: `dist.all_reduce(self.last_loss)`, then `/=` the world size), and logs the
returned loss (a mean over the epoch).

The loss is global once `_sync_last` has run, not this rank's own: a helper returns the very object
it kept on the module, not a copy, so a method that changes the attribute's tensor in place changes
the step's `loss` too. DDP004 counts a value a helper hands to the module as one that any later
method of the class may change, and leaves the fix to --unsafe-fixes, naming the call. (A mean of a
value every rank shares gives it back, to rounding; with reduce_fx="sum" it would double.)
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

    def _shared_step(self, batch):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.last_loss = loss
        return loss

    def _sync_last(self):
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(self.last_loss)
            self.last_loss /= dist.get_world_size()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        loss = self._shared_step(batch)
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
