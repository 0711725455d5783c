# differential: unsafe
"""Accuracy counted over the epoch in validation_step and logged once in on_validation_epoch_end.

Each rank counts its own shard, so without sync_dist the logged accuracy is the rank's own. The
reference reduces the counts by hand (sum of correct over sum of seen, across ranks): with the
equal shards DistributedSampler makes, the mean of the ranks' accuracies the fix logs is the same.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(5, 2)
        self.correct = 0
        self.seen = 0

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.correct += int((self.net(x).argmax(dim=1) == y).sum())
        self.seen += len(y)

    def on_validation_epoch_end(self):
        self.log("val_acc", self.correct / self.seen)
        self.correct = self.seen = 0

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.2)


if __name__ == "__main__":
    L.seed_everything(5, verbose=False)
    g = torch.Generator().manual_seed(11)
    x = torch.randn(56, 5, generator=g)
    y = (x.sum(dim=1) + 0.8 * torch.randn(56, generator=g) > 0).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=6)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, train, val)
    probe.record(trainer, model)
    probe.finish()
