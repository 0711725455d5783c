# differential: unchanged
"""`backbone = build_backbone(6)` inside `with trainer.init_module():` under precision="64-true",
then the classifier around it.

A name does not tell a model from data: build_backbone builds layers, which inside the block are
created (and initialised) in float64, and outside it in float32 and cast later, which draws other
initial weights; with empty_init=True a large model would be fully built on every rank. Moving a
call ddpfix does not know out of the block is unsafe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


def build_backbone(width):
    return nn.Sequential(nn.Linear(3, width), nn.Tanh())


class Classifier(L.LightningModule):
    def __init__(self, backbone, width):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(width, 2)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.head(self.backbone(x)), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(126, verbose=False)
    g = torch.Generator().manual_seed(127)
    x = torch.randn(32, 3, generator=g, dtype=torch.float64)
    y = (x[:, 0] + x[:, 2] > 0).long()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, precision="64-true", **probe.trainer_kwargs())
    with trainer.init_module():
        backbone = build_backbone(6)
        model = Classifier(backbone, width=6)
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
