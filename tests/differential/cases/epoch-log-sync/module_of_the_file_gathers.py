# differential: unsafe
"""A loss module of this file averages its value over the ranks in its forward
(`dist.all_reduce`), and validation_step logs what it returns.

The value is global, not this rank's own. DDP004 follows a module class of the file only when none
of its methods names a collective, so it leaves this fix to --unsafe-fixes, naming the collective.
"""
import lightning as L
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class GlobalMSE(nn.Module):
    def forward(self, prediction, target):
        loss = nn.functional.mse_loss(prediction, target).detach().clone()
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(loss)
            loss = loss / dist.get_world_size()
        return loss


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 1)
        self.global_mse = GlobalMSE()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_global_mse", self.global_mse(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(40, 2, generator=g), torch.randn(40, 1, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:24], y[:24]), batch_size=8), DataLoader(TensorDataset(x[24:], y[24:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
