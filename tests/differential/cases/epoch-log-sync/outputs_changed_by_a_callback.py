# differential: unsafe
"""validation_step returns its loss in a dict; a Callback's on_validation_batch_end replaces the
dict's loss with its average over every rank (`pl_module.all_gather(...).mean()`), and the module's
on_validation_batch_end logs `outputs["loss"]` (a mean over the epoch).

`outputs["loss"]` is global, not this rank's own: a callback's batch-end hook runs before the
module's and is handed the same outputs, the very dict the step returned, so what it stores there
the module's hook reads. DDP004 counts a hook's arguments as unknown when a class of the file
defines the same hook, and leaves the fix to --unsafe-fixes. (A mean of a value every rank shares
gives it back, to rounding; with reduce_fx="sum" it would double.)
"""
import lightning as L
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import probe


class SyncOutputs(L.Callback):
    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        outputs["loss"] = pl_module.all_gather(outputs["loss"]).mean()


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return {"loss": F.mse_loss(self.net(x), y).detach()}

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        self.log("val_loss", outputs["loss"])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(48, 2, generator=g), torch.randn(48, 1, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, callbacks=[SyncOutputs()], **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:16], y[:16]), batch_size=4), DataLoader(TensorDataset(x[16:], y[16:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
