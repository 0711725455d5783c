# differential: reference of unrelated_scripts_beside.py (sync_dist=True by hand)
"""A repository of experiments (optuna-examples' shape): beside this regressor stand a hydra sweep of
another experiment and an example of endless data (`project=unrelated_scripts_parts`), and the script keeps
a scikit-learn probe of its features (`linear_probe`, an estimator whose own methods it calls).
validation_step logs each rank's batch loss per epoch.

The hydra app imports none of the repository's scripts (no `instantiate`, no `_target_`), so the
example of endless data, which Lightning would not shard, never runs with the regressor;
the probe's `fit` is a scikit-learn estimator's, handed no data module. DDP004 adds sync_dist=True
by default. The reference syncs by hand.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


def linear_probe(features, labels):
    """How well a linear classifier reads the labels off the features (run by hand, after training)."""
    from sklearn.linear_model import LogisticRegression

    classifier = LogisticRegression(max_iter=200)
    classifier.fit(features, labels)
    return classifier.score(features, labels)


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x).squeeze(1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_mse", nn.functional.mse_loss(self(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loaders():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(48, 4, generator=g)
    y = x[:, 0] * 2 - x[:, 1]
    train, val = TensorDataset(x[:32], y[:32]), TensorDataset(x[32:], y[32:])
    return DataLoader(train, batch_size=8, shuffle=True), DataLoader(val, batch_size=4)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Regressor()
    train_loader, val_loader = loaders()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, train_loader, val_loader)
    probe.record(trainer, model)
    probe.finish()
