# differential: unsafe
"""A score module of this file (no parameters) averages the predictions it is handed over the ranks
by mapping a function of the file over their mean (`sum(map(_share, [prediction.mean()]))`,
`_share` calling `dist.all_reduce`); validation_step logs the score of its predictions (a mean over
the epoch).

The score is global, not this rank's own: a function handed to `map` as a value is called with each
item, so the module runs the collective though it never calls `_share` by name. DDP004 follows a
module class of the file only when none of the code it reaches names a collective, so it leaves the
fix to --unsafe-fixes, naming the collective. (A mean of a value every rank shares gives it back,
to rounding; with reduce_fx="sum" it would double.)
"""
import lightning as L
import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import probe


def _share(t):
    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(t)
        t = t / dist.get_world_size()
    return t


class Score(nn.Module):
    def forward(self, prediction):
        return sum(map(_share, [prediction.mean()]))


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 1)
        self.score = Score()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_score", self.score(self.net(x)))

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
