"""The project's base task, in a file of its own (the case derives from it)."""
from abc import ABC, abstractmethod

import lightning as L
import torch
from torch import nn


class BaseTask(L.LightningModule, ABC):
    def __init__(self):
        super().__init__()
        self.configure_models()

    @abstractmethod
    def configure_models(self):
        """Build self.net."""

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)
