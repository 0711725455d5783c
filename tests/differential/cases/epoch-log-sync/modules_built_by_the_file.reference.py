# differential: reference of modules_built_by_the_file.py (gathers the batch values by hand)
"""The module's parts come from the file's own code: a factory function builds a body from an
`OrderedDict` of `torch.nn` layers, weight-normalised, initialised through `apply` with a function
that only fills weights; a registry dict of the file's module classes builds the head; the script
keeps an EMA copy (`copy.deepcopy`) and hands the body to a plain sampler class that only evaluates
it. The validation loss is logged per epoch without sync_dist.

Under DDP each rank logs its own shard's epoch mean. Every module is built by a known call and left
as built, so DDP004 proves the value per rank and adds sync_dist=True by default. The reference
gathers every batch's values by hand and logs their mean.
"""
import copy
from collections import OrderedDict

import lightning as L
import torch
from torch import nn
from torch.nn.utils.parametrizations import weight_norm
from torch.utils.data import DataLoader, TensorDataset

import probe


class Head(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.out = nn.Linear(width, 3)

    def forward(self, x):
        return self.out(torch.tanh(x))


HEADS = {}
HEADS["tanh"] = Head


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        if m.bias is not None:
            m.bias.data.zero_()


def create_body(width):
    body = nn.Sequential(OrderedDict([("fc", weight_norm(nn.Linear(4, width))), ("act", nn.ReLU())]))
    body.apply(init_weights)
    return body


class Sampler:
    def __init__(self, model):
        self.model = model

    def sample(self, x):
        was = self.model.training
        self.model.eval()
        with torch.no_grad():
            out = self.model(x)
        self.model.train(was)
        return out


class Classifier(L.LightningModule):
    def __init__(self, body, head="tanh"):
        super().__init__()
        self.body = body
        self.head = HEADS[head](8)
        self.val_losses = []

    def forward(self, x):
        return self.head(self.body(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_losses.append(nn.functional.cross_entropy(self(x), y))

    def on_validation_epoch_end(self):
        # every rank's batch means (equal batches on every rank), averaged: the whole epoch's mean
        self.log("val_loss", self.all_gather(torch.stack(self.val_losses)).mean())
        self.val_losses.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.2)


def loaders():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    body = create_body(8)
    ema = copy.deepcopy(body)
    sampler = Sampler(body)
    sampler.sample(torch.zeros(1, 4))
    model = Classifier(body)
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
