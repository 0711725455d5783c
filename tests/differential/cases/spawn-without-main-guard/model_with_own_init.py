# differential: unsafe
"""A ddp_spawn script with no main guard whose LightningModule has its own __init__ (hyperparameters
saved, layers built there), constructed at module level before the Trainer.

A constructor of the user's own may do what every process needs (fill a registry, set a global,
seed, patch a library): moved into main(), the spawned children would no longer run it. Here it
does not, and the move a person reviews is right, but ddpfix cannot prove it: a class with its
own __init__ makes the move unsafe (offered with --unsafe-fixes), not safe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self, hidden=8, lr=0.05):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(4, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def train_dataloader(self):
        g = torch.Generator().manual_seed(201)
        x = torch.randn(32, 4, generator=g)
        return DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=8, shuffle=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)

    def on_fit_end(self):
        probe.record(self.trainer, self)


L.seed_everything(200, verbose=False)
model = Model(hidden=8)
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
trainer.fit(model)
