# differential: safe
"""test_step reuses validation_step (`return self.validation_step(batch, batch_idx)`), which logs the
batch loss per epoch; the script validates while fitting, then tests.

validation_step is called by the file's own code, but only from test_step, a hook Lightning calls on
every rank, on every call and with its own batch: it still runs on every rank the same way, so
DDP004 adds sync_dist=True by default. Without it the validation and test values are rank 0's. The
reference gathers every batch's loss by hand, in both loops.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x).squeeze(1), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x).squeeze(1), y)
        self.log("eval_loss", loss)
        return loss

    def test_step(self, batch, batch_idx):
        return self.validation_step(batch, batch_idx)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loaders():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 4, generator=g)
    y = x[:, 0] - 2 * x[:, 1]
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:48], y[32:48]), batch_size=4)
    test = DataLoader(TensorDataset(x[48:], y[48:]), batch_size=4)
    return train, val, test


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Regressor()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    train, val, test = loaders()
    trainer.fit(model, train, val)
    validated = float(trainer.callback_metrics["eval_loss"])
    trainer.test(model, test)
    probe.record(trainer, model, validated=validated)
    probe.finish()
