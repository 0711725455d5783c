# rehearse: clean
# rule: none
"""A correct DDP script: the validation loss is logged per epoch with
sync_dist=True on every rank, and ModelCheckpoint monitors it. Every rank
enters the same all-reduce, so every rank has the same `val_loss` and the
checkpoint callback agrees on which epoch was best.
"""
import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("val_loss", loss, on_epoch=True, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(7)
    train = TensorDataset(torch.randn(48, 8), torch.randn(48, 1))
    val = TensorDataset(torch.randn(16, 8), torch.randn(16, 1))
    checkpoint = ModelCheckpoint(monitor="val_loss", mode="min", save_top_k=1)
    trainer = L.Trainer(
        accelerator="gpu",
        devices=4,
        strategy="ddp",
        max_epochs=3,
        callbacks=[checkpoint],
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(Regressor(), DataLoader(train, batch_size=8, shuffle=True), DataLoader(val, batch_size=8))
