# differential: safe
"""The model and its DataLoaders are built inside `with trainer.init_module():`; fit comes after.

Only model construction belongs in the block (on a GPU every tensor factory inside lands on the
device). The loaders' statements only store their arguments (TensorDataset, DataLoader, a literal
batch size), so moving them out after the model is safe: on CPU the run must be identical.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(50, verbose=False)
    g = torch.Generator().manual_seed(51)
    x = torch.randn(48, 3, generator=g)
    y = x.sum(dim=1, keepdim=True)
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    with trainer.init_module():
        model = Model()
        batch_size = 8
        train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=batch_size, shuffle=True)
        val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=batch_size)
    trainer.fit(model, train, val)
    probe.record(trainer, model)
    probe.finish()
