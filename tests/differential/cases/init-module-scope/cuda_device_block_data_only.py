# differential: safe
"""`with torch.device("cuda"):` around the loaders of a Lightning script; the model is built before
it and fit comes after.

In a file that imports Lightning the device block only decides where tensor factories inside it
put their tensors, and Lightning moves every batch to the rank's device itself; on a GPU the
samplers' generators would meet CUDA tensors. The block holds only data work that creates no
tensor (TensorDataset and DataLoader store their arguments), so it can be dissolved. Entering
torch.device("cuda") creates nothing, so the original runs on a machine without CUDA too. The fix
is safe: the rewrite must train exactly like the original, in one process and under DDP.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(117, verbose=False)
    g = torch.Generator().manual_seed(118)
    x = torch.randn(32, 3, generator=g)
    y = x[:, :1] * x[:, 1:2]
    model = Model()
    with torch.device("cuda"):
        train = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, train)
    probe.record(trainer, model)
    probe.finish()
