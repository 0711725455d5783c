# differential: reference of number_values_whatever_their_source.py (gathers the accuracy by hand)
"""The reference of number_values_whatever_their_source.py: every rank's mean accuracy gathered
by hand and averaged at the epoch's end."""
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
        self.batch_accuracies = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        loss = nn.functional.cross_entropy(logits, y)
        right = [float(predicted == target) for predicted, target in zip(logits.argmax(dim=-1).tolist(), y.tolist())]
        self.batch_accuracies.append(sum(right) / len(right))
        self.log("val_loss_all_ranks", float(self.all_gather(loss.detach()).mean()))

    def on_validation_epoch_end(self):
        scores = [accuracy for accuracy in self.batch_accuracies]
        self.log("val_acc", self.all_gather(torch.tensor(np.mean(scores), dtype=torch.float32, device=self.device)).mean())
        self.batch_accuracies.clear()

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
