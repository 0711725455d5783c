# rehearse: clean
# rule: none
"""Rank-zero-only printing under a rank guard (not a log, not a collective).

Printing or calling rank_zero_info under `if self.trainer.is_global_zero:`
touches no other rank, so the guard is harmless: nothing waits on rank 0.
The epoch metric is logged outside the guard, with sync_dist=True.
"""
import lightning as L
import torch
from lightning.pytorch.utilities import rank_zero_info
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.layer(x), y), sync_dist=True)

    def on_validation_epoch_end(self):
        if self.trainer.is_global_zero:
            val_loss = self.trainer.callback_metrics.get("val_loss")
            rank_zero_info(f"epoch {self.current_epoch}: val_loss={val_loss}")
            print(f"weights norm: {self.layer.weight.norm().item():.4f}")

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(14)
    train = TensorDataset(torch.randn(32, 8), torch.randn(32, 1))
    val = TensorDataset(torch.randn(16, 8), torch.randn(16, 1))
    trainer = L.Trainer(
        accelerator="gpu",
        devices=4,
        strategy="ddp",
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(Model(), DataLoader(train, batch_size=8), DataLoader(val, batch_size=8))
