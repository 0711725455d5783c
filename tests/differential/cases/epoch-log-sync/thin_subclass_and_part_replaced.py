# differential: safe
"""A LightningModule whose encoder (a module class of the file) gets its last part replaced in
`__init__` by a known module built around it (`self.encoder.head = nn.Sequential(self.encoder.head,
nn.ReLU(), nn.Linear(...))`), trained through a thin subclass that only hands its arguments on,
changed, to `super().__init__` (`kwargs["width"] = 8`). The validation loss is logged per epoch
without sync_dist.

Under DDP each rank logs its own shard's epoch mean. The part replaced once, before Lightning runs
the module, by a known module leaves the encoder known, and the thin subclass runs the base's hooks
with the base's state: DDP004 adds sync_dist=True by default. The reference gathers by hand.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Encoder(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, width), nn.Tanh())
        self.head = nn.Linear(width, width)

    def forward(self, x):
        return self.head(self.body(x))


class Classifier(L.LightningModule):
    def __init__(self, width=6, lr=0.3):
        super().__init__()
        self.encoder = Encoder(width)
        self.encoder.head = nn.Sequential(self.encoder.head, nn.ReLU(), nn.Linear(width, 3))
        self.lr = lr

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.encoder(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.encoder(x), y)
        self.log("val_loss", loss)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


class WideClassifier(Classifier):
    """The same classifier, wider: by its arguments alone."""

    def __init__(self, **kwargs):
        kwargs["width"] = 8
        super().__init__(**kwargs)


def loaders():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = WideClassifier(lr=0.2)
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
