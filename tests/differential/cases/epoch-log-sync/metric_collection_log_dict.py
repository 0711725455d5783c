# differential: unchanged
"""A MetricCollection, cloned with a prefix in __init__ (the torchmetrics idiom), updated in
validation_step and given whole to log_dict.

Lightning logs Metric objects through their own synced compute(); sync_dist does not apply to them,
and a fix that adds it says something that is not so.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics import MetricCollection
from torchmetrics.classification import BinaryAccuracy, BinaryPrecision

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
        metrics = MetricCollection({"acc": BinaryAccuracy(), "precision": BinaryPrecision()})
        self.train_metrics = metrics.clone(prefix="train_")
        self.val_metrics = metrics.clone(prefix="val_")

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x).squeeze(1)
        self.train_metrics.update(logits, y.long())
        return nn.functional.binary_cross_entropy_with_logits(logits, y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_metrics.update(self.net(x).squeeze(1), y.long())
        self.log_dict(self.val_metrics)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] - x[:, 1] > 0).float()
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8), DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
