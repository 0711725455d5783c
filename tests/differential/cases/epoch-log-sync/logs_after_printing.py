# differential: safe
"""training_step logs the loss per epoch; validation_step prints the loss (`print`,
`self.print`) and keeps it for an epoch summary (`self.val_losses.append(loss)`), then logs the
loss and the accuracy. The logs say nothing about sync_dist.

Under DDP each rank logs its own shard's epoch mean. The builtin `print` (bound to nothing else in
the program) and Lightning's `self.print` format the loss and change nothing of it, and a list kept
on the module is only appended to: DDP004 proves the values per rank and adds sync_dist=True by
default. (A logger's filters and handlers, and `manual_backward`'s `on_before_backward` hooks, are
handed the values themselves: those are not taken as read-only.) The reference gathers every
batch's values by hand and logs their mean.
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
        self.val_losses = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, on_step=False, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        loss = nn.functional.cross_entropy(logits, y)
        if batch_idx == -1:
            print(f"val loss {loss.item():.3f}")
        self.print("batch", batch_idx, "loss", float(loss))
        self.val_losses.append(loss.detach())
        self.log("val_loss", loss)
        self.log("val_acc", (logits.argmax(dim=1) == y).float().mean(), prog_bar=True)

    def on_validation_epoch_end(self):
        self.val_losses.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def loaders():
    g = torch.Generator().manual_seed(3)
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
