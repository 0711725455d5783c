# differential: safe
"""training_step and validation_step compute the loss with a loss module built and called in one
expression (`nn.CrossEntropyLoss(label_smoothing=0.1)(logits, y)`, `nn.MSELoss()(...)`), and log
it per epoch. The logs say nothing about sync_dist.

Under DDP each rank logs its own shard's epoch mean. A `torch.nn` loss built with constant
arguments and called at once computes on the tensors it is handed, as one bound to a local name
first does: DDP004 proves the values per rank and adds sync_dist=True by default. The reference
gathers every batch's values by hand and logs their mean.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe

class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.CrossEntropyLoss(label_smoothing=0.1)(self.net(x), y)
        self.log("train_loss", loss, on_step=False, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        loss = nn.CrossEntropyLoss(label_smoothing=0.1)(logits, y)
        self.log("val_loss", loss)
        self.log("val_spread", nn.MSELoss()(logits.softmax(dim=1), nn.functional.one_hot(y, 3).float()))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def loaders():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Classifier()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
