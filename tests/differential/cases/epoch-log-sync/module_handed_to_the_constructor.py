# differential: safe
"""The LightningModule keeps the backbone it is handed (`self.backbone = backbone`); the script
builds it with `torch.nn` layers, freezes its first layer through `parameters()`, counts its
trainable parameters with a function of the file, and logs the validation loss per epoch without
sync_dist.

Under DDP each rank logs its own shard's epoch mean. Every construction of the class hands it a
module built by a known call and left as built (only `parameters()`, `eval()`-like methods and
functions that use it so): DDP004 proves the value per rank and adds sync_dist=True by default.
The reference gathers every batch's values by hand and logs their mean.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Classifier(L.LightningModule):
    def __init__(self, backbone, lr=0.3):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(8, 3)
        self.lr = lr

    def forward(self, x):
        return self.head(self.backbone(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self(x), y)
        self.log("val_loss", loss)

    def configure_optimizers(self):
        return torch.optim.SGD([p for p in self.parameters() if p.requires_grad], lr=self.lr)


def trainable(module):
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def loaders():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    backbone = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh())
    for parameter in backbone[0].parameters():
        parameter.requires_grad = False
    print("trainable backbone parameters:", trainable(backbone))
    model = Classifier(backbone, lr=0.2)
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
