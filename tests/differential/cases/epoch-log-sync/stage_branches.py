# differential: safe
"""One helper computes the loss for every stage and logs it in the branch of its stage:
`self._shared_step(batch, "train")` from training_step, `"val"` from validation_step (the
branch tests `stage in ("val", "test")`). The
validation branch's log says nothing about sync_dist; the training branch logs per step.

Under DDP each rank logs its own shard's validation mean. The stage is a literal each caller
passes and the helper never rebinds, so the training step never reaches the validation branch:
DDP004 reports only the validation log (the training one is a per-step log, correct as it is),
proves its value per rank and adds sync_dist=True there by default. The reference gathers every
validation batch's loss by hand and logs their mean; the training log is left as it is.
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

    def _shared_step(self, batch, stage):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        if stage == "train":
            self.log("train_loss", loss)
        elif stage in ("val", "test"):
            self.log("val_loss", loss)
        else:
            raise ValueError(stage)
        return loss

    def training_step(self, batch, batch_idx):
        return self._shared_step(batch, "train")

    def validation_step(self, batch, batch_idx):
        self._shared_step(batch, stage="val")

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def loaders():
    g = torch.Generator().manual_seed(7)
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
