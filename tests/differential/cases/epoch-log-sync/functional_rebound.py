# differential: unsafe; project=functional_parts
"""validation_step logs its loss (`F.mse_loss(self.head(x), y)`, a mean over the epoch); the
project's patches (patches.py beside the script, imported first) rebind torch's functional
`mse_loss` to one that averages the loss over the ranks where no gradient is taken, as in
validation (`F.mse_loss = averaged_mse_loss`).

The loss is global, not this rank's own: `F.mse_loss` is an attribute of the module
`torch.nn.functional`, looked up on every call, and any code may store another function there for
the whole process. DDP004 counts torch's functions as its own only where no file of the program
stores that name on anything, and leaves the fix to --unsafe-fixes, naming the store. (A mean of a
value every rank shares gives it back, to rounding; with reduce_fx="sum" it would double.)
"""
import lightning as L
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import patches  # noqa: F401  (applies the project's patches)
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
        loss = F.mse_loss(self.head(x), y)
        self.log("val_loss", loss)

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
