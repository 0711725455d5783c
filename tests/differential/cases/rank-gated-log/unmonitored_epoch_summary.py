# differential: safe
"""on_validation_epoch_end computes the epoch's mean loss on every rank and logs it under a rank-0
guard, next to a print; no callback monitors it.

The other ranks never log the key. The fix marks the call rank_zero_only=True and keeps the guard:
rank 0 logs the same value as before, the other ranks still hold nothing, and the weights do not
move.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.val_losses = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_losses.append(nn.functional.mse_loss(self.net(x), y).detach())

    def on_validation_epoch_end(self):
        mean_loss = torch.stack(self.val_losses).mean()
        self.val_losses.clear()
        if self.trainer.is_global_zero:
            self.log("val_loss_rank0", mean_loss)
            print(f"epoch {self.current_epoch}: val_loss_rank0={mean_loss:.4f}")

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(48, 4, generator=g), torch.randn(48, 1, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8), DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
