# differential: unsafe
"""An L2-SP regulariser keeps a copy of the head's starting weights (`self.start =
self.weight.detach().clone()` in `__init__`) beside the parameter it registers, and logs the drift
from it per epoch (review helper-40).

`Module.to` moves the registered parameter only: the copy made before the move stays on the CPU,
so the logged drift is a CPU tensor on a GPU run. Unsynced, Lightning logs it where it is; with
sync_dist=True NCCL would be handed a CPU tensor. DDP004 cannot prove the value on the device: the
fix stays unsafe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Drift(nn.Module):
    """The head's weights, and how far they moved from where they started."""

    def __init__(self, width):
        super().__init__()
        self.weight = nn.Parameter(torch.full((width,), 0.5))
        self.start = self.weight.detach().clone()

    def forward(self, x):
        return x @ self.weight, (self.weight.detach().to(self.start.device) - self.start).pow(2).sum()


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.head = Drift(4)

    def training_step(self, batch, batch_idx):
        x, y = batch
        prediction, _drift = self.head(x)
        return nn.functional.mse_loss(prediction, y)

    def validation_step(self, batch, batch_idx):
        x, _y = batch
        _prediction, drift = self.head(x)
        self.log("val_drift", drift)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loaders():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(48, 4, generator=g)
    y = x[:, 0] * 2 - x[:, 1]
    train, val = TensorDataset(x[:32], y[:32]), TensorDataset(x[32:], y[32:])
    return DataLoader(train, batch_size=8, shuffle=True), DataLoader(val, batch_size=4)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Regressor()
    train_loader, val_loader = loaders()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, train_loader, val_loader)
    probe.record(trainer, model)
    probe.finish()
