# differential: reference of v1_epoch_end_outputs.py (gathers the outputs by hand)
"""Lightning 1.x: validation_step returns each batch's loss and accuracy, and
`validation_epoch_end(self, outputs)` logs their means (Lightning 2.x refuses a module that defines
it, so the module runs under 1.x, which calls it on every rank once per epoch).

Each rank's outputs are its own shard's: without sync_dist the logged means are rank 0's. The step's
returns are this rank's own values, so DDP004 adds sync_dist=True by default. The reference gathers
every rank's outputs by hand. Runs under pytorch-lightning 1.9.5.
"""
import pytorch_lightning as pl
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        return {"loss": nn.functional.cross_entropy(logits, y), "acc": (logits.argmax(dim=1) == y).float().mean()}

    def validation_epoch_end(self, outputs):
        # every rank's batch values (equal batches on every rank), averaged: the whole set's mean
        losses = self.all_gather(torch.stack([o["loss"] for o in outputs]))
        accs = self.all_gather(torch.stack([o["acc"] for o in outputs]))
        self.log("val_loss", losses.mean())
        self.log("val_acc", accs.mean(), prog_bar=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def loaders():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    pl.seed_everything(0)
    model = Classifier()
    trainer = pl.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
