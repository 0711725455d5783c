# differential: unsafe
"""validation_step appends its loss, gathered from every rank and averaged
(`self.all_gather(loss).mean()`), to the batch it was handed (`batch.append(...)`);
on_validation_batch_end logs the batch's last item (a mean over the epoch).

`batch[-1]` is global, not this rank's own: Lightning hands a batch-end hook the very batch object
its step was handed, not a copy, so what the step appends to it the hook reads back. DDP004 counts
a batch-end hook's batch as this rank's own only when the step neither returns nor changes in place
anything not known to be, and leaves the fix to --unsafe-fixes. (A mean of a value every rank
shares gives it back, to rounding; with reduce_fx="sum" it would double.)
"""
import lightning as L
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y).detach()
        batch.append(self.all_gather(loss).mean())
        return loss

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        self.log("val_loss_all", batch[-1])

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
