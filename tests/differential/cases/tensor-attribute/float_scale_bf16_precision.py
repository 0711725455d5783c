# differential: unsafe
"""A private float32 constant (per-output scales) in a model trained with precision="bf16-true".

Lightning casts the module to bfloat16, but not a plain tensor attribute: the bf16 output times the
float32 scales is computed, and the loss taken, in float32. As a buffer the scales would be cast
with the module (0.1, 0.3 ... rounded to bfloat16) and the loss computed in bfloat16: other
losses, other gradients, other trained weights. A floating-point (or unknown) dtype makes the fix
unsafe even for a private constant that is only read.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Scaled(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)
        self.__scale = torch.tensor([0.1, 0.3, 1.7])

    def forward(self, x):
        return self.net(x) * self.__scale

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(76, verbose=False)
    g = torch.Generator().manual_seed(77)
    x = torch.randn(32, 4, generator=g)
    y = x[:, :3] * x[:, 3:]
    model = Scaled()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, precision="bf16-true", **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
