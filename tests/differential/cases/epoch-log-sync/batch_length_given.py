# differential: safe
"""The batches are dicts of fields; validation_step passes the batch's length as `batch_size=`
(`batch["x"].shape[0]`, `len(batch["y"])`), and the validation set does not divide evenly into batches: each rank's last batch is smaller, so the epoch
mean is weighted by these sizes.

Under DDP each rank logs its own shard's weighted mean. The program makes no batches of its own, so
every rank's batch of a step holds as many samples (the sampler Lightning adds pads the shards to one
length) and every rank's summed sizes are equal: DDP004 adds sync_dist=True by default. The
reference syncs by hand, writing the sizes as the literal each batch has.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

import probe


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch["x"], batch["y"]
        return nn.functional.mse_loss(self.net(x).squeeze(1), y)

    def validation_step(self, batch, batch_idx):
        x = batch["x"]
        batch_size = x.shape[0]
        prediction = self.net(x).squeeze(1)
        self.log("val_mse", nn.functional.mse_loss(prediction, batch["y"]), batch_size=batch_size)
        self.log("val_mae", nn.functional.l1_loss(prediction, batch["y"]), batch_size=len(batch["y"]), prog_bar=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class Fields(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return {"x": self.x[index], "y": self.y[index]}


def loaders():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(54, 4, generator=g)
    y = x[:, 0] * 2 - x[:, 1]
    train = DataLoader(Fields(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(Fields(x[32:], y[32:]), batch_size=4)  # 22 samples: 11 per rank, 4+4+3
    return train, val


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Regressor()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
