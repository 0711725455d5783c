# differential: reference of trainer_and_callbacks_moved.py (the main guard written by hand)
"""A ddp_spawn script with no main guard: seed_everything, an epoch count, a list holding an
EarlyStopping callback, the Trainer (its arguments literals and names) and fit at module level,
after a process-wide setting.

Without the guard every spawned child re-runs the script, builds its own Trainer and calls fit
again, which Lightning refuses ("requires that your script guards the main function"): the
original fails even with devices=1 (ddp_spawn spawns one child then), so the hand-guarded
reference is the yardstick in one process and under DDP. Everything that moves into main() is
needed by the parent alone: seed_everything (the children inherit PL_GLOBAL_SEED and the strategy
reseeds them from it), a literal, a list of a Lightning callback, the Trainer, a LightningModule
and a LightningDataModule of this file that keep Lightning's constructors, fit. The matmul
precision above stays at the top, where the children still run it (each records it). The fix is
safe: the rewrite must train what the reference trains.
"""
import lightning as L
import torch
from lightning.pytorch.callbacks import EarlyStopping
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe

torch.set_float32_matmul_precision("high")


class Model(L.LightningModule):
    def configure_model(self):
        if not hasattr(self, "net"):
            self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)

    def on_fit_end(self):
        # ddp_spawn: only the spawned processes hold the trained ranks, so each records itself here
        probe.record(self.trainer, self, matmul_precision=torch.get_float32_matmul_precision())


class Data(L.LightningDataModule):
    def train_dataloader(self):
        g = torch.Generator().manual_seed(131)
        x = torch.randn(32, 4, generator=g)
        return DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=8, shuffle=True)


if __name__ == "__main__":
    L.seed_everything(130, verbose=False)
    epochs = 2
    callbacks = [EarlyStopping(monitor="train_loss", patience=3)]
    trainer = L.Trainer(
        strategy="ddp_spawn",
        accelerator="cpu",
        devices=probe.DEVICE_COUNT,
        max_epochs=epochs,
        callbacks=callbacks,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        deterministic=True,
    )
    trainer.fit(Model(), datamodule=Data())
