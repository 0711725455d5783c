# differential: reference of module_class_of_another_file.py (gathers the batch values by hand)
"""validation_step logs the loss and accuracy of a module class that another file of the project
defines (`from components import Head`, components.py beside the script); the logs say nothing
about sync_dist.

Under DDP each rank logs its own shard's epoch mean. DDP004 reads components.py: Head's bases are
torch.nn, no method of it names a collective and its forward makes no CPU tensor, so the values are
this rank's own and sync_dist=True is added by default. The reference gathers every batch's values
by hand and logs their mean.
"""
import lightning as L
import torch
from components import Head
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.head = Head(8)
        self.val_losses, self.val_accs = [], []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.head(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.head(x)
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
    g = torch.Generator().manual_seed(3)
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
