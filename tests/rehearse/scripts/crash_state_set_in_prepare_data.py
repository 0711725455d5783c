# rehearse: crash
# rule: none
"""A data module that builds its vocabulary in prepare_data and keeps it on self. Lightning calls
prepare_data on local rank 0 only (it is meant for downloads): on the other ranks self.vocab does
not exist, and setup raises AttributeError there."""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Data(L.LightningDataModule):
    def prepare_data(self):  # rehearse: here
        self.vocab = {word: index for index, word in enumerate(["a", "b", "c", "d"])}

    def setup(self, stage):
        size = len(self.vocab)
        self.train_set = TensorDataset(torch.randn(48, size), torch.randn(48, 1))

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=8)


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(9)
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=3, logger=False,
                        enable_checkpointing=False)
    trainer.fit(Model(), datamodule=Data())
