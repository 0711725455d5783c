# differential: unsafe
"""A private int64 tensor counting the labels each rank sees, updated in training_step.

Each rank counts its own shard (the script records each rank's counts after fit). As a
buffer the counter would be broadcast from rank 0 before every forward (DDP's broadcast_buffers),
so every rank's count would become rank 0's: the fix is unsafe for a tensor written after __init__.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(5, 2)
        self.__counts = torch.zeros(2, dtype=torch.long)

    def training_step(self, batch, batch_idx):
        x, y = batch
        self.__counts += torch.bincount(y, minlength=2)
        return nn.functional.cross_entropy(self.net(x), y)

    def label_counts(self):
        return self.__counts.tolist()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.2)


if __name__ == "__main__":
    L.seed_everything(21, verbose=False)
    g = torch.Generator().manual_seed(22)
    x = torch.randn(32, 5, generator=g)
    y = (x[:, 0] + x[:, 1] > 0.3).long()
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True))
    probe.record(trainer, model, label_counts=model.label_counts())
    probe.finish()
