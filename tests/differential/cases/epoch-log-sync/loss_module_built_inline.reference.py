# differential: reference of loss_module_built_inline.py (gathers the batch values by hand)
"""training_step and validation_step compute the loss with a loss module built and called in one
expression (`nn.CrossEntropyLoss(label_smoothing=0.1)(logits, y)`, `nn.MSELoss()(...)`), and log
it per epoch. The logs say nothing about sync_dist.

Under DDP each rank logs its own shard's epoch mean. A `torch.nn` loss built with constant
arguments and called at once computes on the tensors it is handed, as one bound to a local name
first does: DDP004 proves the values per rank and adds sync_dist=True by default. The reference
gathers every batch's values by hand and logs their mean.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe

class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        self.train_losses, self.val_losses, self.val_spreads = [], [], []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.CrossEntropyLoss(label_smoothing=0.1)(self.net(x), y)
        self.train_losses.append(loss.detach())
        return loss

    def on_train_epoch_end(self):
        # every rank's step means (equal steps on every rank), averaged: the whole epoch's mean
        self.log("train_loss", self.all_gather(torch.stack(self.train_losses)).mean())
        self.train_losses.clear()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.val_losses.append(nn.CrossEntropyLoss(label_smoothing=0.1)(logits, y))
        self.val_spreads.append(nn.MSELoss()(logits.softmax(dim=1), nn.functional.one_hot(y, 3).float()))

    def on_validation_epoch_end(self):
        self.log("val_loss", self.all_gather(torch.stack(self.val_losses)).mean())
        self.log("val_spread", self.all_gather(torch.stack(self.val_spreads)).mean())
        self.val_losses.clear()
        self.val_spreads.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def loaders():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Classifier()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
