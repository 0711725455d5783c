# rehearse: crash
# rule: none
"""Rank 1 raises; main() catches it, logs it and returns 1 (sys.exit(main())): no uncaught exception,
but a failed run.
(From a review of the rehearsal.)"""
import logging
import sys

import torch
import lightning as L
from torch.utils.data import DataLoader, TensorDataset

log = logging.getLogger("train")


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 2)

    def training_step(self, batch, batch_idx):
        x, y = batch
        if self.global_rank == 1 and batch_idx == 1:
            raise ValueError(f"corrupt batch {batch_idx} on rank {self.global_rank}")
        loss = torch.nn.functional.cross_entropy(self.layer(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main() -> int:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 8, generator=g)
    ds = TensorDataset(x, (x[:, 0] > 0).long())
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=3, logger=False,
                        enable_checkpointing=False)
    try:
        trainer.fit(Model(), DataLoader(ds, batch_size=8))
    except Exception:
        log.exception("training failed")   # report to our job tracker, then fail the job
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())  # rehearse: here
