# differential: unsafe
"""validation_step averages a detached copy of its loss over the ranks for the progress bar
(`self.trainer.strategy.reduce(loss.detach(), reduce_op="mean")`, logged on rank 0 only), then logs
the loss itself (a mean over the epoch).

`loss` is global once the strategy has reduced, not this rank's own: `detach()` makes a tensor that
shares its source's storage (it is no copy), and Lightning's DDP strategy reduces the tensor it is
handed in place. DDP004 counts any unknown call handed something that reaches the value (here a
detached view of it) as one that may change it in place, and leaves the fix to --unsafe-fixes,
naming the call. (A mean of a value every rank shares gives it back, to rounding; with
reduce_fx="sum" it would double.)
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
        loss = F.mse_loss(self.net(x), y)
        # the averaged loss for the progress bar (Lightning's strategy reduces in place)
        avg = self.trainer.strategy.reduce(loss.detach(), reduce_op="mean")
        self.log("val_loss_avg", avg, prog_bar=True, rank_zero_only=True)
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
