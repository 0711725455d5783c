# differential: unsafe
"""A LightningModule in a file of its own (``models.py``): no Trainer here says how it is run.

``device="cuda"`` in ``training_step`` becomes ``self.device`` safely only where the file shows a
DDP Trainer on GPUs 0..n-1; trained in one process on ``devices=[1]`` elsewhere, ``"cuda"`` (the
current device) and ``self.device`` agree, but ``"cuda:0"`` may be the GPU meant. Without the
Trainer in view the fix is offered for review only.
"""
import lightning as L
import torch
from torch import nn


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 2)

    def training_step(self, batch, batch_idx):
        x, y = batch
        weight = torch.tensor([1.0, 3.0], device="cuda:0")
        return nn.functional.cross_entropy(self.net(x), y, weight=weight)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
