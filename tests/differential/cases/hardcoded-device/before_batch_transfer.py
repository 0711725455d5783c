# differential: unchanged
"""``on_before_batch_transfer`` runs before Lightning moves the batch: there the batch is still on
the CPU and device-less factories are right; an index-less ``.cuda()`` is the rank's own GPU
(Trainer.fit set it before any hook), and Lightning's transfer then leaves the batch where it is.

Nothing here puts a rank's tensor on another rank's GPU: the rule leaves the file alone.
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
