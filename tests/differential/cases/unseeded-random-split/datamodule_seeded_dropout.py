# differential: unsafe
"""A DataModule splits its dataset 80/20 in setup(); the run is seeded with seed_everything(7), and
the model uses dropout.

Lightning's DDP strategy re-seeds every rank from seed_everything's seed right before setup(), so
the original already draws the same split on every rank: there is no DDP failure to fix. The
generator the fix adds (seeded with the same 7) even draws the same split, but the split no longer
draws from the global generator, so every dropout mask after it changes: the seeded run trains to
other weights. (Without the dropout the two runs are equal; ddpfix cannot tell the two apart.)
A fix to offer for review (it makes the split independent of whatever draws before it), not to
apply unasked.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

import probe


class RegressionData(L.LightningDataModule):
    def __init__(self, batch_size=8):
        super().__init__()
        self.batch_size = batch_size

    def setup(self, stage=None):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(40, 4, generator=g)
        y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1 * torch.randn(40, 1, generator=g)
        full = TensorDataset(x, y)
        self.train_set, self.val_set = random_split(full, [0.8, 0.2])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=self.batch_size)


class Regressor(L.LightningModule):
    def __init__(self, lr=0.05):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(0.25), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)


def main():
    L.seed_everything(7, verbose=False)
    data = RegressionData()
    model = Regressor()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, datamodule=data)
    probe.record(trainer, model, splits={"train": list(data.train_set.indices), "val": list(data.val_set.indices)})


if __name__ == "__main__":
    main()
    probe.finish()
