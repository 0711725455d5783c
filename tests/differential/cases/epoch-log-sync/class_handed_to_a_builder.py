# differential: safe
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

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.log("val_loss", nn.functional.cross_entropy(logits, y))
        self.log("val_acc", (logits.argmax(dim=1) == y).float().mean())

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
