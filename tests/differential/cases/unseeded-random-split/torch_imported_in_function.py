# differential: unchanged
"""The file imports torch only inside the function that builds the optimizer; random_split comes from
torch.utils.data at the top.

A fix that writes `torch.Generator()` into setup() must not take the function's local `import
torch` for a name setup() can see.
"""
import lightning as L
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

import probe


class Data(L.LightningDataModule):
    def __init__(self, features, targets):
        super().__init__()
        self.features, self.targets = features, targets

    def setup(self, stage=None):
        self.train_set, self.val_set = random_split(TensorDataset(self.features, self.targets), [0.75, 0.25])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=6)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=6)


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        import torch

        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    import torch

    L.seed_everything(2, verbose=False)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(24, 2, generator=g)
    data = Data(x, x[:, :1] - x[:, 1:])
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, datamodule=data)
    probe.record(trainer, model, splits={"train": list(data.train_set.indices), "val": list(data.val_set.indices)})


if __name__ == "__main__":
    main()
    probe.finish()
