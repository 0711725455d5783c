# differential: unsafe
"""Class balancing with ``WeightedRandomSampler`` whose weights live on the GPU, drawn with a CUDA
generator.

``WeightedRandomSampler`` draws ``torch.multinomial`` on its weights' device: with CUDA weights
the CUDA generator is the one that works, and a CPU generator fails. Whether the weights are on
the GPU is a run-time fact, so the fix is offered for review only.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, WeightedRandomSampler


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 2)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    x = torch.randn(64, 8)
    y = (x[:, 0] > 1.0).long()
    counts = torch.bincount(y, minlength=2).float().cuda()
    weights = (1.0 / counts)[y.cuda()]
    sampler = WeightedRandomSampler(weights, num_samples=64, generator=torch.Generator(device="cuda"))
    loader = DataLoader(TensorDataset(x, y), batch_size=8, sampler=sampler)
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Model(), loader)


if __name__ == "__main__":
    main()
