# differential: reference of datamodule_prepares_its_batches.py (sync_dist=True by hand)
"""The data module prepares its batches before Lightning moves them, as scvi-tools' do: the dataset
yields NumPy rows and a name per sample, and `on_before_batch_transfer` returns a dict written out
of tensors (`batch["x"].float()`, a `torch.from_numpy` of a column made here) and numbers, leaving
the names out. validation_step logs each rank's batch loss per epoch, with its batch size.

Under DDP each rank logs its own shard's mean. Lightning's move enters the returned dict whole, so
no tensor of the batch stays on the CPU (NCCL would refuse it), the CPU tensor the hook made too:
DDP004 adds sync_dist=True by default. The reference syncs by hand.
"""
import lightning as L
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

import probe


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        return nn.functional.mse_loss(self.net(batch["x"]).squeeze(1), batch["y"])

    def validation_step(self, batch, batch_idx):
        prediction = self.net(batch["x"]).squeeze(1) * batch["scale"]
        self.log("val_mse", nn.functional.mse_loss(prediction, batch["y"]), batch_size=4, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class Rows(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return {"x": self.x[index], "y": self.y[index], "name": f"row-{index}"}


class Samples(L.LightningDataModule):
    def __init__(self):
        super().__init__()
        self.scaled = True

    def setup(self, stage):
        rng = np.random.default_rng(5)
        x = rng.standard_normal((48, 4))
        y = x[:, 0] * 2 - x[:, 1]
        self.train_set, self.val_set = Rows(x[:32], y[:32]), Rows(x[32:], y[32:])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=8, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=4)

    def on_before_batch_transfer(self, batch, dataloader_idx):
        return {
            "x": batch["x"].float(),
            "y": torch.from_numpy(batch["y"].numpy()).float() if self.scaled else batch["y"].float(),
            "scale": torch.ones(1),
            "epoch": 0,
        }


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Regressor()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, datamodule=Samples())
    probe.record(trainer, model)
    probe.finish()
