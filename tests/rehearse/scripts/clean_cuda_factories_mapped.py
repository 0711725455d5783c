# rehearse: clean
# rule: none
"""Correct on GPUs: each rank picks its GPU with torch.cuda.set_device, and the training step makes
its noise and weights with device="cuda" (the rank's current GPU). The rehearsal maps those to the
CPU (and says so): it must run clean, not stop at "Torch not compiled with CUDA enabled"."""
import os

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
        noise = 0.01 * torch.randn(x.shape, device="cuda")
        weight = torch.ones(1, device=torch.device("cuda", torch.cuda.current_device() if torch.cuda.is_available() else 0))
        loss = nn.functional.mse_loss(self.layer(x + noise) * weight, y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
    L.seed_everything(5)
    data = TensorDataset(torch.randn(48, 8), torch.randn(48, 1))
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=3, logger=False,
                        enable_checkpointing=False)
    trainer.fit(Model(), DataLoader(data, batch_size=8, shuffle=True))
