# differential: reference of function_attribute_and_numpy.py (gathers the batch values by hand)
"""The loss function is chosen once, by name, and kept on the module (`self.loss_fn =
F.mse_loss`); validation_step logs it, and also in bits per dimension, scaled by NumPy constants
(`np.log2(np.exp(1)) / np.prod(x.shape[1:])`, Python numbers), and the share of right signs, a
Python number made on the CPU (`.cpu().item()`: Lightning puts a number on the module's device, so
NCCL would take it). After the logs the batch goes to the CPU for a plot, which changes nothing logged.
The hook runs under `@torch.no_grad()`, the bits are cast with `.to(torch.float32)` (a dtype: the
value stays on its device), a penalty module is chosen by a conditional expression (each branch a
torch.nn module), and the logs stand under `if self.current_epoch >= 0:`, which every rank decides
alike.

Under DDP each rank logs its own shard's epoch mean. DDP004 knows every value the attribute is
ever given (functions of torch.nn.functional, which compute on their arguments only) and that
numpy's one-level functions are pure, so the values are this rank's own: sync_dist=True is added by
default. The reference gathers every batch's values by hand and logs their mean.
"""
import lightning as L
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import probe


class Regressor(L.LightningModule):
    def __init__(self, loss="mse"):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.configure_loss(loss)
        self.penalty = nn.L1Loss() if loss == "mse" else nn.MSELoss()
        self.val_losses, self.val_maes, self.val_signs, self.val_penalties = [], [], [], []

    def configure_loss(self, loss):
        if loss == "mse":
            self.loss_fn = F.mse_loss
        elif loss == "l1":
            self.loss_fn = F.l1_loss
        else:
            raise ValueError(loss)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return self.loss_fn(self.net(x).squeeze(1), y)

    @torch.no_grad()
    def validation_step(self, batch, batch_idx):
        x, y = batch
        prediction = self.net(x).squeeze(1)
        loss = self.loss_fn(prediction, y)
        bits = (loss * np.log2(np.exp(1)) / np.prod(x.shape[1:])).to(torch.float32)
        penalty = self.penalty(prediction, y)
        right = (prediction.sign() == y.sign()).sum().cpu().item() / len(y)
        self.val_losses.append(loss.detach())
        self.val_maes.append(bits.detach())
        self.val_penalties.append(penalty.detach())
        self.val_signs.append(torch.tensor(right, device=self.device, dtype=torch.float32))
        x = x.cpu()
        self.plotted = x[:1].tolist()

    def on_validation_epoch_end(self):
        # every rank's batch means (equal batches on every rank), averaged: the whole set's mean
        losses = self.all_gather(torch.stack(self.val_losses))
        maes = self.all_gather(torch.stack(self.val_maes))
        self.log("val_loss", losses.mean())
        self.log("val_bits", maes.mean())
        self.log("val_signs", self.all_gather(torch.stack(self.val_signs)).mean())
        self.log("val_penalty", self.all_gather(torch.stack(self.val_penalties)).mean())
        self.val_signs.clear()
        self.val_penalties.clear()
        self.val_losses.clear()
        self.val_maes.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loaders():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 4, generator=g)
    y = x[:, 0] - 2 * x[:, 1]
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Regressor()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
