# rehearse: clean
# rule: none
"""A per-step training loss logged without sync_dist.

In training_step self.log defaults to on_step=True, on_epoch=False: each
rank logs its own batch's loss for that step and no epoch value is computed,
so there is nothing to synchronise. The values differ between ranks because
the batches do; that is expected, not a divergence.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.layer(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(17)
    train = TensorDataset(torch.randn(32, 8), torch.randn(32, 1))
    trainer = L.Trainer(
        accelerator="gpu",
        devices=4,
        strategy="ddp",
        max_epochs=3,
        log_every_n_steps=1,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(Model(), DataLoader(train, batch_size=4, shuffle=True))
