# differential: safe
"""A LightningModule handed its network in the constructor fills some of its tensors in
`__init__`: `nn.init.zeros_(self.net[0].bias)`, `self.net[2].weight.data.normal_(0, 0.1)`. The
validation loss is logged per epoch without sync_dist.

Under DDP each rank logs its own shard's epoch mean. Filling a tensor in place changes its values
and nothing the module runs: the network stays known, and DDP004 adds sync_dist=True by default.
The reference gathers by hand.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Classifier(L.LightningModule):
    def __init__(self, net, lr=0.3):
        super().__init__()
        self.net = net
        nn.init.zeros_(self.net[0].bias)
        self.net[2].weight.data.normal_(0, 0.1)
        self.lr = lr

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("val_loss", loss)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


def loaders():
    g = torch.Generator().manual_seed(11)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Classifier(nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)), lr=0.2)
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
