# differential: unsafe
"""A float64 weight vector beside the batch in ``training_step``:
``x * torch.ones(x.shape[-1], dtype=torch.float64)``.

On rank N's GPU the CPU vector fails beside the batch ("Expected all tensors to be on the same
device"), but ``device=self.device`` is not proven neutral: an MPS device cannot hold float64, so
there the rewrite raises where the original's CPU arithmetic ran. The fix is offered for review only.
"""
import lightning as L
import torch
from torch import nn


class Weighted(L.LightningModule):
    def __init__(self, d=8):
        super().__init__()
        self.net = nn.Linear(d, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        weighted = x * torch.ones(x.shape[-1], dtype=torch.float64)
        return nn.functional.mse_loss(self.net(weighted.float()), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Weighted())
