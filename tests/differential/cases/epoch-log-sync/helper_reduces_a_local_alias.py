# differential: unsafe
"""validation_step keeps its loss on the module (`self.last = loss`) and calls a method that sums the
kept loss over the ranks in place through a local name for it (`_share_last`: `last = self.last`,
then `dist.all_reduce(last)`), then logs `loss` (a mean over the epoch).

`loss` is global once `_share_last` has run, not this rank's own: an assignment binds a name to the
same object, not a copy, so the attribute, the helper's local name and `loss` are one tensor, and an
in-place collective through any of them changes all. DDP004 counts a value handed to the module as
one that any later method of the class or unknown call may change, and leaves the fix to
--unsafe-fixes. (With reduce_fx="mean" the logged value is the ranks' sum either way; a sync on top
would average values every rank already shares.)
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
        self.last = None

    def _share_last(self):
        last = self.last
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(last)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.last = loss
        self._share_last()
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
