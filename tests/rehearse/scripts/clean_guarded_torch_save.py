# rehearse: clean
# rule: none
"""A plain torch.save of the weights under a rank-zero guard after fit.

Unlike trainer.save_checkpoint, torch.save is not collective: rank 0 writes
the file and no other rank waits for it, so the guard is the right thing
here (without it every rank would write the same file).
"""
import os
import tempfile

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

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(18)
    train = TensorDataset(torch.randn(32, 8), torch.randn(32, 1))
    trainer = L.Trainer(
        accelerator="gpu",
        devices=2,
        strategy="ddp",
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    model = Model()
    trainer.fit(model, DataLoader(train, batch_size=8, shuffle=True))
    if trainer.is_global_zero:
        path = os.path.join(tempfile.gettempdir(), "rehearse-final-weights.pt")
        torch.save(model.state_dict(), path)
        print(f"saved {path}")
