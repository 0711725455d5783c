# differential: safe
"""A sequence regressor adds a positional ramp to each batch and divides by the position index,
with device-less factories in the step hooks: ``x + torch.linspace(0, 1, x.shape[1])`` and
``x / torch.arange(1, x.shape[1] + 1)``.

On rank N's GPU the CPU tensors fail beside the batch ("Expected all tensors to be on the same
device"). The factories are not random, their dtype is known (float32 linspace, int64 arange), their
only use is arithmetic with a tensor of the batch, and the Trainer is a literal DDP one with
``devices`` left out: ``device=self.device`` is safe. On the CPU it must compute exactly what the
original does, in one process and on every rank.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class SequenceRegressor(L.LightningModule):
    def __init__(self, length=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(length, 12), nn.Tanh(), nn.Linear(12, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        placed = x + torch.linspace(0, 1, x.shape[1])
        loss = nn.functional.mse_loss(self.net(placed), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        normalised = x / torch.arange(1, x.shape[1] + 1)
        self.log("val_loss", nn.functional.mse_loss(self.net(normalised), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.01)


if __name__ == "__main__":
    L.seed_everything(2, verbose=False)
    g = torch.Generator().manual_seed(5)
    x = torch.randn(48, 6, generator=g)
    y = x.cumsum(dim=1)[:, -1:] * 0.5
    model = SequenceRegressor()
    trainer = L.Trainer(
        strategy="ddp",
        max_epochs=2,
        deterministic=True,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        default_root_dir=probe.out_dir(),
    )
    trainer.fit(
        model,
        DataLoader(TensorDataset(x[:40], y[:40]), batch_size=8, shuffle=True),
        DataLoader(TensorDataset(x[40:], y[40:]), batch_size=4),
    )
    probe.record(trainer, model)
    probe.finish()
