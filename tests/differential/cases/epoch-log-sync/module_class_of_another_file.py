# differential: safe; project=module_class_parts
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

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.head(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.head(x)
        self.log("val_loss", nn.functional.cross_entropy(logits, y))
        self.log("val_acc", (logits.argmax(dim=1) == y).float().mean(), prog_bar=True)

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
