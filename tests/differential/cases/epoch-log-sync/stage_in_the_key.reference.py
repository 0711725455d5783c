# differential: reference of stage_in_the_key.py (gathers the validation values by hand)
"""One helper computes the loss and the accuracy for every stage and logs them under keys built
from the stage its caller names (`f"{mode}_loss"`, `"%s_acc" % mode`): `"train"` from
training_step (logged per step there), `"val"` and `"test"` from the evaluation steps (per epoch).
training_step unpacks what it returns (`loss, _ = ...`). The logs say nothing about sync_dist.

Under DDP each rank logs its own shard's validation mean. Every caller passes the mode a literal
the helper never rebinds, so every rank logs the same keys, and the mode tells the training calls
from the others: DDP004 adds `sync_dist=mode != "train"` by default, which syncs the epoch-level
logs and leaves each training step's value as it was. The reference gathers every validation
batch's values by hand and logs their mean; its training logs are the original's.
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
        self.val_losses, self.val_accs = [], []

    def _calculate_loss(self, batch, mode="train"):
        x, y = batch
        preds = self.net(x)
        loss = nn.functional.cross_entropy(preds, y)
        acc = (preds.argmax(dim=-1) == y).float().mean()
        if mode == "train":
            self.log(f"{mode}_loss", loss)
            self.log("%s_acc" % mode, acc)
        else:
            self.val_losses.append(loss.detach())
            self.val_accs.append(acc)
        return loss, acc

    def training_step(self, batch, batch_idx):
        loss, _ = self._calculate_loss(batch, mode="train")
        return loss

    def validation_step(self, batch, batch_idx):
        self._calculate_loss(batch, mode="val")

    def on_validation_epoch_end(self):
        # every rank's batch means (equal batches on every rank), averaged: the whole epoch's mean
        self.log("val_loss", self.all_gather(torch.stack(self.val_losses)).mean())
        self.log("val_acc", self.all_gather(torch.stack(self.val_accs)).mean())
        self.val_losses.clear()
        self.val_accs.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def loaders():
    g = torch.Generator().manual_seed(11)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Classifier()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, log_every_n_steps=1, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
