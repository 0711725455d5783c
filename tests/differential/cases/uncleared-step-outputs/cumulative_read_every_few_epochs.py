# differential: unsafe
"""on_train_epoch_end reports, every second epoch, the accuracy over every sample seen since the
start: the private list is read on some epochs only, and it carries the epochs between reads.

A clear() appended to the hook would empty it every epoch, and the report would become the last
epoch's accuracy (review round 15: 0.714844 became 0.890625 at epoch 3): the fix is unsafe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self, report_every=2):
        super().__init__()
        self.report_every = report_every
        self.net = nn.Linear(4, 3)
        self.__correct = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.__correct.append((logits.argmax(-1) == y).float())
        return nn.functional.cross_entropy(logits, y)

    def on_train_epoch_end(self):
        if (self.current_epoch + 1) % self.report_every == 0:
            self.log("train_acc_cumulative", torch.cat(self.__correct).mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.5)


if __name__ == "__main__":
    L.seed_everything(108, verbose=False)
    g = torch.Generator().manual_seed(109)
    x = torch.randn(64, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=4, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
