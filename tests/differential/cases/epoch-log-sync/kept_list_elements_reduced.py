# differential: unsafe
"""validation_step appends its loss to a list the module keeps (`self.val_losses.append(loss)`) and
calls a method that sums every kept tensor over the ranks in place (`_sync_history`:
`dist.all_reduce(t)` for each element), then logs `loss` (a mean over the epoch); the list is
cleared at the end of each validation epoch.

`loss` is global once `_sync_history` has run, not this rank's own: a container holds references to
its elements, not copies, so a method that changes the list's tensors in place changes `loss`.
DDP004 counts a value put into an object the module holds as one that any later method of the class
or unknown call may change, and leaves the fix to --unsafe-fixes. (The list is reduced again at
every step, so the logged values are sums of sums; a sync on top would average values every rank
already shares.)
"""
import lightning as L
import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 1)
        self.val_losses = []

    def _sync_history(self):
        if dist.is_available() and dist.is_initialized():
            for t in self.val_losses:
                dist.all_reduce(t)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.val_losses.append(loss)
        self._sync_history()
        self.log("val_loss", loss)

    def on_validation_epoch_end(self):
        self.val_losses.clear()

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
