# differential: unsafe
"""validation_step sums each sample's error over the ranks in place through a view it makes in the
call itself (`dist.all_reduce(errors.view(-1))`), and logs the mean of `errors` (a mean over the
epoch).

`errors` is global once the view is reduced, not this rank's own: a view shares its tensor's
storage, so a collective that writes into the view writes into `errors`. DDP004 counts any unknown
call handed something that reaches the value (here a view built in its argument) as one that may
change it in place, and leaves the fix to --unsafe-fixes, naming the call. (A mean of a value every
rank shares gives it back, to rounding; with reduce_fx="sum" it would double.)
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

    def validation_step(self, batch, batch_idx):
        x, y = batch
        errors = (self.net(x) - y).abs()
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(errors.view(-1))
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
