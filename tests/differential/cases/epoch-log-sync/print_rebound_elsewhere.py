# differential: unsafe; project=print_rebound_parts
"""validation_step prints its loss (`print("val loss", loss)`) and then logs it (a mean over the
epoch); the project's distprint.py (beside the script, imported at its top) rebinds the builtin
`print` to a function that sums every tensor it is given over the ranks in place before printing
on rank 0.

`loss` is global once printed, not this rank's own: a builtin name is looked up in the `builtins`
module when the call runs, and any code may bind it to another function (`builtins.print = ...`),
which receives the tensor itself, not a copy. DDP004 counts an assignment to a builtin anywhere in
the program as one that may rebind any builtin, so the print is an unknown call, and leaves the fix
to --unsafe-fixes. (A mean of a value every rank shares gives it back, to rounding; with
reduce_fx="sum" it would double.)
"""
import lightning as L
import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import probe

import distprint  # noqa: F401  (installs a print that reports global values)


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        print("val loss", loss)
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
