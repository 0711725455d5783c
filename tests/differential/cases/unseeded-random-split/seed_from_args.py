# differential: unchanged
"""The seed comes from the command line (a sweep runs --seed 1, 2, 3 ...), and the split in setup()
follows it.

Lightning re-seeds every DDP rank with that seed right before setup(), so the ranks already agree.
A generator seeded with a literal (the fix's 42: the script has no literal seed) would give every
run of the sweep the same split, losing the variation the sweep measures.
"""
import argparse

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

import probe


class Data(L.LightningDataModule):
    def setup(self, stage=None):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(40, 4, generator=g)
        self.train_set, self.val_set = random_split(TensorDataset(x, x.mean(dim=1, keepdim=True)), [0.8, 0.2])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=8, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=8)


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    L.seed_everything(args.seed, verbose=False)
    data = Data()
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, datamodule=data)
    probe.record(trainer, model, splits={"train": list(data.train_set.indices), "val": list(data.val_set.indices)})


if __name__ == "__main__":
    main()
    probe.finish()
