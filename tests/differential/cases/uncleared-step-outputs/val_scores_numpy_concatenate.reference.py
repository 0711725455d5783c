# differential: reference of val_scores_numpy_concatenate.py (the list emptied by hand)
"""validation_step appends each batch's scores as numpy arrays; on_validation_epoch_end joins them
with numpy.concatenate and logs their mean.

Nothing clears the list, so epoch 2's val_score is the mean over epochs 1 and 2: the original is
wrong in one process too, and the reference (cleared by hand) is the yardstick everywhere. The
list is name-mangled, made empty in __init__, only appended to, read whole through
numpy.concatenate, then only averaged and cast: the fix is safe.
"""
import lightning as L
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Scorer(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.__scores = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.binary_cross_entropy_with_logits(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.__scores.append(torch.sigmoid(self.net(x)).detach().cpu().numpy())

    def on_validation_epoch_end(self):
        scores = np.concatenate(self.__scores)
        self.log("val_score", float(scores.mean()), sync_dist=True)
        del self.__scores[:]

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.2)


if __name__ == "__main__":
    L.seed_everything(94, verbose=False)
    g = torch.Generator().manual_seed(95)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > x[:, 1]).float().unsqueeze(1)
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=8)
    model = Scorer()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, train, val)
    probe.record(trainer, model)
    probe.finish()
