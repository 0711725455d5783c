# differential: reference of class_handed_to_a_builder.py (gathers the batch values by hand)
"""A notebook-style `train_model(model_class, loaders, **kwargs)` builds the module it is handed
(`model_class(**kwargs)`), reads its name for the checkpoint folder, and fits it. The module's
validation_step logs the loss and the accuracy per epoch; the logs say nothing about sync_dist.

Under DDP each rank logs its own shard's epoch mean. A class handed to a function of the file that
only calls it or reads its name is not subclassed or patched there: DDP004 proves the values per
rank and adds sync_dist=True by default. The reference gathers every batch's values by hand and
logs their mean.
"""
import os

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe

class Classifier(L.LightningModule):
    def __init__(self, hidden=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, hidden), nn.ReLU(), nn.Linear(hidden, 3))
        self.val_losses, self.val_accs = [], []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.val_losses.append(nn.functional.cross_entropy(logits, y))
        self.val_accs.append((logits.argmax(dim=1) == y).float().mean())

    def on_validation_epoch_end(self):
        # every rank's batch means (equal batches on every rank), averaged: the whole epoch's mean
        self.log("val_loss", self.all_gather(torch.stack(self.val_losses)).mean())
        self.log("val_acc", self.all_gather(torch.stack(self.val_accs)).mean())
        self.val_losses.clear()
        self.val_accs.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def loaders():
    g = torch.Generator().manual_seed(17)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


def train_model(model_class, data, **kwargs):
    print("training", os.path.join("runs", model_class.__name__))
    model = model_class(**kwargs)
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *data)
    return trainer, model


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    trainer, model = train_model(Classifier, loaders(), hidden=8)
    probe.record(trainer, model)
    probe.finish()
