# differential: unsafe
"""The whole script runs inside `with trainer.init_module():`, trainer.fit included.

On a GPU the samplers' randperm lands on the device while their generator is on the CPU, so fit
fails there; on CPU it runs. Moving fit out of the block is always unsafe: the hooks fit runs
(setup, the *_dataloader hooks, on_fit_start) build their tensors with the block's default device
and dtype inside it, and the CPU's float32 outside.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(40, verbose=False)
    g = torch.Generator().manual_seed(41)
    x = torch.randn(32, 3, generator=g)
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    with trainer.init_module():
        model = Model()
        loader = DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=8, shuffle=True)
        trainer.fit(model, loader)
    probe.record(trainer, model)
    probe.finish()
