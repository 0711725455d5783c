# differential: safe; reference=all
"""validation_step appends (loss sum, sample count) pairs to a private list; on_validation_epoch_end
walks it with a for loop to log the exact per-sample mean loss (the last batch is smaller).

Nothing clears the list, so epoch 2's val_loss also counts epoch 1's batches: the original is
wrong in one process too, and the reference (cleared by hand) is the yardstick everywhere. The
list is name-mangled, made empty in __init__, only appended to, and only read by a for over it:
the fix is safe and must log each epoch's own val_loss.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)
        self.__parts = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y, reduction="sum")
        self.__parts.append((loss, y.shape[0]))

    def on_validation_epoch_end(self):
        total, count = 0.0, 0
        for loss, n in self.__parts:
            total = total + loss
            count += n
        self.log("val_loss", total / count, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(92, verbose=False)
    g = torch.Generator().manual_seed(93)
    x = torch.randn(46, 3, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]])
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    model = Regressor()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, train, val)
    probe.record(trainer, model)
    probe.finish()
