# differential: unchanged
"""The DataModule seeds the global generator with its own split seed right before random_split.

Every rank runs the same torch.manual_seed(split_seed) and so draws the same split: there is no DDP
failure. The split is a choice the user made (split_seed=1234, independent of the training seed 7);
a generator seeded with anything else draws another split, so adding one changes which samples are
validated on.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

import probe


class TabularData(L.LightningDataModule):
    def __init__(self, split_seed=1234, batch_size=8):
        super().__init__()
        self.save_hyperparameters()

    def setup(self, stage=None):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(40, 6, generator=g)
        y = x[:, :2].sum(dim=1, keepdim=True)
        torch.manual_seed(self.hparams.split_seed)
        self.train_set, self.val_set = random_split(TensorDataset(x, y), [0.8, 0.2])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.hparams.batch_size, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=self.hparams.batch_size)


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(6, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(7, verbose=False)
    data = TabularData()
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, datamodule=data)
    probe.record(trainer, model, splits={"train": list(data.train_set.indices), "val": list(data.val_set.indices)})
    probe.finish()
