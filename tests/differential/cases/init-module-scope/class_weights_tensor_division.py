# differential: unchanged
"""Class weights computed as `len(dataset) / counts` inside `with trainer.init_module():` under
precision="64-true", handed to the classifier, which keeps them for its loss.

counts is an integer tensor, so the division makes a tensor in the block's default dtype (float64
under "64-true"); moved out of the block it would be float32, and cross_entropy(float64 logits,
weight=float32) fails ("expected scalar type Double but found Float"). Arithmetic on anything
but known Python values may compute with tensors: unsafe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Classifier(L.LightningModule):
    def __init__(self, class_weights):
        super().__init__()
        self.class_weights = class_weights
        self.net = nn.Linear(4, 3)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y, weight=self.class_weights)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(128, verbose=False)
    g = torch.Generator().manual_seed(129)
    x = torch.randn(32, 4, generator=g, dtype=torch.float64)
    y = torch.bucketize(x[:, 0], torch.tensor([-0.3, 0.9], dtype=torch.float64))
    dataset = TensorDataset(x, y)
    counts = torch.bincount(y, minlength=3)
    trainer = L.Trainer(strategy="ddp", max_epochs=2, precision="64-true", **probe.trainer_kwargs())
    with trainer.init_module():
        class_weights = len(dataset) / counts
        model = Classifier(class_weights)
    trainer.fit(model, DataLoader(dataset, batch_size=8, shuffle=True))
    probe.record(trainer, model, class_weights=class_weights)
    probe.finish()
