# differential: unsafe
"""A ddp_spawn script with no main guard whose DataModule reads the batch size through
globals()["BATCH_SIZE"] at run time.

Every other statement that would move is known (seed_everything, a literal, a DataModule and a
LightningModule of this file, the Trainer, fit), but moved into main(), BATCH_SIZE = 8 is no longer
a global of the module: the spawned children (which import the script afresh) raise KeyError in
train_dataloader. A file that reads its module's names at run time makes every move unsafe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def configure_model(self):
        if not hasattr(self, "net"):
            self.net = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)

    def on_fit_end(self):
        probe.record(self.trainer, self)


class Data(L.LightningDataModule):
    def train_dataloader(self):
        g = torch.Generator().manual_seed(161)
        x = torch.randn(32, 4, generator=g)
        return DataLoader(TensorDataset(x, x[:, :1] - x[:, 3:]), batch_size=globals()["BATCH_SIZE"], shuffle=True)


L.seed_everything(160, verbose=False)
BATCH_SIZE = 8
trainer = L.Trainer(
    strategy="ddp_spawn",
    accelerator="cpu",
    devices=probe.DEVICE_COUNT,
    max_epochs=2,
    logger=False,
    enable_progress_bar=False,
    enable_model_summary=False,
    enable_checkpointing=False,
    deterministic=True,
)
trainer.fit(Model(), datamodule=Data())
