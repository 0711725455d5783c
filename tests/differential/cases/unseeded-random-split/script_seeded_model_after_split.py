# differential: unsafe
"""A DDP training script seeds, builds its data, splits it three ways with int lengths, then builds
the model, trains and tests.

Every rank runs seed_everything(11) first, so every rank draws the same split: no DDP failure. The
fix's generator (seeded with the same 11) draws the same split too, but the split then no longer
draws from the global generator, so the model built after it starts from other weights: the seeded
run computes something else. A fix to offer for review, not to apply unasked.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

import probe


class Classifier(L.LightningModule):
    def __init__(self, hidden=6):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(4, hidden), nn.ReLU(), nn.Linear(hidden, 2))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.cross_entropy(self.net(x), y), sync_dist=True)

    def test_step(self, batch, batch_idx):
        x, y = batch
        acc = (self.net(x).argmax(dim=1) == y).float().mean()
        self.log("test_acc", acc, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.2, momentum=0.9)


def main():
    L.seed_everything(11, verbose=False)
    g = torch.Generator().manual_seed(5)
    x = torch.randn(40, 4, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long()
    train_set, val_set, test_set = random_split(TensorDataset(x, y), [24, 8, 8])
    model = Classifier()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(train_set, batch_size=4, shuffle=True), DataLoader(val_set, batch_size=4))
    trainer.test(model, DataLoader(test_set, batch_size=4), verbose=False)
    splits = {"train": list(train_set.indices), "val": list(val_set.indices), "test": list(test_set.indices)}
    probe.record(trainer, model, splits=splits)


if __name__ == "__main__":
    main()
    probe.finish()
