# differential: unchanged
"""``on_before_batch_transfer`` runs before Lightning moves the batch: there the batch is still on
the CPU, a hard-coded ``.cuda()`` is reported (move it to ``on_after_batch_transfer``, or leave the
move to Lightning), and device-less factories are right.

``self.device`` would be wrong in both directions here (the CPU batch meets a GPU tensor), so the
rule fixes nothing in this hook: reported only.
"""
import lightning as L
import torch
from torch import nn


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def on_before_batch_transfer(self, batch, dataloader_idx):
        x, y = batch
        jitter = torch.full_like(x, 0.01) * torch.ones(x.shape[1])
        return (x + jitter).cuda(), y.cuda()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Model())
