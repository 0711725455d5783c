# differential: safe
"""validation_step logs what the class's own helper returns: `_evaluate` runs a small module class
of this file (`Head`) and a `torch.nn` criterion built in the helper, and returns the loss and the
accuracy of this rank's batch; the logs say nothing about sync_dist.

Under DDP each rank logs its own shard's epoch mean. DDP004 follows the helper (a plain method, not
redefined by a subclass, changing none of its arguments), the module (its bases are torch.nn, no
method names a collective) and the criterion, so the values are this rank's own: sync_dist=True is
added by default. The reference gathers every batch's values by hand and logs their mean.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Head(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.hidden = nn.Linear(4, width)
        self.out = nn.Linear(width, 3)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.head = Head(8)

    def _evaluate(self, batch):
        x, y = batch
        criterion = nn.CrossEntropyLoss()
        logits = self.head(x)
        first, second = logits.chunk(2, dim=1)[0], logits
        accuracy = (second.argmax(dim=1) == y).float().mean()
        return criterion(logits, y), accuracy + 0 * first.sum()

    def training_step(self, batch, batch_idx):
        loss, _ = self._evaluate(batch)
        return loss

    def validation_step(self, batch, batch_idx):
        loss, accuracy = self._evaluate(batch)
        self.log("val_loss", loss)
        self.log("val_acc", accuracy, prog_bar=True)

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
