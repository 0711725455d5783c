# differential: unchanged
"""A private decision threshold made as a tensor in __init__, later replaced by a Python float.

on_validation_epoch_end stores the tuned threshold with .item(): a buffer takes only a tensor or
None, so as a buffer that assignment would raise TypeError ("cannot assign 'float' as buffer").
ddpfix reports the plain tensor but offers no fix, not even with --unsafe-fixes.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Detector(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.__threshold = torch.tensor(0.0)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.binary_cross_entropy_with_logits(self.net(x).squeeze(1), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        hits = ((self.net(x).squeeze(1) > self.__threshold).float() == y).float().mean()
        self.log("val_acc", hits, sync_dist=True)

    def on_validation_epoch_end(self):
        self.__threshold = self.net.bias.detach().neg().item()

    def threshold(self):
        return float(self.__threshold)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(82, verbose=False)
    g = torch.Generator().manual_seed(83)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).float()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=8)
    model = Detector()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, train, val)
    probe.record(trainer, model, threshold=model.threshold())
    probe.finish()
