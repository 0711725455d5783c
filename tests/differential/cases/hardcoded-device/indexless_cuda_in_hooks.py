# differential: unchanged
"""Index-less CUDA in the hooks Trainer.fit calls: ``x.cuda()``, ``y.to("cuda")`` and
``torch.tensor([...], device="cuda")`` in ``training_step``, ``.to(torch.device("cuda"))`` in
``setup``.

The strategy's ``setup_environment`` calls ``torch.cuda.set_device`` with the rank's GPU before
``setup`` and every later hook: "cuda" is the rank's own GPU there, on every rank. This code is
right under DDP (it only ties the module to CUDA): the rule must not report or touch it.
"""
import lightning as L
import torch
from torch import nn


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 2)

    def setup(self, stage):
        self.prior = torch.tensor([0.5, 0.5]).to(torch.device("cuda"))

    def training_step(self, batch, batch_idx):
        x, y = batch
        weight = torch.tensor([1.0, 3.0], device="cuda")
        logits = self.net(x.cuda()) + self.prior.log()
        return nn.functional.cross_entropy(logits, y.to("cuda"), weight=weight)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Classifier())
