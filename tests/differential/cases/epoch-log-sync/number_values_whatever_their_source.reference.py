# differential: reference of number_values_whatever_their_source.py (gathers the accuracy by hand)
"""The reference of number_values_whatever_their_source.py: the accuracy of every rank's batches
gathered by hand and averaged at the epoch's end."""
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
        self.accuracies = []

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
        self.accuracies.append(torch.tensor(np.mean(scores), dtype=torch.float32, device=self.device))
        self.log("val_loss_all_ranks", float(self.all_gather(loss.detach()).mean()))

    def on_validation_epoch_end(self):
        # every rank's batch accuracies (equal batches on every rank), averaged: the epoch's accuracy
        self.log("val_acc", self.all_gather(torch.stack(self.accuracies)).mean())
        self.accuracies.clear()

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
