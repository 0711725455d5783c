# differential: unsafe
"""A DDP training script splits its data first and seeds afterwards, right before building the model.

The split is drawn from the process's own, randomly seeded global generator: each DDP rank draws
another one. seed_everything(7) comes too late for it (it does make the model and the shuffling
reproducible). The fix seeds the split's generator with the script's seed, 7; the reference is the
same split written by hand as torch.manual_seed(7) right before it (the default generator then
draws what a fresh generator seeded with 7 draws).
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

import probe


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(5, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_step=False, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.05)


if __name__ == "__main__":
    g = torch.Generator().manual_seed(1)
    x = torch.randn(48, 5, generator=g)
    y = x.sum(dim=1, keepdim=True) + 0.05 * torch.randn(48, 1, generator=g)
    train_set, val_set = random_split(TensorDataset(x, y), [0.75, 0.25])

    L.seed_everything(7, verbose=False)
    model = Regressor()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(train_set, batch_size=6, shuffle=True), DataLoader(val_set, batch_size=6))
    probe.record(trainer, model, splits={"train": list(train_set.indices), "val": list(val_set.indices)})
    probe.finish()
