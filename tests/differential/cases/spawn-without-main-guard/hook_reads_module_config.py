# differential: unchanged
"""A ddp_spawn script with no main guard whose LightningModule reads a module-level CONFIG dict in
configure_optimizers; CONFIG is bound after seed_everything, among the statements that would move.

Moved into main(), CONFIG would be a local of main(): the spawned children, which import the
script afresh and run configure_optimizers, would raise NameError. A function above that uses a
name the moved statements bind makes ddpfix report the missing guard without a fix, not even with
--unsafe-fixes.
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

    def train_dataloader(self):
        g = torch.Generator().manual_seed(191)
        x = torch.randn(32, 4, generator=g)
        return DataLoader(TensorDataset(x, x[:, 1:2]), batch_size=8, shuffle=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=CONFIG["lr"])

    def on_fit_end(self):
        probe.record(self.trainer, self)


L.seed_everything(190, verbose=False)
CONFIG = {"lr": 0.05, "epochs": 2}
trainer = L.Trainer(
    strategy="ddp_spawn",
    accelerator="cpu",
    devices=probe.DEVICE_COUNT,
    max_epochs=CONFIG["epochs"],
    logger=False,
    enable_progress_bar=False,
    enable_model_summary=False,
    enable_checkpointing=False,
    deterministic=True,
)
trainer.fit(Model())
