# differential: unsafe
"""A base module's validation_step logs what its `_score` helper returns; the subclass the script
trains redefines `_score` to return the count already gathered from every rank.

The base's helper alone is this rank's own, but the method that runs is the subclass's: its value is
global. DDP004 sees that a class of the project derives from the module, so the helper may be
defined again, and leaves the fix to --unsafe-fixes, naming the subclass.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Base(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 1)

    def _score(self, x, y):
        return torch.ones((), device=x.device) * len(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_samples", self._score(x, y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class Gathered(Base):
    def _score(self, x, y):
        return self.all_gather(torch.ones((), device=x.device) * len(x)).sum()


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(40, 2, generator=g), torch.randn(40, 1, generator=g)
    model = Gathered()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:24], y[:24]), batch_size=8), DataLoader(TensorDataset(x[24:], y[24:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
