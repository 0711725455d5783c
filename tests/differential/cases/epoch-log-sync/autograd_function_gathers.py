# differential: unsafe
"""A head module of this file gathers its predictions from every rank in its forward through an
autograd Function that keeps their gradient (SimCLR's gather layer: `dist.all_gather` forward, this
rank's slice of the summed gradient backward); training_step fits the gathered predictions to the
gathered targets, and validation_step logs their mean (a mean over the epoch).

The score is global, not this rank's own: `Function.apply` runs the Function's `forward`, whatever
code it holds, here a collective, and every rank gets the same gathered predictions. DDP004 follows
a module class of the file only when nothing it calls may be a collective (here `GatherLayer`), so
it takes what the head returns as possibly global, and leaves the fix to --unsafe-fixes. (A mean of a value every rank
shares gives it back, to rounding; with reduce_fx="sum" it would double.)
"""
import lightning as L
import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import probe


class GatherLayer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if not (dist.is_available() and dist.is_initialized()):
            return x.clone()
        out = [torch.zeros_like(x) for _ in range(dist.get_world_size())]
        dist.all_gather(out, x.contiguous())
        return torch.cat(out)

    @staticmethod
    def backward(ctx, grad):
        if not (dist.is_available() and dist.is_initialized()):
            return grad
        grad = grad.contiguous()
        dist.all_reduce(grad)
        size = grad.shape[0] // dist.get_world_size()
        return grad[dist.get_rank() * size:(dist.get_rank() + 1) * size]


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def forward(self, x):
        return GatherLayer.apply(self.fc(x))


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.head = Head()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.head(x), self.all_gather(y).reshape(-1, 1))

    def validation_step(self, batch, batch_idx):
        x, y = batch
        z = self.head(x)
        score = z.mean()
        self.log("val_score", score)

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
