# differential: unchanged
"""Model parallelism by hand in one process (no DDP): the encoder on ``cuda:0``, the head on
``cuda:1``, activations moved between them with literals (issue 20, C: this was once rewritten to
one device).

Every literal names the GPU meant; ``self.device`` (the device of the module's first parameter)
would put the head's input on GPU 0 while the head stays on GPU 1. The file's only Trainer runs one
process (``devices=1``): no other rank shares the GPUs, so nothing is reported or rewritten.
"""
import lightning as L
import torch
from torch import nn


class TwoGpuModel(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(32, 64).to("cuda:0")
        self.head = nn.Linear(64, 10).to("cuda:1")

    def forward(self, x):
        hidden = torch.relu(self.encoder(x.to("cuda:0")))
        return self.head(hidden.to("cuda:1"))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self(x), y.to("cuda:1"))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1)
    trainer.fit(TwoGpuModel())
