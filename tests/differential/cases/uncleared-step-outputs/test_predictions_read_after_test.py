# differential: unchanged
"""test_step appends each batch's predictions to a private list; on_test_epoch_end logs their mean,
and the script reads the predictions after trainer.test (through a method of the class) to write
them out.

The test loop runs one epoch per trainer.test call, so nothing grows; cleared at the end of
on_test_epoch_end, the list would be empty when the script reads it (torch.cat would raise). Another
method reads the list, so ddpfix offers no fix at all, not even with --unsafe-fixes.
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
        self.__test_preds = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.__test_preds.append(self.net(x).detach())

    def on_test_epoch_end(self):
        self.log("test_pred_mean", torch.cat(self.__test_preds).mean(), sync_dist=True)

    def test_predictions(self):
        return torch.cat(self.__test_preds).squeeze(1)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(96, verbose=False)
    g = torch.Generator().manual_seed(97)
    x = torch.randn(48, 3, generator=g)
    y = x.sum(dim=1, keepdim=True)
    model = Regressor()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True))
    trainer.test(model, DataLoader(TensorDataset(x[32:], y[32:]), batch_size=8))
    probe.record(trainer, model, test_predictions=model.test_predictions())
    probe.finish()
