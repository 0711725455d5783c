# differential: unchanged
"""Attention-style scaling by ``torch.tensor(np.sqrt(d))`` beside the batch in ``training_step``.

The tensor of one number is 0-dimensional: a 0-dimensional CPU tensor meets a tensor on any device
as a scalar, so on rank N's GPU this works as it is (no device mismatch). And ``np.sqrt`` returns a
NumPy float64: on an MPS device (which cannot hold float64) ``device=self.device`` would raise. Not
reported, nothing rewritten.
"""
import lightning as L
import numpy as np
import torch
from torch import nn


class Scorer(L.LightningModule):
    def __init__(self, d=16):
        super().__init__()
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)

    def training_step(self, batch, batch_idx):
        x, y = batch
        scores = self.query(x) @ self.key(x).T
        scaled = scores / torch.tensor(np.sqrt(x.shape[-1]))
        return nn.functional.cross_entropy(scaled, y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Scorer())
