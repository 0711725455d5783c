# differential: unsafe
"""Each rank seeds itself differently on purpose (seed_everything(1000 + LOCAL_RANK): other
dropout masks and augmentations per rank), and the DataModule splits in setup().

Lightning re-seeds each rank with its own seed right before setup(), so rank 1 draws another split
than rank 0: validation leaks into training. The fix gives the split a generator of its own (seed
42: the script's seed is not a literal), which is what the reference does by hand; the per-rank
seeds still drive everything else.
"""
import os

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

import probe


class Data(L.LightningDataModule):
    def setup(self, stage=None):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(40, 4, generator=g)
        y = (x[:, :1] > 0).float()
        self.train_set, self.val_set = random_split(TensorDataset(x, y), [0.8, 0.2])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=8, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=4)


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.binary_cross_entropy_with_logits(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.log("val_loss", nn.functional.binary_cross_entropy_with_logits(logits, y), sync_dist=True)
        self.log("val_acc", ((logits > 0).float() == y).float().mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.5)


def main():
    L.seed_everything(1000 + int(os.environ.get("LOCAL_RANK", 0)), verbose=False)
    data = Data()
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, datamodule=data)
    probe.record(trainer, model, splits={"train": list(data.train_set.indices), "val": list(data.val_set.indices)})


if __name__ == "__main__":
    main()
    probe.finish()
