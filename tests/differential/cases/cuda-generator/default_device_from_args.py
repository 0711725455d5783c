# differential: unsafe
"""The default device comes from the command line (``torch.set_default_device(args.device)``), and
the loader's generator is made on the GPU.

Run with ``--device cuda`` (its default) the sampler draws on the GPU and needs the CUDA generator;
only with ``--device cpu`` would the CPU generator be right. ddpfix cannot read the argument: the fix
(drop the generator's device) may break the GPU run, so it is offered for review only, naming the
switch that must change with it.
"""
import argparse

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    torch.set_default_device(args.device)
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    x = torch.randn(64, 8)
    loader = DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=8, shuffle=True, generator=g)
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Model(), loader)


if __name__ == "__main__":
    main()
