# differential: unsafe
"""validation_step sums each sample's error over the ranks in place through a view of it
(`flat = errors.view(-1)`, then `dist.all_reduce(flat)`), and logs the mean of `errors` (a mean
over the epoch).

`errors` is global once its view is reduced, not this rank's own: a view shares its tensor's
storage. DDP004 follows every name that may share an object with the one a call changes in place
(a view, an item, a tuple unpacked from the batch), and leaves the fix to --unsafe-fixes, naming
the call. (A mean of a value every rank shares gives it back, to rounding; with reduce_fx="sum" it
would double.)
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

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        errors = (self.net(x) - y).abs()
        flat = errors.view(-1)
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(flat)
        self.log("val_error", errors.mean())

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
