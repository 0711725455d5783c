# differential: unchanged
"""EarlyStopping monitors the metric named on the command line (--monitor, default val_acc); the
model logs val_acc under a rank-0 guard.

ddpfix cannot see which name is monitored: marking the log rank_zero_only=True (the fix for an
unmonitored metric) leaves the crash in place, since rank 1 still lacks the key EarlyStopping
reads ("Early stopping conditioned on metric `val_acc` which is not available"), while claiming
to have fixed it. Only moving the log out of the guard fixes it, and that needs the name.
"""
import argparse

import lightning as L
import torch
from lightning.pytorch.callbacks import EarlyStopping
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.hits = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.hits.append((self.net(x).argmax(dim=1) == y).float())

    def on_validation_epoch_end(self):
        acc = torch.cat(self.hits).mean()
        self.hits.clear()
        if self.trainer.is_global_zero:
            self.log("val_acc", acc)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--monitor", default="val_acc")
    parser.add_argument("--patience", type=int, default=2)
    args = parser.parse_args()
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long()
    stopper = EarlyStopping(monitor=args.monitor, mode="max", patience=args.patience)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, callbacks=[stopper], **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8), DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4))
    probe.record(trainer, model)


if __name__ == "__main__":
    main()
    probe.finish()
