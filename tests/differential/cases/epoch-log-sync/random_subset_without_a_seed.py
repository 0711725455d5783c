# differential: unsafe
"""The validation set is a random subset drawn without a shared seed (`torch.rand(n) < 0.75`): its
length differs from rank to rank. The validation loss is logged per epoch without sync_dist, and
Lightning infers each batch's size.

Lightning's sampler gives each rank ceil(len / world size) samples of its own dataset, so the
ranks' summed batch sizes differ; Lightning syncs them as integers (a sum, then a floor division),
which skews even the synced mean. Without `seed_everything` the draw is the ranks' own: DDP004
leaves `sync_dist=True` to --unsafe-fixes and asks for a literal `batch_size=`.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Classifier(L.LightningModule):
    def __init__(self, lr=0.3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
        nn.init.zeros_(self.net[0].bias)
        self.lr = lr

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.cross_entropy(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


def loaders():
    x = torch.randn(48, 4)
    y = (x[:, 0] > 0).long()
    keep = torch.rand(16) < 0.75
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:][keep], y[32:][keep]), batch_size=3)
    return train, val


if __name__ == "__main__":
    model = Classifier(lr=0.2)
    trainer = L.Trainer(strategy="ddp", max_epochs=2, use_distributed_sampler=True, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
