# differential: unchanged
"""One generator serves two purposes: the loader's shuffle and dropout-like noise drawn on the GPU
in the same function (``torch.randn(..., device="cuda", generator=g)``).

The GPU draw needs the CUDA generator; a CPU one there fails ("Expected a 'cuda' device type for
generator"). The fix would trade one failure for another: the rule reports it (make a separate CPU
generator for data loading) and changes nothing.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self, mask):
        super().__init__()
        self.net = nn.Linear(8, 1)
        self.register_buffer("mask", mask)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x * self.mask), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    mask = (torch.rand(8, device="cuda", generator=g) > 0.2).float()
    x = torch.randn(64, 8)
    loader = DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=8, shuffle=True, generator=g)
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Model(mask.cpu()), loader)


if __name__ == "__main__":
    main()
