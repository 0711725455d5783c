# differential: safe
"""At each training epoch's start rank 0 logs a dict of bookkeeping values (learning rate, momentum)
that every rank holds alike; nothing monitors them.

The fix marks the log_dict call rank_zero_only=True: rank 0 logs what it logged before.
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

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def on_train_epoch_start(self):
        group = self.optimizers().param_groups[0]
        if self.global_rank == 0:
            self.log_dict({"lr": group["lr"], "momentum": group["momentum"]})

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.2, momentum=0.9)
        return [optimizer], [torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.7)]


if __name__ == "__main__":
    L.seed_everything(4, verbose=False)
    g = torch.Generator().manual_seed(4)
    x = torch.randn(32, 5, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, (x[:, 0] > 0).long()), batch_size=8))
    probe.record(trainer, model)
    probe.finish()
