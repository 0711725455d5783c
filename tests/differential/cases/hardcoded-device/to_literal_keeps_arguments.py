# differential: safe; original=fails
"""Moves that pass more than the device: ``y.to(0, non_blocking=True)``,
``x.to(device="cuda:0", dtype=torch.float32)`` and ``mask.to(torch.device("cuda", 0), torch.bool)``
in the step hooks of a masked regressor.

Each literal names GPU 0 on every rank; under a literal DDP Trainer with ``devices`` left out it is
``self.device`` on rank 0 and on one GPU (the rewrite is the identity there) and the failure on
rank N. The fix replaces only the
device: the dtype, ``non_blocking`` and the positional dtype must survive, so that the rewrite
computes what the reference (``self.device`` by hand, every other argument kept) does. On this
CPU-only build the original cannot run.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class MaskedRegressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(5, 1)

    def training_step(self, batch, batch_idx):
        x, y, mask = batch
        x = x.to(device="cuda:0", dtype=torch.float32)
        y = y.to(0, non_blocking=True)
        keep = mask.to(torch.device("cuda", 0), torch.bool)
        loss = nn.functional.mse_loss(self.net(x)[keep], y[keep])
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(10, verbose=False)
    g = torch.Generator().manual_seed(7)
    x = torch.randn(40, 5, generator=g).double()
    y = x.float().sum(dim=1, keepdim=True)
    mask = (torch.arange(40) % 5 != 0).unsqueeze(1).int()
    model = MaskedRegressor()
    trainer = L.Trainer(
        strategy="ddp",
        max_epochs=2,
        deterministic=True,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=probe.out_dir(),
    )
    trainer.fit(model, DataLoader(TensorDataset(x, y, mask), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
