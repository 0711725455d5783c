# differential: reference of ddp_strategy_logger_settings_kept.py (the main guard written by hand)
"""A ddp_spawn script with no main guard that spawns through DDPStrategy(start_method="spawn"),
logs with a CSVLogger, keeps the last checkpoint, and runs fit then validate at module level;
the tensor sharing strategy is set above, under an `if`.

The original fails even with devices=1 (each spawned child re-runs the script and calls fit
again), so the hand-guarded reference is the yardstick in one process and under DDP. What moves
into main() is needed by the parent alone: the strategy, the logger and the checkpoint callback
(Lightning's), the Trainer (literals and names), a LightningModule and a LightningDataModule of
this file that keep Lightning's constructors, and both run calls. The process-wide setting under
the `if` stays at the top, where the children still run it (each records the sharing strategy it
runs with). The fix is safe: the rewrite must train and validate what the reference does.
"""
import sys

import lightning as L
import torch
import torch.multiprocessing
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.strategies import DDPStrategy
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe

if sys.platform.startswith("linux"):
    torch.multiprocessing.set_sharing_strategy("file_system")


class Classifier(L.LightningModule):
    def configure_model(self):
        if not hasattr(self, "net"):
            self.net = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_acc", (self.net(x).argmax(dim=1) == y).float().mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.02)

    def on_validation_end(self):
        # ddp_spawn: only the spawned processes hold the trained ranks; the last validate records
        if self.trainer.state.fn == "validate":
            probe.record(self.trainer, self, sharing=torch.multiprocessing.get_sharing_strategy())


class Points(L.LightningDataModule):
    def setup(self, stage):
        g = torch.Generator().manual_seed(141)
        self.x = torch.randn(48, 5, generator=g)
        self.y = torch.bucketize(self.x[:, 0] - self.x[:, 4], torch.tensor([-0.5, 0.5]))

    def train_dataloader(self):
        return DataLoader(TensorDataset(self.x[:32], self.y[:32]), batch_size=8, shuffle=True)

    def val_dataloader(self):
        return DataLoader(TensorDataset(self.x[32:], self.y[32:]), batch_size=8)


if __name__ == "__main__":
    L.seed_everything(140, verbose=False)
    model = Classifier()
    data = Points()
    logger = CSVLogger("logs", name="points")
    checkpoint = ModelCheckpoint(dirpath="checkpoints", save_last=True)
    trainer = L.Trainer(
        strategy=DDPStrategy(start_method="spawn"),
        accelerator="cpu",
        devices=probe.DEVICE_COUNT,
        max_epochs=2,
        logger=logger,
        callbacks=[checkpoint],
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        deterministic=True,
    )
    trainer.fit(model, datamodule=data)
    trainer.validate(model, datamodule=data)
