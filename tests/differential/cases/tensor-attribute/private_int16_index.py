# differential: unsafe
"""The columns a model reads, kept as a plain int16 tensor attribute: private, constant, used in forward.

As a buffer it would move with the module, but DDP broadcasts every buffer when it wraps the module,
and neither gloo ("Invalid scalar type") nor NCCL carries int16: the rewrite crashes where the
original ran (review round 15). The fix is unsafe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.__columns = torch.tensor([0, 2, 3, 5], dtype=torch.int16)
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x.index_select(1, self.__columns.long()))

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
