# differential: unchanged
"""Device-less factories whose tensors are moved at once, and ones used on the CPU at once:
``torch.tensor(self.weights).to(self.device)``, ``torch.arange(n).float().to(self.device)``,
``torch.ones(3).tolist()``, ``torch.zeros(2).item()``-style reads.

Already right (issue 20, C: ``torch.tensor(x).to(self.device)`` once became
``torch.tensor(x, device=self.device).to(self.device)``): the rule must not report or touch them.
"""
import lightning as L
import torch
from torch import nn


class Model(L.LightningModule):
    def __init__(self, weights=(1.0, 2.0, 0.5)):
        super().__init__()
        self.weights = list(weights)
        self.net = nn.Linear(3, 3)

    def training_step(self, batch, batch_idx):
        x, y = batch
        weight = torch.tensor(self.weights).to(self.device)
        ramp = torch.arange(3).float().to(self.device)
        margins = torch.ones(3).tolist()
        loss = nn.functional.cross_entropy(self.net(x + ramp), y, weight=weight)
        return loss * margins[0]

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Model())
