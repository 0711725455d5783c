# differential: unsafe
"""A private list of every batch loss, read in on_train_epoch_end as a window of the last 6 losses
and as the best loss so far.

The window spans epochs (an epoch has 4 batches) and the minimum is over the whole run: both read
the list as a history across epochs on purpose. The name is private, so no other file reads it,
but clearing it would make epoch 2's loss_window the mean of 4 losses instead of 6 and best_loss
that epoch's best: a slice or min() over the list makes the fix unsafe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.__losses = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.__losses.append(loss.detach())
        return loss

    def on_train_epoch_end(self):
        self.log("loss_window", torch.stack(self.__losses[-6:]).mean(), sync_dist=True)
        self.log("best_loss", min(self.__losses), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(102, verbose=False)
    g = torch.Generator().manual_seed(103)
    x = torch.randn(32, 4, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=3, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
