# differential: reference of validation_step_literal_key.py (gathers the batch values by hand)
"""validation_step logs the batch loss and accuracy under literal names; on_epoch defaults to True there.

Under DDP each rank averages its own shard of the validation set, and without sync_dist the value
every rank (and any checkpoint or early stopping) sees is its own shard's mean. The reference is the
hand fix, written without sync_dist: it gathers each batch's values from every rank and logs their
mean once per epoch, which is the cross-rank mean the fix gives.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.val_losses, self.val_accs = [], []
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

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
        losses = self.all_gather(torch.stack(self.val_losses))
        accs = self.all_gather(torch.stack(self.val_accs))
        self.log("val_loss", losses.mean())
        self.log("val_acc", accs.mean(), prog_bar=True)
        self.val_losses.clear()
        self.val_accs.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def loaders():
    g = torch.Generator().manual_seed(0)
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
