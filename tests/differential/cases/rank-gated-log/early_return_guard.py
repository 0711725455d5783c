# differential: safe
"""on_train_epoch_end returns early on every rank but 0, then logs the weight norm; nothing monitors it.

The weights are the same on every rank (DDP), so any rank could compute the norm; only rank 0 logs
it. The fix marks the call rank_zero_only=True: the same value, on the same rank.
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
        self.log("train_loss", loss)
        return loss

    def on_train_epoch_end(self):
        if not self.trainer.is_global_zero:
            return
        norm = torch.sqrt(sum((p.detach() ** 2).sum() for p in self.parameters()))
        self.log("weight_norm", norm)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.01)


if __name__ == "__main__":
    L.seed_everything(2, verbose=False)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 3, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, x.prod(dim=1, keepdim=True)), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
