# differential: reference of subclass_in_another_file.py (gathers the batch values by hand)
"""The module logs its validation loss and accuracy without sync_dist; the script trains a class
another file derives from it (`Wider`, wider.py beside the script), which adds a synced log of its
own at the epoch's end.

Under DDP each rank logs its own shard's epoch mean. DDP004 reads wider.py: `Wider` is seen whole,
its one syncing log runs on every rank in one order, and it defines again nothing the proof read, so
sync_dist=True is added by default. The reference gathers every batch's values by hand.
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

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.val_losses.append(nn.functional.cross_entropy(logits, y).detach())
        self.val_accs.append((logits.argmax(dim=1) == y).float().mean())
        if batch_idx == self.trainer.num_val_batches[0] - 1:  # the shard's last batch: its values, gathered
            losses = self.all_gather(torch.stack(self.val_losses))
            accs = self.all_gather(torch.stack(self.val_accs))
            self.log("val_loss", losses.mean())
            self.log("val_acc", accs.mean(), prog_bar=True)
            self.val_losses.clear()
            self.val_accs.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def loaders():
    g = torch.Generator().manual_seed(9)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    from wider import Wider

    L.seed_everything(0, verbose=False)
    model = Wider()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
