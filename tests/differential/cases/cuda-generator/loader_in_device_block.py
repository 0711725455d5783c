# differential: unsafe
"""The data and its loader are made inside ``with torch.device("cuda"):`` (a user who wanted the
tensors on the GPU), and the loader shuffles with a CUDA generator.

While the block is open, factory calls default to CUDA; whether the sampler later draws there
depends on where the loader is iterated, which ddpfix cannot follow through the block. The
generator and the block must change together: the fix is offered for review, never applied alone.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    with torch.device("cuda"):
        x = torch.randn(64, 8)
        data = TensorDataset(x, x.sum(dim=1, keepdim=True))
        loader = DataLoader(data, batch_size=8, shuffle=True, generator=torch.Generator(device="cuda"))
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Model(), loader)


if __name__ == "__main__":
    main()
