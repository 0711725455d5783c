# differential: unchanged
"""Repeated random sub-sampling validation: three rounds, each on a fresh random 80/20 split.

seed_everything(7) makes every DDP rank draw the same three splits (no DDP failure), and each
round's split differs from the others, which is the point. One generator seeded with the same
number per call would make all three rounds draw the same split.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    L.seed_everything(7, verbose=False)
    g = torch.Generator().manual_seed(0)
    full = TensorDataset(torch.randn(30, 3, generator=g), torch.randn(30, 1, generator=g))
    splits, scores = {}, []
    for round_ in range(3):
        train_set, val_set = random_split(full, [0.8, 0.2])
        model = Model()
        trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
        trainer.fit(model, DataLoader(train_set, batch_size=6), DataLoader(val_set, batch_size=6))
        splits[f"val_{round_}"] = list(val_set.indices)
        scores.append(trainer.callback_metrics["val_loss"].item())
    probe.record(trainer, model, splits=splits, scores=scores)


if __name__ == "__main__":
    main()
    probe.finish()
