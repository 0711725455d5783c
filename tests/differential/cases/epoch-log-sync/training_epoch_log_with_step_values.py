# differential: unsafe
"""training_step logs its loss with `on_epoch=True` and leaves `on_step` to Lightning's default
there (True): the log makes an epoch value (`train_loss_epoch`, rank 0's shard mean under DDP) and
a value per step (`train_loss_step`, each rank's own loss).

sync_dist=True would make the epoch value the global mean, and also every step's value the ranks'
mean, which the original did not log (and an all-reduce per step). DDP004 leaves the fix to a
person (`on_step=False` first, or accept the synced step values): --unsafe-fixes only.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe

class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def loaders():
    g = torch.Generator().manual_seed(19)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    return train


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Classifier()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, log_every_n_steps=1, **probe.trainer_kwargs())
    trainer.fit(model, loaders())
    probe.record(trainer, model)
    probe.finish()
