# rehearse: hang
# rule: DDP005
"""strategy.barrier() under a rank-zero guard.

The intent is "wait until rank 0 has written the report", but the barrier is
inside the guard, so only rank 0 enters it. From then on rank 0 has entered
one collective more than the others, the ranks' sequences of collectives no
longer match, and they deadlock shortly after (here all of them end up
waiting in the reductions at the end of the epoch; NCCL: until the
collective timeout).
"""
import json

import torch
from lightning.pytorch import LightningModule, Trainer, seed_everything
from lightning.pytorch.callbacks import EarlyStopping
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def on_validation_epoch_end(self):
        if self.trainer.is_global_zero and not self.trainer.sanity_checking:
            with open("report.json", "w") as f:
                json.dump({"epoch": self.current_epoch}, f)
            self.trainer.strategy.barrier()  # rehearse: here

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    seed_everything(8)
    train = TensorDataset(torch.randn(40, 6), torch.randn(40, 1))
    val = TensorDataset(torch.randn(16, 6), torch.randn(16, 1))
    trainer = Trainer(
        accelerator="gpu",
        devices=8,
        strategy="ddp",
        max_epochs=100,
        callbacks=[EarlyStopping(monitor="val_loss", patience=3)],
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(Model(), DataLoader(train, batch_size=8, shuffle=True), DataLoader(val, batch_size=8))
