# rehearse: divergence
# rule: DDP004
"""An epoch-level metric logged without sync_dist=True.

In validation_step self.log defaults to on_epoch=True, so Lightning averages
`val_loss` over the epoch, but without sync_dist=True only over the batches
of this rank's shard. Each rank ends up with a different `val_loss`; the one
rank 0 reports (and checkpoints or early-stops on) is its own shard's value,
not the validation loss. Nothing hangs or crashes.
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
        return nn.functional.mse_loss(self.layer(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.layer(x), y)
        self.log("val_loss", loss)  # rehearse: here

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(4)
    train = TensorDataset(torch.randn(32, 8), torch.randn(32, 1))
    val = TensorDataset(torch.randn(32, 8), torch.randn(32, 1))
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
