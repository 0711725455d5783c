# differential: unsafe
"""A module-level generator, ``GEN = torch.Generator(device="cuda").manual_seed(0)``, used by the
loader defined in this file.

A module-level name can be imported by another file of the project (``from data import GEN``) and
used there for GPU work, where the CUDA generator is right. The fix is offered for review only.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

GEN = torch.Generator(device="cuda").manual_seed(0)


def train_loader():
    x = torch.randn(64, 8)
    return DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=8, shuffle=True, generator=GEN)


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Model(), train_loader())
