# differential: safe
"""Epoch values logged as Python and NumPy numbers: a validation accuracy as `np.mean` of a list
of floats the step fills (of predictions `tolist()` made), without sync_dist; beside it a loss
already averaged over every rank by hand (`float(self.all_gather(loss).mean())`), which is no
finding at all (global already) and stays as it is.

A number is made a tensor on the module's device by Lightning (no CPU tensor reaches the sync), and
a mean of a number every rank already shares is that number: DDP004 adds sync_dist=True by default
without proving where the number came from. Under DDP the accuracy is rank 0's shard only. The
reference gathers the accuracy by hand.
"""
import lightning as L
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        loss = nn.functional.cross_entropy(logits, y)
        scores = []
        for predicted, target in zip(logits.argmax(dim=-1).tolist(), y.tolist()):
            scores.append(float(predicted == target))
        self.log("val_acc", np.mean(scores))
        self.log("val_loss_all_ranks", float(self.all_gather(loss.detach()).mean()))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def loaders():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Classifier()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
