# differential: reference of subset_sampler_cuda0.py (a CPU generator by hand)
"""Training on a labelled subset through ``SubsetRandomSampler`` with a seeded generator made on
``cuda:0``, inline: ``SubsetRandomSampler(labelled, generator=torch.Generator(device="cuda:0").manual_seed(3))``.

The sampler permutes the subset with ``torch.randperm`` on the CPU: a CUDA generator fails (and on
this CPU-only build cannot be made), so the reference (a CPU generator, same seed) is the
yardstick. Under DDP Lightning wraps the custom sampler (``DistributedSamplerWrapper``): every rank
must draw the same permutation and take its share of it. The generator is inline and only seeded,
no default device is CUDA: the fix is safe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, SubsetRandomSampler, TensorDataset

import probe


class Labelled(L.LightningDataModule):
    def setup(self, stage=None):
        g = torch.Generator().manual_seed(8)
        x = torch.randn(64, 3, generator=g)
        self.data = TensorDataset(x, x.sum(dim=1, keepdim=True) ** 2)
        self.labelled = list(range(0, 64, 2))  # every second example has a label

    def train_dataloader(self):
        sampler = SubsetRandomSampler(self.labelled, generator=torch.Generator().manual_seed(3))
        return DataLoader(self.data, batch_size=4, sampler=sampler)


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.l1_loss(self.net(x), y)
        self.log("train_l1", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.02)


if __name__ == "__main__":
    L.seed_everything(21, verbose=False)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, datamodule=Labelled())
    probe.record(trainer, model)
    probe.finish()
