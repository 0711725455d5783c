# differential: unsafe
"""test_step appends each batch's predictions to a public list; on_test_epoch_end logs their mean.

The test loop runs one epoch per trainer.test call, so nothing grows; and the name is public, so
the evaluation script of the project (another file: `preds = model.test_outputs` after
trainer.test, to write a submission) may read the list after the call, which a clear() at the end
of on_test_epoch_end would have emptied. Test and predict hooks, and a public name, make the fix
unsafe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)
        self.test_outputs = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.test_outputs.append(self.net(x).detach())

    def on_test_epoch_end(self):
        self.log("test_pred_mean", torch.cat(self.test_outputs).mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(108, verbose=False)
    g = torch.Generator().manual_seed(109)
    x = torch.randn(48, 3, generator=g)
    y = x.sum(dim=1, keepdim=True)
    model = Regressor()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True))
    trainer.test(model, DataLoader(TensorDataset(x[32:], y[32:]), batch_size=8))
    probe.record(trainer, model)
    probe.finish()
