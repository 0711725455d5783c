# differential: reference of guarded_sync_dist_log.py (sync_dist dropped by hand)
"""The learning rate is logged with sync_dist=True under `if self.global_rank == 0:` (PL#19783).

Only rank 0 enters the all-reduce that sync_dist makes at the epoch's end: the ranks' collectives
fall out of step and the run hangs (the 20 s process-group timeout ends it). The fix swaps
sync_dist=True for rank_zero_only=True and keeps the guard; the reference, by hand, drops sync_dist.
"""
from datetime import timedelta

import lightning as L
import torch
from lightning.pytorch.strategies import DDPStrategy
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def on_train_epoch_end(self):
        if self.global_rank == 0:
            self.log("lr", self.optimizers().param_groups[0]["lr"])

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        return [optimizer], [torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)]


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(32, 4, generator=g), torch.randn(32, 1, generator=g)
    model = Model()
    trainer = L.Trainer(strategy=DDPStrategy(timeout=timedelta(seconds=20)), max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8))
    probe.record(trainer, model)
    probe.finish()
