# differential: safe
"""The model, then a random_split drawn from its own seeded generator and the loaders, all inside
`with trainer.init_module():`; fit comes after.

The split and the loaders follow the model, so they leave the block in their order, passing no
model construction: random_split draws only from the CPU generator it is given (inside the block
or not), Subset and DataLoader only store their arguments. The fix is safe: the rewrite must draw
the same split (recorded) and train the same weights, in one process and under DDP.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.01)


if __name__ == "__main__":
    L.seed_everything(112, verbose=False)
    g = torch.Generator().manual_seed(113)
    x = torch.randn(48, 4, generator=g)
    dataset = TensorDataset(x, x[:, :2].sum(dim=1, keepdim=True) - x[:, 3:])
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    with trainer.init_module():
        model = Model()
        train_set, val_set = random_split(dataset, [32, 16], generator=torch.Generator().manual_seed(114))
        train = DataLoader(train_set, batch_size=8, shuffle=True)
        val = DataLoader(val_set, batch_size=8)
    trainer.fit(model, train, val)
    probe.record(trainer, model, splits={"train": train_set.indices, "val": val_set.indices})
    probe.finish()
