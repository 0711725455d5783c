# differential: unsafe
"""A helper sums the batch's sample count over the ranks in place (`dist.all_reduce(count)`), and
validation_step logs that count (a mean over the epoch).

The count is global once the helper has run, not this rank's own: DDP004 follows the helper, sees
that it changes its argument in place through a call it does not know, and leaves the fix to
--unsafe-fixes, naming the call. (A mean of a value every rank shares gives it back, to rounding;
with reduce_fx="sum" it would double, and DDP004 never adds a sync to a sum by default.)
"""
import lightning as L
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 1)

    def _count(self, count):
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(count)
        return count

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)
        count = torch.ones((), device=self.device) * len(x)
        self._count(count)
        self.log("val_samples", count)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(40, 2, generator=g), torch.randn(40, 1, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:24], y[:24]), batch_size=8), DataLoader(TensorDataset(x[24:], y[24:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
