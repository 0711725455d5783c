# differential: unsafe
"""validation_step returns its batch's targets (`return y`); the module's `on_validation_batch_end`
sums those outputs over the ranks in place (`dist.all_reduce(outputs)`) and then logs the sum of the
batch's targets (`y.sum()`, on_epoch=True).

The logged sum is global, not this rank's own: the step's output is the batch's own tensor, not a
copy, and Lightning hands the same batch to `on_validation_batch_end`, so the in-place collective on
`outputs` changes `y` there too. DDP004 takes a batch-end hook's `outputs` and
`batch` as possibly one object (a step may return part of its batch), and leaves the fix to --unsafe-fixes. (A mean of a value every rank
shares gives it back, to rounding; with reduce_fx="sum" it would double.)
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
        return y

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(outputs)
        x, y = batch
        self.log("val_target_sum", y.sum(), on_epoch=True)

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
