# differential: unsafe
"""A ddp_spawn script with no main guard that fills a registry of activations with a call at module
level (after seed_everything) before building the model that looks its activation up.

Activations.register() is a call ddpfix does not know: moved into main(), it would run in the
parent only, and each spawned child (which imports the script afresh) would find the registry
empty when configure_model looks "swish" up (KeyError). The move is unsafe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe

class Activations:
    table = {}

    @classmethod
    def register(cls, name, factory):
        cls.table[name] = factory


class Model(L.LightningModule):
    def configure_model(self):
        if not hasattr(self, "net"):
            self.net = nn.Sequential(nn.Linear(4, 8), Activations.table["swish"](), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def train_dataloader(self):
        g = torch.Generator().manual_seed(151)
        x = torch.randn(32, 4, generator=g)
        return DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=8, shuffle=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)

    def on_fit_end(self):
        probe.record(self.trainer, self)


L.seed_everything(150, verbose=False)
Activations.register("swish", nn.SiLU)
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
trainer.fit(Model())
