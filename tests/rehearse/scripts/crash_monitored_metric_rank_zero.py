# rehearse: crash
# rule: DDP003
"""A monitored metric logged on rank 0 only.

ModelCheckpoint(monitor="val_loss") looks `val_loss` up in the callback
metrics on every rank. Only rank 0 logs it, so on rank 1 the key is missing
and ModelCheckpoint raises MisconfigurationException ("could not find the
monitored key") at the end of the first training epoch; rank 0 is left
waiting for rank 1 in the next collective and the job dies (NCCL: after the
collective timeout).
"""
import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.layer(x), y)
        if self.global_rank == 0:
            self.log("val_loss", loss)  # rehearse: here

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(1)
    train = TensorDataset(torch.randn(48, 8), torch.randn(48, 1))
    val = TensorDataset(torch.randn(16, 8), torch.randn(16, 1))
    trainer = L.Trainer(
        accelerator="cuda",
        devices=2,
        strategy="ddp",
        max_epochs=3,
        callbacks=[ModelCheckpoint(monitor="val_loss", mode="min")],
        logger=False,
        enable_progress_bar=False,
    )
    trainer.fit(Regressor(), DataLoader(train, batch_size=8), DataLoader(val, batch_size=8))
