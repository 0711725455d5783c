# differential: unsafe
"""A private temperature tensor with requires_grad=True, handed to the optimizer by hand.

The tensor is learned: as a plain attribute it is a leaf the optimizer updates in place. As a
buffer DDP would broadcast rank 0's value before every forward and never average its gradient,
and a tensor trained by hand needs nn.Parameter, not a buffer (a Parameter would also enter the
state_dict and change the checkpoint). requires_grad (and the in-place updates) make the fix
unsafe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Calibrated(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)
        self.__temperature = torch.ones(1, requires_grad=True)

    def forward(self, x):
        return self.net(x) / self.__temperature

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def temperature(self):
        return self.__temperature.item()

    def configure_optimizers(self):
        return torch.optim.SGD([*self.parameters(), self.__temperature], lr=0.1)


if __name__ == "__main__":
    L.seed_everything(80, verbose=False)
    g = torch.Generator().manual_seed(81)
    x = torch.randn(32, 4, generator=g)
    y = torch.bucketize(x[:, 0] - x[:, 2], torch.tensor([-0.5, 0.5]))
    model = Calibrated()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True))
    probe.record(trainer, model, temperature=model.temperature())
    probe.finish()
