# rehearse: hang
# rule: DDP003
"""self.log(..., sync_dist=True) under a rank-zero guard.

sync_dist=True makes Lightning all-reduce `val_acc` across ranks when the
epoch's value is computed (here already at the end of the sanity-check
validation). Only rank 0 logged it, so only rank 0 enters that all-reduce;
the other ranks never do and move on to their next collective. The ranks'
collectives no longer pair up and the job stalls (NCCL: until the collective
timeout, 30 minutes by default).
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(16, 3)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.layer(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        acc = (self.layer(x).argmax(dim=1) == y).float().mean()
        if self.trainer.is_global_zero:
            self.log("val_acc", acc, sync_dist=True)  # rehearse: here

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-2)


if __name__ == "__main__":
    L.seed_everything(0)
    train = TensorDataset(torch.randn(64, 16), torch.randint(0, 3, (64,)))
    val = TensorDataset(torch.randn(32, 16), torch.randint(0, 3, (32,)))
    trainer = L.Trainer(
        accelerator="gpu",
        devices=4,
        strategy="ddp",
        max_epochs=3,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(Classifier(), DataLoader(train, batch_size=8), DataLoader(val, batch_size=8))
