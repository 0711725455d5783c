# rehearse: limit
# rule: DDP013
"""Data sharded by rank by hand while Lightning shards it again.

setup() keeps every WORLD_SIZE-th sample starting at LOCAL_RANK, so each rank
already holds a different half of the data. Lightning then wraps the loader in
a DistributedSampler, which hands each rank half of *its* half. Each epoch
trains on only half of the dataset (a quarter per rank, half the steps one
expects), and each rank's dataset is different, so the sampler's "disjoint
shards of one dataset" assumption no longer holds. Nothing crashes.
"""
import os

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class ShardedData(L.LightningDataModule):
    def __init__(self, batch_size=4):
        super().__init__()
        self.batch_size = batch_size

    def setup(self, stage=None):
        rows = torch.Generator().manual_seed(99)
        x, y = torch.randn(64, 8, generator=rows), torch.randn(64, 1, generator=rows)
        rank = int(os.environ.get("LOCAL_RANK", 0))
        world = int(os.environ.get("WORLD_SIZE", 1))
        self.train_set = TensorDataset(x[rank::world], y[rank::world])  # rehearse: here

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size)


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.layer(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(12)
    trainer = L.Trainer(
        accelerator="gpu",
        devices=2,
        strategy="ddp",
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(Model(), datamodule=ShardedData())
