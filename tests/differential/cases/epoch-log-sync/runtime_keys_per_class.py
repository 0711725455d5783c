# differential: unchanged
"""Per-class accuracy, logged under names built at run time from the classes present in each batch.

Ranks see different classes (here rank 0's shard holds classes 0 and 1, rank 1's only class 2), so
they hold different keys. With sync_dist=True each key is all-reduced at the epoch's end by the
ranks that have it: the collectives of the two ranks no longer pair up (a hang, or values summed
under the wrong names).
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 3)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        pred = self.net(x).argmax(dim=1)
        for c in y.unique().tolist():
            self.log(f"val_acc_{c}", (pred[y == c] == c).float().mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.2)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 3, generator=g)
    y = torch.arange(48) % 3
    # validation: even positions hold classes 0 and 1, odd positions class 2 (DistributedSampler
    # gives rank 0 the even positions and rank 1 the odd ones)
    val_y = torch.tensor([0, 2, 1, 2] * 4)
    val_x = torch.randn(16, 3, generator=g) + val_y.unsqueeze(1).float()
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8), DataLoader(TensorDataset(val_x, val_y), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
