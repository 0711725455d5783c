# differential: unsafe; project=rebound_class_parts
"""validation_step logs the loss and the mean prediction of a head built from a class this file
defines (`Head`, one linear layer); the project's patches (patches.py beside the script, imported
before the model is built) rebind that name to a class whose forward averages its predictions over
the ranks (`setattr(train, "Head", AveragedHead)`, the script's module being `train`).

The mean prediction is global, not this rank's own: a class statement's name is a global of its
module, looked up when `Head()` runs, and any code holding the module may bind it to another class.
(The loss compares those shared predictions with this rank's own targets, so it stays per rank.)
DDP004 counts a `setattr(...)` on another object anywhere in the program as one that may bind any
name, so neither the head's class nor the functions the logs call are known, and leaves both fixes
to --unsafe-fixes. (A mean of a value every rank shares gives it back, to rounding; with
reduce_fx="sum" it would double.)
"""
import lightning as L
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import probe


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def forward(self, x):
        return self.fc(x)


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.head = Head()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.head(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        pred = self.head(x)
        self.log("val_loss", F.mse_loss(pred, y))
        self.log("val_pred_mean", pred.mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    import patches  # noqa: F401  (applies the project's patches)

    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(48, 2, generator=g), torch.randn(48, 1, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:16], y[:16]), batch_size=4), DataLoader(TensorDataset(x[16:], y[16:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
