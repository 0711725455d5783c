# differential: unsafe
"""A DataModule splits 32/8 with int lengths in setup(), and nothing seeds the run.

The classifier head starts at zero and the loaders do not shuffle, so training is reproducible
given a split; the split is not: each process draws it from its own, randomly seeded global
generator. Under DDP every rank draws another split (validation samples of one rank are training
samples of the other). The reference is the hand fix, a seeded generator (42: the script has no
seed of its own); the original is held to the rewrite's shape only, since no two runs of it draw
the same split.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

import probe


class BlobsData(L.LightningDataModule):
    def setup(self, stage=None):
        g = torch.Generator().manual_seed(3)
        centers = torch.tensor([[2.0, 0.0, 0.0], [-2.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
        labels = torch.arange(40) % 3
        features = centers[labels] + torch.randn(40, 3, generator=g)
        self.train_set, self.val_set = random_split(TensorDataset(features, labels), [32, 8])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=8)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=4)


class LinearProbe(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(3, 3)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.head(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.head(x)
        self.log("val_loss", nn.functional.cross_entropy(logits, y), sync_dist=True)
        self.log("val_acc", (logits.argmax(dim=1) == y).float().mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.5)


def main():
    data = BlobsData()
    model = LinearProbe()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, datamodule=data)
    probe.record(trainer, model, splits={"train": list(data.train_set.indices), "val": list(data.val_set.indices)})


if __name__ == "__main__":
    main()
    probe.finish()
