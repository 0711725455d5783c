# differential: unsafe
"""The module holds a width object whose `__index__` averages the last loss it was shown over the
ranks, in place, before it gives its width back. validation_step shows it the loss
(`w.seen = loss`), draws noise sized by it (`torch.randn(x.shape[0], w)`), and logs the loss and the
noise's mean (means over the epoch).

`loss` is global once the noise is drawn, not this rank's own: reading an object as a size runs its
`__index__`, any code at all, and here that code reduces the tensor the object holds, which is
`loss` itself (an attribute assignment binds the same object, not a copy). DDP004 counts a factory
handed a size it does not know (neither a constant nor a batch's length) as an unknown call that
may change what reaches it, and leaves both fixes to --unsafe-fixes (the loss's naming that call).
(A mean of a value every rank shares gives it back, to rounding; with reduce_fx="sum" it would
double.)
"""
import lightning as L
import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import probe


class Width:
    """A width that averages the loss it was last shown over the ranks when read as a size."""

    def __init__(self, n):
        self.n, self.seen = n, None

    def __index__(self):
        if self.seen is not None and dist.is_available() and dist.is_initialized():
            dist.all_reduce(self.seen)
            self.seen /= dist.get_world_size()
        return self.n


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 1)
        self.width = Width(2)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        w = self.width
        w.seen = loss
        noise = torch.randn(x.shape[0], w, device=self.device)
        self.log("val_loss", loss)
        self.log("val_noise", noise.abs().mean())

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
