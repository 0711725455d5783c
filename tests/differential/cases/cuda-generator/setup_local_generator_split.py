# differential: safe; original=fails
"""``setup()`` splits the data with a local generator made on the GPU and seeded by a statement:
``g = torch.Generator(device="cuda")``, ``g.manual_seed(0)``, ``random_split(..., generator=g)``.

``random_split`` draws ``torch.randperm`` on the CPU: a CUDA generator fails there (and cannot be
made on this CPU-only build), so the original cannot run and the reference (a CPU generator, same
seed) is the yardstick. The generator is a function's local name, used for nothing but seeding and
the split, and no default device is CUDA: the fix is safe, and the split it draws (recorded, and
equal on every rank) must be the reference's.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

import probe


class Data(L.LightningDataModule):
    def setup(self, stage=None):
        x = torch.linspace(-2, 2, 40).unsqueeze(1)
        full = TensorDataset(x, torch.sin(x))
        g = torch.Generator(device="cuda")
        g.manual_seed(0)
        self.train_set, self.val_set = random_split(full, [0.75, 0.25], generator=g)

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=6)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=5)


class Curve(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.01)


if __name__ == "__main__":
    L.seed_everything(11, verbose=False)
    data = Data()
    model = Curve()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, datamodule=data)
    probe.record(trainer, model, splits={"train": list(data.train_set.indices), "val": list(data.val_set.indices)})
    probe.finish()
