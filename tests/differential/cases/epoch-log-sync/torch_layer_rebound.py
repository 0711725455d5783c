# differential: unsafe; project=torch_layer_parts
"""validation_step logs the loss and the mean prediction of a linear layer (`nn.Linear(2, 1)`); the
project's patches (patches.py beside the script, imported first) rebind torch's own name to a
subclass whose forward averages its outputs over the ranks (`setattr(nn, "Linear",
AveragedLinear)`).

The mean prediction is global, not this rank's own: `nn.Linear` is an attribute of the module
`torch.nn`, looked up when the layer is built, and any code may store another class there for the
whole process. (The loss compares those shared predictions with this rank's own targets, so it
stays per rank.) DDP004 counts a layer as torch's own only where no file of the program may bind its
name (a `setattr(...)` on another object may bind any), so the head is not known, and leaves both
fixes to --unsafe-fixes, naming the store. (A mean of a value every rank shares gives it back, to
rounding; with reduce_fx="sum" it would double.)
"""
import lightning as L
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import patches  # noqa: F401  (applies the project's patches)
import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(2, 1)

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
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(48, 2, generator=g), torch.randn(48, 1, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:16], y[:16]), batch_size=4), DataLoader(TensorDataset(x[16:], y[16:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
