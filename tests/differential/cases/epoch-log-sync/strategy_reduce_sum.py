# differential: unchanged
"""The number of correct validation predictions, summed over the ranks by the strategy
(`self.trainer.strategy.reduce(..., reduce_op="sum")`) before it is logged with reduce_fx="sum".

The value is the same on every rank before it is logged, so DDP004 does not report it: sync_dist=True
would all-reduce (sum) it once more, and every rank would log twice the count.
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
        return nn.functional.binary_cross_entropy_with_logits(self.net(x).squeeze(1), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        correct = ((self.net(x).squeeze(1) > 0).float() == y).sum().float()
        total = self.trainer.strategy.reduce(correct, reduce_op="sum")
        self.log("val_correct", total, reduce_fx="sum")

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] - x[:, 1] > 0).float()
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8), DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
