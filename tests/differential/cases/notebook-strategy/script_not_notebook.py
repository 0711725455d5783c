# differential: unchanged
"""The same ``L.Trainer(strategy="ddp")`` in a ``.py`` script: right as it is.

A script can be re-run per rank, which is what ``"ddp"`` does; ``"ddp_notebook"`` (fork) would be
the odd one out here. The rule touches notebooks only.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        return self.layer(batch).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Model(), DataLoader(torch.randn(64, 4), batch_size=8))
