# rehearse: crash
# rule: none
"""An exception raised on one rank only.

Rank 1 hits a bad batch on its third step and raises. The other ranks are
already waiting for rank 1 in that step's gradient all-reduce; with NCCL they
wait there until the collective timeout before the job is torn down, and the
only useful traceback is the one from rank 1.
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
        if self.global_rank == 1 and batch_idx == 1:
            raise ValueError(f"corrupt batch {batch_idx} on rank {self.global_rank}")  # rehearse: here
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(13)
    train = TensorDataset(torch.randn(48, 8), torch.randn(48, 1))
    trainer = L.Trainer(
        accelerator="gpu",
        devices=4,
        strategy="ddp",
        max_epochs=3,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(Model(), DataLoader(train, batch_size=4))
