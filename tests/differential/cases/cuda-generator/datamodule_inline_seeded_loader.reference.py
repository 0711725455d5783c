# differential: reference of datamodule_inline_seeded_loader.py (a CPU generator by hand)
"""A DataModule shuffles its training loader with a seeded generator made on the GPU, inline:
``DataLoader(..., shuffle=True, generator=torch.Generator().manual_seed(1234))``.

The sampler draws its permutation with ``torch.randperm(n, generator=g)`` on the CPU, so a CUDA
generator can only fail ("Expected a 'cpu' device type for generator but found 'cuda'" on a GPU
machine; on this CPU-only build creating it fails already): the original cannot run anywhere, and
the reference (the hand fix: a CPU generator with the same seed) is the yardstick. The file makes
no default device CUDA, the generator is inline and only seeded: the fix (drop the device) is safe
and must keep the seed, so the shuffle order, and with it every weight, stays the reference's.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Data(L.LightningDataModule):
    def setup(self, stage=None):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(48, 5, generator=g)
        self.train_set = TensorDataset(x, x @ torch.linspace(-1, 1, 5).unsqueeze(1))

    def train_dataloader(self):
        return DataLoader(
            self.train_set,
            batch_size=8,
            shuffle=True,
            generator=torch.Generator().manual_seed(1234),
        )


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_step=True, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(3, verbose=False)
    model = Regressor()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, datamodule=Data())
    probe.record(trainer, model)
    probe.finish()
