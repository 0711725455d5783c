# rehearse: clean
# rule: none
"""A LightningDataModule with prepare_data/setup and a seeded random_split.

setup() runs on every rank; the split draws from its own generator seeded
with a constant, so every rank gets the same train/val split and the
DistributedSampler shards one and the same training set.
"""
import lightning as L
import torch
from lightning.pytorch.strategies import DDPStrategy
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split


class Data(L.LightningDataModule):
    def __init__(self, batch_size=8):
        super().__init__()
        self.batch_size = batch_size

    def prepare_data(self):
        # Download/unpack would happen here, once per node.
        pass

    def setup(self, stage=None):
        rows = torch.Generator().manual_seed(2024)
        x = torch.randn(60, 8, generator=rows)
        full = TensorDataset(x, (x[:, :1] > 0).float())
        self.train_set, self.val_set = random_split(full, [44, 16], generator=torch.Generator().manual_seed(0))

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=self.batch_size)


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.binary_cross_entropy_with_logits(self.layer(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.binary_cross_entropy_with_logits(self.layer(x), y)
        self.log("val_loss", loss, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(16)
    trainer = L.Trainer(
        accelerator="gpu",
        devices=8,
        strategy=DDPStrategy(find_unused_parameters=False),
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(Model(), datamodule=Data())
