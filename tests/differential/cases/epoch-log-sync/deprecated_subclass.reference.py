# differential: reference of deprecated_subclass.py (gathers the batch values by hand)
"""validation_step logs the loss and accuracy; an old name of the model is kept for users, a
subclass marked `@deprecated("...")` (typing_extensions, PEP 702), and the script trains that old
name. The logs say nothing about sync_dist.

Under DDP each rank logs its own shard's epoch mean. PEP 702's `deprecated` returns the class with
its methods as written (it wraps `__new__` to warn), so the subclass runs the base's hooks:
sync_dist=True is added by default. The reference gathers every batch's values by hand and logs
their mean.
"""
import warnings

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from typing_extensions import deprecated

import probe


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        self.val_losses, self.val_accs = [], []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.val_losses.append(nn.functional.cross_entropy(logits, y).detach())
        self.val_accs.append((logits.argmax(dim=1) == y).float().mean())

    def on_validation_epoch_end(self):
        # every rank's batch means (equal batches on every rank), averaged: the whole set's mean
        self.log("val_loss", self.all_gather(torch.stack(self.val_losses)).mean())
        self.log("val_acc", self.all_gather(torch.stack(self.val_accs)).mean(), prog_bar=True)
        self.val_losses.clear()
        self.val_accs.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


@deprecated("OldClassifier is Classifier; use Classifier")
class OldClassifier(Classifier):
    pass


def loaders():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        model = OldClassifier()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
