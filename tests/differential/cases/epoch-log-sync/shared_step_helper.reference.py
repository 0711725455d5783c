# differential: reference of shared_step_helper.py (gathers the validation losses by hand)
"""A `_shared_step` helper logs `f"{stage}_loss"` with Lightning's defaults: called from
validation_step it logs per epoch (each rank's shard mean without sync_dist), called from
training_step per step.

DDP004 reports the log (reached from validation_step, and from training_step too). sync_dist=True
would give the global validation mean and also sync every training step's value (each step's logged
train_loss would become the ranks' mean), which the original did not do; each caller names its
stage with a literal, so the fix is `sync_dist=stage != "train"`, safe: the validation mean is the
global one, each training step's value stays this rank's. The reference gathers the validation
losses by hand.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.val_losses = []

    def _shared_step(self, batch, stage):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x).squeeze(1), y)
        if stage == "train":
            self.log(f"{stage}_loss", loss)
        else:
            self.val_losses.append(loss.detach())
        return loss

    def training_step(self, batch, batch_idx):
        return self._shared_step(batch, "train")

    def validation_step(self, batch, batch_idx):
        self._shared_step(batch, "val")

    def on_validation_epoch_end(self):
        # every rank's batch means (equal batches on every rank), averaged: the whole epoch's mean
        self.log("val_loss", self.all_gather(torch.stack(self.val_losses)).mean())
        self.val_losses.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 4, generator=g)
    y = x[:, 0] - 2 * x[:, 1]
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8), DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
