"""DDP003 pattern: a metric logged only on rank 0 but monitored by EarlyStopping (PL#15852, PL#19072).

The value is computed on every rank, but `self.log` sits under `if self.trainer.is_global_zero:`, so
the other ranks never see `val_loss` and EarlyStopping raises on them ("Early stopping conditioned on
metric `val_loss` which is not available"). The fix moves `self.log(..., sync_dist=True)` out of the
guard, right after it; the print stays guarded.
"""
import datetime

import lightning as L
import torch
from lightning.pytorch.callbacks import EarlyStopping
from lightning.pytorch.strategies import DDPStrategy
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 1)
        self.val_losses = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_losses.append(nn.functional.mse_loss(self.layer(x), y).detach())

    def on_validation_epoch_end(self):
        value = torch.stack(self.val_losses).mean()
        self.val_losses.clear()
        if self.trainer.is_global_zero:
            print(f"epoch {self.current_epoch} val_loss {value.item():.6f}")
            self.log("val_loss", value, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loader():
    g = torch.Generator().manual_seed(0)
    data = TensorDataset(torch.randn(32, 8, generator=g), torch.randn(32, 1, generator=g))
    return DataLoader(data, batch_size=8)


def main():
    L.seed_everything(7, verbose=False)
    trainer = L.Trainer(
        accelerator="cpu", devices=2, strategy=DDPStrategy(timeout=datetime.timedelta(seconds=20)),
        max_epochs=2, logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, num_sanity_val_steps=0,
        callbacks=[EarlyStopping(monitor="val_loss", mode="min", patience=100)],
    )
    trainer.fit(Model(), train_dataloaders=loader(), val_dataloaders=loader())
    # Every rank prints (Lightning's child ranks inherit the launcher's stdout).
    print(f"RESULT rank{trainer.global_rank}_has_val_loss {'val_loss' in trainer.callback_metrics}")
    if trainer.is_global_zero:
        print(f"RESULT val_loss {trainer.callback_metrics['val_loss'].item():.6f}")


if __name__ == "__main__":
    main()
    # Lightning leaves the process group up; tearing it down here avoids gloo's occasional
    # "terminate called without an active exception" abort at interpreter exit.
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
