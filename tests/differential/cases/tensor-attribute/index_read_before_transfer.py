# differential: unsafe
"""A private int64 column index read in on_before_batch_transfer, where the batch is still on the CPU.

Lightning calls on_before_batch_transfer before it moves the batch to the rank's device: the plain
tensor (on the CPU too) selects the columns there; as a buffer it would be on the rank's GPU, and
index_select on the CPU batch fails ("Expected all tensors to be on the same device"). A read
beside data on the CPU makes the fix unsafe (on a CPU-only run both compute the same).
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
        self.__columns = torch.tensor([0, 2, 3])

    def on_before_batch_transfer(self, batch, dataloader_idx):
        x, y = batch
        return x.index_select(1, self.__columns), y

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(84, verbose=False)
    g = torch.Generator().manual_seed(85)
    x = torch.randn(32, 5, generator=g)
    y = (x[:, 0] - x[:, 3]).unsqueeze(1)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
