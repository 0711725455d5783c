# differential: unsafe
"""The common DataModule shape: ``self.gen = torch.Generator(device="cuda")`` in ``__init__``, used
later as ``generator=self.gen`` (issue 20, C: once missed entirely).

An attribute is reachable from outside the class: a callback or the training script may use
``dm.gen`` for CUDA work (here the script draws augmentation noise on the GPU from it), where the
CUDA generator is the right one. The fix is offered for review only.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Data(L.LightningDataModule):
    def __init__(self, seed=0):
        super().__init__()
        self.gen = torch.Generator(device="cuda")
        self.gen.manual_seed(seed)

    def setup(self, stage=None):
        x = torch.randn(64, 8)
        self.train_set = TensorDataset(x, x.sum(dim=1, keepdim=True))

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=8, shuffle=True, generator=self.gen)


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
    data = Data(seed=4)
    noise = torch.randn(8, device="cuda", generator=data.gen)
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Model(), datamodule=data)
