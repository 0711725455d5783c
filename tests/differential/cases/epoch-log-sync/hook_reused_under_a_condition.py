# differential: unsafe
"""test_step reuses validation_step only for batches whose targets sum above zero: which ranks reuse
it, and how often, depends on each rank's data.

With sync_dist=True the reused validation_step's log would sync only where a rank takes the branch:
DDP004 sees that the hook is called from a condition that may not hold alike on every rank and
leaves the fix to --unsafe-fixes (validation_step's own log, named in the reason).
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
        self.log("eval_loss", nn.functional.mse_loss(self.net(x).squeeze(1), y))

    def test_step(self, batch, batch_idx):
        if batch[1].sum() > 0:
            self.validation_step(batch, batch_idx)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 4, generator=g)
    y = x[:, 0] - 2 * x[:, 1]
    model = Regressor()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8), DataLoader(TensorDataset(x[32:48], y[32:48]), batch_size=4))
    trainer.test(model, DataLoader(TensorDataset(x[48:], y[48:]), batch_size=2))
    probe.record(trainer, model)
    probe.finish()
