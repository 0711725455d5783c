# differential: unsafe
"""The module gathers every batch from all ranks once it is on the device (`on_after_batch_transfer`
returns `self.all_gather(x)` and `self.all_gather(y)`, flattened), so each step sees the whole
global batch; validation_step logs its loss on it (a mean over the epoch).

The loss is global, not this rank's own: Lightning hands the steps what `on_after_batch_transfer`
returns, not what the loader gave, so every rank computes the same loss on the same samples.
DDP004 counts a batch as this rank's own only when the class leaves batches as Lightning moves them
(no `on_before_batch_transfer`, `on_after_batch_transfer` or `transfer_batch_to_device`), and
leaves the fix to --unsafe-fixes. (A mean of a value every rank shares gives it back, to rounding;
with reduce_fx="sum" it would double.)
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

    def on_after_batch_transfer(self, batch, dataloader_idx):
        x, y = batch
        return self.all_gather(x).reshape(-1, 2), self.all_gather(y).reshape(-1, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
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
