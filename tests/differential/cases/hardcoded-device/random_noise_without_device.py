# differential: unsafe
"""Input noise drawn in ``training_step`` without a device: ``x + 0.1 * torch.randn(x.shape)``.

Under DDP the CPU noise fails beside rank N's GPU batch, but ``device=self.device`` is not a
neutral fix for a random factory: with a device it draws from that device's generator, other
numbers than the CPU generator's, and every later CPU draw shifts too. The fix is offered for
review only.
"""
import lightning as L
import torch
from torch import nn


class Denoiser(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(16, 16)

    def training_step(self, batch, batch_idx):
        (x,) = batch
        noisy = x + 0.1 * torch.randn(x.shape)
        return nn.functional.mse_loss(self.net(noisy), x)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Denoiser())
