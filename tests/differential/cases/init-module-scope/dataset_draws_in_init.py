# differential: unsafe
"""A Dataset of this file that draws its noise in __init__, built between the backbone and the
regressor inside `with trainer.init_module():`.

Moved out of the block, the dataset would be built after the regressor: the regressor's head would
draw the numbers the noise drew, and the noise the next ones: other data, other initial weights.
A Dataset whose __init__ draws random numbers (an unknown effect) makes the move unsafe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

import probe


class NoisyPoints(Dataset):
    def __init__(self, x):
        self.x = x
        self.y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(len(x), 1)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class Regressor(L.LightningModule):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(6, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.head(torch.relu(self.backbone(x))), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(122, verbose=False)
    g = torch.Generator().manual_seed(123)
    x = torch.randn(32, 4, generator=g)
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    with trainer.init_module():
        backbone = nn.Linear(4, 6)
        points = NoisyPoints(x)
        model = Regressor(backbone)
    trainer.fit(model, DataLoader(points, batch_size=8, shuffle=True))
    probe.record(trainer, model, targets=points.y)
    probe.finish()
