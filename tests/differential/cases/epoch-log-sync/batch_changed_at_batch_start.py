# differential: unsafe
"""The module's `on_validation_batch_start` sums each batch's targets over the ranks in place
(`dist.all_reduce(batch[1])`); validation_step then logs the sum of the batch's targets (`y.sum()`,
a mean over the epoch).

The logged sum is global, not this rank's own: Lightning hands the same batch object, not a copy, to
`on_validation_batch_start` and then to validation_step, so an in-place change made by the hook is
what the step reads. DDP004 counts a batch that a batch-start hook of the module may change as one
not known to be this rank's, and leaves the fix to --unsafe-fixes. (A mean of a value every rank
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

    def on_validation_batch_start(self, batch, batch_idx, dataloader_idx=0):
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(batch[1])

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_target_sum", y.sum())

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
