# differential: safe
"""The data module moves its batches its own way: it keeps each batch's weights on the CPU (a
NumPy-side bookkeeping field), which no proof reads. validation_step logs each rank's batch loss
as a Python number (`.item()`) per epoch.

Under DDP each rank logs its own shard's mean. Whatever stays on the CPU, the logged value is a
number, which Lightning's `self.log` makes a tensor on the module's device: NCCL gets no CPU tensor,
and DDP004 adds sync_dist=True by default. The reference syncs by hand.
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
        return nn.functional.mse_loss(self.net(batch["x"]).squeeze(1), batch["y"])

    def validation_step(self, batch, batch_idx):
        prediction = self.net(batch["x"]).squeeze(1)
        self.log("val_mse", nn.functional.mse_loss(prediction, batch["y"]).item())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class Named(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return {"x": self.x[index], "y": self.y[index], "name": f"sample-{index}", "weight": torch.ones(())}


class Samples(L.LightningDataModule):
    def setup(self, stage):
        g = torch.Generator().manual_seed(5)
        x = torch.randn(48, 4, generator=g)
        y = x[:, 0] * 2 - x[:, 1]
        self.train_set, self.val_set = Named(x[:32], y[:32]), Named(x[32:], y[32:])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=8, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=4)

    def transfer_batch_to_device(self, batch, device, dataloader_idx):
        weights = batch.pop("weight")
        del batch["name"]
        batch = super().transfer_batch_to_device(batch, device, dataloader_idx)
        batch["weight"] = weights  # kept on the CPU
        return batch


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Regressor()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, datamodule=Samples())
    probe.record(trainer, model)
    probe.finish()
