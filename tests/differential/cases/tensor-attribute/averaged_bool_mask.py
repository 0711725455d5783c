# differential: unsafe
"""A private bool mask, constant and only read, in a model trained with Lightning's WeightAveraging.

WeightAveraging builds AveragedModel(..., use_buffers=True), which averages the buffers too (by
default an equal-weight running mean, averaged + (current - averaged) / (n + 1)): as a buffer the
bool mask makes the second update fail ("Subtraction, the `-` operator, with two bool tensors is
not supported"). A file that names weight averaging makes the fix unsafe, however safe the tensor
itself is.
"""
import lightning as L
import torch
from lightning.pytorch.callbacks import WeightAveraging
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)
        self.__mask = torch.ones(4, 4, dtype=torch.bool).tril()

    def forward(self, x):
        w = self.layer.weight.masked_fill(~self.__mask, 0.0)
        return self.head(torch.tanh(x @ w.T + self.layer.bias))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(78, verbose=False)
    g = torch.Generator().manual_seed(79)
    x = torch.randn(32, 4, generator=g)
    y = x.cumsum(dim=1)[:, -1:]
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, callbacks=[WeightAveraging()], **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
