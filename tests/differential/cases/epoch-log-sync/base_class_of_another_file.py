# differential: safe; project=base_class_parts
"""The module derives from the project's own base task, which another file defines
(`from tasks import BaseTask`, tasks.py beside the script): the base trains and logs a synced
per-step loss, the module builds the network and logs its validation loss and accuracy without
sync_dist.

Under DDP each rank logs its own shard's epoch mean. DDP004 reads tasks.py: the base's bases are
LightningModule and abc.ABC, its one syncing log runs on every rank in one order, it calls none of
the module's hooks and assigns no attribute the values read, so the fix is safe by default. The
reference gathers every batch's values by hand and logs their mean.
"""
import lightning as L
import torch
from tasks import BaseTask
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Classifier(BaseTask):
    def configure_models(self):
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.log("val_loss", nn.functional.cross_entropy(logits, y))
        self.log("val_acc", (logits.argmax(dim=1) == y).float().mean(), prog_bar=True)


def loaders():
    g = torch.Generator().manual_seed(6)
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
