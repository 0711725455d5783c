# differential: unsafe
"""validation_step keeps the predictions of the first two validation batches of the run only
(the step reads the list: `if len(self.__samples) < 2`); on_validation_epoch_end logs their mean.

The samples are a fixed probe taken once, in the first validation epoch (here the model's first
predictions on them): clearing the list at the end of the hook would resample them every epoch
with the current model, and val_sample_mean would follow the training instead. A step that reads
the list makes the fix unsafe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)
        self.__samples = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        if len(self.__samples) < 2:
            self.__samples.append(self.net(x).detach())

    def on_validation_epoch_end(self):
        self.log("val_sample_mean", torch.cat(self.__samples).mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(100, verbose=False)
    g = torch.Generator().manual_seed(101)
    x = torch.randn(48, 3, generator=g)
    y = x[:, :1] - x[:, 2:]
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, train, val)
    probe.record(trainer, model)
    probe.finish()
