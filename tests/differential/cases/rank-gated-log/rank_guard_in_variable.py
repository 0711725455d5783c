# differential: safe
"""The rank guard is held in a variable: `is_main = self.trainer.is_global_zero`, then `if is_main:`.

Only rank 0 logs val_first_batch_loss, so DDP004 adds no sync (rank 0 alone would enter its
all-reduce and wait for rank 1 forever); DDP003 reads the name bound once to the rank test and marks
the unmonitored log rank_zero_only=True, which changes nothing rank 0 logs.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("val_loss", loss, sync_dist=True)
        is_main = self.trainer.is_global_zero
        if is_main and batch_idx == 0:
            self.log("val_first_batch_loss", loss)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(48, 4, generator=g), torch.randn(48, 1, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8), DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
