# differential: reference of class_valued_parameters.py (gathers the batch values by hand)
"""Modules built from classes handed as parameters, the idiom of `act_fn=nn.GELU` and
`norm_layer=nn.BatchNorm1d`: an encoder class takes its activation and normalisation classes (one
left at its default, one passed by the caller), and the LightningModule takes the encoder class
itself (`encoder_class=Encoder`, its default) and builds it in `__init__`. The validation loss is
logged per epoch without sync_dist, through `self.forward(x)` called as a method.

Under DDP each rank logs its own shard's epoch mean. Every class each parameter holds, at every
construction, is a `torch.nn` layer or a module class of the file that is read: DDP004 proves the
value per rank and adds sync_dist=True by default. The reference gathers the batch values by hand.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Encoder(nn.Module):
    def __init__(self, width, latent, act_fn=nn.GELU, norm_layer=nn.LayerNorm):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, width), norm_layer(width), act_fn(), nn.Linear(width, latent))

    def forward(self, x):
        return self.net(x)


class Head(nn.Module):
    def __init__(self, latent, classes, act_fn=nn.ReLU):
        super().__init__()
        self.act = act_fn()
        self.out = nn.Linear(latent, classes)

    def forward(self, z):
        return self.out(self.act(z))


class Classifier(L.LightningModule):
    def __init__(self, width=8, latent=6, encoder_class=Encoder, act_fn=nn.Tanh, lr=0.3):
        super().__init__()
        self.encoder = encoder_class(width, latent, act_fn=act_fn)
        self.head = Head(latent, 3, act_fn)
        self.lr = lr
        self.val_losses = []

    def forward(self, x):
        return self.head(self.encoder(x))

    def _loss(self, batch):
        x, y = batch
        return nn.functional.cross_entropy(self.forward(x), y)

    def training_step(self, batch, batch_idx):
        return self._loss(batch)

    def validation_step(self, batch, batch_idx):
        self.val_losses.append(self._loss(batch))

    def on_validation_epoch_end(self):
        # every rank's batch means (equal batches on every rank), averaged: the whole epoch's mean
        self.log("val_loss", self.all_gather(torch.stack(self.val_losses)).mean())
        self.val_losses.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


def loaders():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Classifier(act_fn=nn.SiLU, lr=0.2)
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
