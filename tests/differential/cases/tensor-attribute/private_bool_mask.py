# differential: safe
"""A causal mask kept as a plain tensor attribute: a private bool constant, read only in forward.

On a GPU the plain tensor stays on the CPU while the batch is on the rank's device ("Expected all
tensors to be on the same device"); as a non-persistent buffer it moves with the module. The mask
is name-mangled, bool, built from literals only, never written after __init__, and only read by
masked_fill beside the batch: the fix (register_buffer(..., persistent=False)) is safe. On CPU it
must compute exactly what the original does, and leave the state_dict keys as they were.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.mix = nn.Linear(6, 6)
        self.head = nn.Linear(6, 1)
        self.__mask = torch.ones(6, 6, dtype=torch.bool).triu(diagonal=1)

    def forward(self, x):
        weights = self.mix.weight.masked_fill(self.__mask, 0.0)
        return self.head(torch.tanh(x @ weights.T + self.mix.bias))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(6, verbose=False)
    g = torch.Generator().manual_seed(9)
    x = torch.randn(32, 6, generator=g)
    y = x.cumsum(dim=1)[:, -1:]
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
