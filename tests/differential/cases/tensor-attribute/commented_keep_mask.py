# differential: safe
"""A feature mask and a class-index table, both private constants written with comments around them.

Two plain tensor attributes in one __init__: a bool mask (a literal list, with comments inside
the call and after the line) that zeroes the features a model must not see, and an int64 table
that gathers the logits in another order. Both are name-mangled, built from literals only, never
written after __init__, and read in forward beside the batch only. The fix registers each as a
non-persistent buffer and keeps the comments; on CPU the rewrite must train exactly like the
original (weights, every logged metric) in one process and under DDP.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(5, 3)
        self.__keep = torch.tensor(
            [True, True, False, True, True],  # feature 2 is a leak: never look at it
            dtype=torch.bool,
        )  # the leak mask
        self.__logit_order = torch.tensor([2, 0, 1])  # the head was trained with another class order

    def forward(self, x):
        logits = self.net(x * self.__keep)
        return logits.index_select(1, self.__logit_order)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        acc = (self(x).argmax(dim=1) == y).float().mean()
        self.log("val_acc", acc, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(72, verbose=False)
    g = torch.Generator().manual_seed(73)
    x = torch.randn(48, 5, generator=g)
    y = torch.bucketize(x[:, 0] + x[:, 3], torch.tensor([-0.5, 0.5]))
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=8)
    model = Classifier()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, train, val)
    probe.record(trainer, model)
    probe.finish()
