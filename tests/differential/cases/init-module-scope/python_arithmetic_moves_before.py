# differential: safe
"""A dataset of this file and a step count computed from it sit between model construction in
`with trainer.init_module():`, under precision="64-true"; the loader follows, fit comes after.

The model needs steps_per_epoch (its OneCycleLR schedule), so the dataset and the count go before
the block and the loader after it. Each is known: the Dataset's __init__ only stores its
arguments, the count is arithmetic on len(...) and literals (Python ints, never tensors, so the
block's float64 default cannot reach it), DataLoader only stores its arguments. The fix is safe:
the rewrite must train exactly like the original (float64 weights, every metric), in one process
and under DDP.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

import probe

batch_size = 8


class Points(Dataset):
    def __init__(self, x, y, scale=4):
        self.x = x
        self.y = y
        self.scale = scale

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i] / self.scale, self.y[i]


class Model(L.LightningModule):
    def __init__(self, steps_per_epoch, epochs=2):
        super().__init__()
        self.steps_per_epoch = steps_per_epoch
        self.epochs = epochs
        self.net = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        schedule = torch.optim.lr_scheduler.OneCycleLR(
            optimizer, max_lr=0.2, epochs=self.epochs, steps_per_epoch=self.steps_per_epoch
        )
        return [optimizer], [{"scheduler": schedule, "interval": "step"}]


if __name__ == "__main__":
    L.seed_everything(110, verbose=False)
    g = torch.Generator().manual_seed(111)
    x = torch.randn(32, 3, generator=g)
    y = x.sum(dim=1, keepdim=True)
    trainer = L.Trainer(strategy="ddp", max_epochs=2, precision="64-true", **probe.trainer_kwargs())
    with trainer.init_module():
        train_set = Points(x, y)
        steps_per_epoch = -(-len(train_set) // batch_size)
        model = Model(steps_per_epoch=steps_per_epoch)
        loader = DataLoader(train_set, batch_size=batch_size, shuffle=True)
    trainer.fit(model, loader)
    probe.record(trainer, model, steps_per_epoch=steps_per_epoch)
    probe.finish()
