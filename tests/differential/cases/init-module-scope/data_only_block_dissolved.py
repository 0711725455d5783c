# differential: safe
"""`with trainer.init_module():` wrapped around the data only: the model is built before it, fit
after.

Nothing inside builds a model: the TensorDatasets and DataLoaders only store their arguments and
the batch size is a literal, so the whole block can go and its body be dedented (entering and
leaving init_module() with no module built inside computes nothing). The fix is safe: the rewrite
must train exactly like the original, in one process and under DDP.
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
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_acc", (self.net(x).argmax(dim=1) == y).float().mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.2)


if __name__ == "__main__":
    L.seed_everything(115, verbose=False)
    g = torch.Generator().manual_seed(116)
    x = torch.randn(48, 5, generator=g)
    y = (x[:, 0] * x[:, 1] > 0).long()
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    with trainer.init_module():
        batch_size = 8
        train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=batch_size, shuffle=True)
        val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=batch_size)
    trainer.fit(model, train, val)
    probe.record(trainer, model)
    probe.finish()
