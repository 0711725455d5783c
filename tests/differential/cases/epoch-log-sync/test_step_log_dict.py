# differential: safe
"""test_step logs a dict of metrics with log_dict; the script fits, then tests.

Without sync_dist each rank's test metrics are its own shard's; the reference syncs them by hand
(sync_dist=True, as the Lightning warning says).
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Regressor(L.LightningModule):
    def __init__(self, lr=0.05):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_mse", loss)
        return loss

    def test_step(self, batch, batch_idx):
        x, y = batch
        pred = self.net(x)
        self.log_dict({"test_mse": nn.functional.mse_loss(pred, y), "test_mae": (pred - y).abs().mean()})

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)


def dataset(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return TensorDataset(x, x @ torch.tensor([[0.5], [-1.0], [2.0]]) + torch.randn(n, 1, generator=g))


def main():
    L.seed_everything(42, verbose=False)
    model = Regressor()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(dataset(32, 1), batch_size=8, shuffle=True))
    trainer.test(model, DataLoader(dataset(16, 2), batch_size=4), verbose=False)
    probe.record(trainer, model)


if __name__ == "__main__":
    main()
    probe.finish()
