# differential: unsafe
"""The data module prepares its batches before Lightning moves them, but a helper nested in its
`on_before_batch_transfer` packs each batch's weights into a `SimpleNamespace` (review helper-39):
Lightning's move enters collections and dataclasses and calls an object's own `to`, and a
namespace is neither, so its tensor stays on the CPU. validation_step logs the weighted loss.

Unsynced, the logged value follows the weights' device and nothing syncs; with sync_dist=True NCCL
would be handed a CPU tensor. The nested function shares the batch, so DDP004 cannot prove the hook
harmless: the fix stays unsafe.
"""
from types import SimpleNamespace

import lightning as L
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

import probe


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        return nn.functional.mse_loss(self.net(batch["x"]).squeeze(1), batch["y"])

    def validation_step(self, batch, batch_idx):
        prediction = self.net(batch["x"]).squeeze(1)
        error = (prediction - batch["y"]) ** 2 * batch["extra"].weight.to(prediction.device)
        self.log("val_mse", error.mean(), batch_size=4)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class Rows(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return {"x": self.x[index], "y": self.y[index], "name": f"row-{index}"}


class Samples(L.LightningDataModule):
    def __init__(self):
        super().__init__()
        self.scaled = True

    def setup(self, stage):
        rng = np.random.default_rng(5)
        x = rng.standard_normal((48, 4))
        y = x[:, 0] * 2 - x[:, 1]
        self.train_set, self.val_set = Rows(x[:32], y[:32]), Rows(x[32:], y[32:])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=8, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=4)

    def on_before_batch_transfer(self, batch, dataloader_idx):
        def attach(key):
            batch["extra"] = SimpleNamespace(weight=batch[key].float())

        attach("y")
        return {"x": batch["x"].float(), "y": batch["y"].float(), "extra": batch["extra"]}


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Regressor()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, datamodule=Samples())
    probe.record(trainer, model)
    probe.finish()
