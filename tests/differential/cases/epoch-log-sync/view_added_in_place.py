# differential: unsafe
"""validation_step shifts each sample's error by the mean error over every rank, in place through a
view of it (`flat = errors.view(-1)`, then `flat += self.all_gather(errors.detach()).mean()`), and
logs the mean of `errors` (a mean over the epoch).

`errors` is no longer this rank's own value alone once the view is added to: a view shares its
tensor's storage, and `+=` on a tensor adds in place, so part of what `errors` holds is the same on
every rank. DDP004 cannot tell what an in-place store through a name that shares the value's object
brings in (a global value added, or one that replaces it: `flat[:] = g`), and leaves the fix to
--unsafe-fixes, naming the call whose result is stored. (Here a sync averages the ranks' own parts
and keeps the shared one, so the synced value differs from rank 0's: whether that is the value the
author meant is for a person to judge.)
"""
import lightning as L
import torch
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

    def validation_step(self, batch, batch_idx):
        x, y = batch
        errors = (self.net(x) - y).abs()
        flat = errors.view(-1)
        flat += self.all_gather(errors.detach()).mean()
        self.log("val_error", errors.mean())

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
