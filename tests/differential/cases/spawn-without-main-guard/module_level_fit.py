# differential: safe
"""A ddp_spawn script written top to bottom: seed_everything, Trainer and fit at module level.

The spawn start method starts fresh interpreters that import the script: without a main guard each
child runs seed_everything, builds a Trainer and calls fit again, and Python stops it ("An attempt
has been made to start a new process before the current process has finished its bootstrapping
phase"). The model is a LightningModule of this file that keeps Lightning's constructor (its layers
and data come from its hooks), the seed is a literal: every moved statement is needed by the parent
alone, so moving them into main() is safe. The reference is the guard written by hand.

Known gap: ddp_spawn spawns even for devices=1, so this original cannot be a correct program in
one process, and devices is the literal 2 (probe.devices() or an environment read at module level
makes ddpfix hold the fix back): the harness's one-process runs fail on this case.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe



class Model(L.LightningModule):
    def configure_model(self):
        if not hasattr(self, "net"):
            self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def train_dataloader(self):
        g = torch.Generator().manual_seed(31)
        x = torch.randn(32, 4, generator=g)
        return DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=8, shuffle=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)

    def on_fit_end(self):
        # ddp_spawn: only the spawned processes hold the trained ranks, so each records itself here
        probe.record(self.trainer, self)


L.seed_everything(30, verbose=False)
model = Model()
trainer = L.Trainer(
    strategy="ddp_spawn",
    accelerator="cpu",
    devices=2,
    max_epochs=2,
    logger=False,
    enable_progress_bar=False,
    enable_model_summary=False,
    enable_checkpointing=False,
    deterministic=True,
)
trainer.fit(model)
