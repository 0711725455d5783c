# differential: unchanged
"""The number of validation samples seen, already summed over the ranks with all_gather, logged with
reduce_fx="sum".

The value is global before it is logged: sync_dist=True would all-reduce (sum) it once more, and
every rank would log twice the count.
"""
import lightning as L
import torch
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
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)
        seen = self.all_gather(torch.tensor(float(len(x)), device=self.device)).sum()
        self.log("val_samples", seen, reduce_fx="sum")

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
