# differential: safe; lightning=1
"""Lightning 1.x, two optimizers: training_step(batch, batch_idx, optimizer_idx) takes one branch per
optimizer (`if optimizer_idx == 0: ... return`), and each branch logs its loss per epoch
(`on_epoch=True`, `on_step=False`); validation_step logs the generator's loss under an `if` on the
dataloader index, which is 0 on every rank.

Lightning 1.x passes the optimizer's index as the step's third argument, the same on every rank at
each call (it runs every optimizer in order on every rank), so the branches and the early return
are taken alike everywhere: DDP004 adds sync_dist=True by default. Without it the epoch values are
rank 0's. The reference gathers each step's values by hand. Runs under pytorch-lightning 1.9.5.
"""
import pytorch_lightning as pl
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class TwoNets(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.generator = nn.Linear(4, 1)
        self.critic = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        if optimizer_idx == 0:
            loss = nn.functional.mse_loss(self.generator(x).squeeze(1), y)
            self.log("generator_loss", loss, on_step=False, on_epoch=True)
            return loss
        loss = nn.functional.mse_loss(self.critic(x).squeeze(1), -y)
        self.log("critic_loss", loss, on_step=False, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        if dataloader_idx == 0:
            self.log("val_generator_loss", nn.functional.mse_loss(self.generator(x).squeeze(1), y))

    def configure_optimizers(self):
        return [torch.optim.SGD(self.generator.parameters(), lr=0.1), torch.optim.SGD(self.critic.parameters(), lr=0.05)]


def loaders():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 4, generator=g)
    y = x[:, 0] - 2 * x[:, 1]
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    pl.seed_everything(0)
    model = TwoNets()
    trainer = pl.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
