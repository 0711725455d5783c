# differential: unchanged
"""Tensors meant for the CPU, made without a device in ``validation_step`` and used through a
variable: a confusion matrix filled from ``.cpu()`` predictions and handed to NumPy, and an index
tensor used on a CPU tensor (issue 20, C: ``device=self.device`` was once added to these).

Adding ``device=self.device`` would move them to the GPU, where ``weighted.numpy()`` raises and
``self.prior_cpu[classes]`` mixes devices. None of them meets a tensor of the batch Lightning moved:
not reported, nothing rewritten.
"""
import lightning as L
import numpy as np
import torch
from torch import nn


class Classifier(L.LightningModule):
    def __init__(self, classes=4):
        super().__init__()
        self.classes = classes
        self.net = nn.Linear(8, classes)
        self.prior_cpu = torch.full((classes,), 1.0 / classes)
        self.confusions = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        preds = self.net(x).argmax(dim=1).cpu()
        counts = torch.zeros(self.classes, self.classes)
        counts.index_put_((y.cpu(), preds), torch.ones(len(y)), accumulate=True)
        classes = torch.arange(self.classes)
        weighted = counts * self.prior_cpu[classes]
        self.confusions.append(weighted.numpy())

    def on_validation_epoch_end(self):
        total = np.sum(self.confusions, axis=0)
        self.log("val_acc", float(np.trace(total) / max(total.sum(), 1e-9)), sync_dist=True)
        self.confusions.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Classifier())
