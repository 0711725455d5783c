# differential: safe
"""The columns a model reads, kept as a plain int64 tensor attribute: private, constant, used in forward.

As a plain attribute the index stays on the CPU when Lightning moves the module to a GPU, and
indexing the rank's batch with it fails there; a non-persistent buffer moves with the module. The
index is name-mangled, integer, built from a literal list, never written after __init__: the fix
is safe and must select the same columns (same weights, same losses) in one process and under DDP.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.__columns = torch.tensor([0, 2, 3, 5])
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x.index_select(1, self.__columns))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.01)


if __name__ == "__main__":
    L.seed_everything(12, verbose=False)
    g = torch.Generator().manual_seed(13)
    x = torch.randn(48, 6, generator=g)
    y = (x[:, 0] - x[:, 3] + 0.5 * x[:, 5]).unsqueeze(1)
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=8)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, train, val)
    probe.record(trainer, model)
    probe.finish()
