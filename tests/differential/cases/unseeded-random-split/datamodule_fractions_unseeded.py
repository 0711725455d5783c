# differential: unsafe
"""A DataModule splits 80/20 in setup(); the run never seeds the global generator.

The model initialises its weights from a generator of its own (reproducible weights), and under
strategy="ddp" Lightning shuffles through a DistributedSampler with a fixed seed, so training is
reproducible given a split. The split is not: each process draws it from its own, randomly seeded
global generator, so under DDP each rank validates on samples another rank trains on. The
reference is the hand fix: a generator seeded with 42 (the script has no seed of its own).
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

import probe


class SensorData(L.LightningDataModule):
    def __init__(self, batch_size=8):
        super().__init__()
        self.batch_size = batch_size

    def setup(self, stage=None):
        t = torch.linspace(0, 6.0, 50).unsqueeze(1)
        readings = torch.cat([torch.sin(t), torch.cos(t), t / 6.0], dim=1)
        target = torch.sin(2 * t)
        self.train_set, self.val_set = random_split(TensorDataset(readings, target), [0.8, 0.2])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=self.batch_size)


class SensorModel(L.LightningModule):
    def __init__(self, init_seed=0):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 12), nn.Tanh(), nn.Linear(12, 1))
        g = torch.Generator().manual_seed(init_seed)
        for p in self.net.parameters():
            nn.init.normal_(p, std=0.3, generator=g)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.03)


def main():
    data = SensorData()
    model = SensorModel()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, datamodule=data)
    probe.record(trainer, model, splits={"train": list(data.train_set.indices), "val": list(data.val_set.indices)})


if __name__ == "__main__":
    main()
    probe.finish()
