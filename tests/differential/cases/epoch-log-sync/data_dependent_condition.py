# differential: unchanged
"""Recall on the positives is logged only for batches that hold a positive.

Rank 1's validation shard holds no positive (DistributedSampler gives it the odd positions), so
rank 1 never logs val_recall. With sync_dist=True rank 0 all-reduces val_recall at the epoch's end
alone: its collectives and rank 1's no longer pair up.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Detector(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.binary_cross_entropy_with_logits(self.net(x).squeeze(1), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x).squeeze(1)
        self.log("val_loss", nn.functional.binary_cross_entropy_with_logits(logits, y), sync_dist=True)
        positives = y == 1
        if positives.any():
            self.log("val_recall", (logits[positives] > 0).float().mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(2)
    x = torch.randn(32, 4, generator=g)
    y = (x[:, 0] > 0).float()
    val_y = torch.tensor([1.0, 0.0] * 8)  # positives only at even positions: rank 0's shard
    val_x = torch.randn(16, 4, generator=g) + val_y.unsqueeze(1)
    model = Detector()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8), DataLoader(TensorDataset(val_x, val_y), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
