# differential: unsafe
"""training_step keeps every batch loss in a public list; on_train_epoch_end logs a moving window.

The window (the last 6 losses, more than one epoch's 4 batches) reads the list as a history across
epochs on purpose: clearing it at the end of the hook would make epoch 2's loss_window the mean of
4 losses instead of 6. The name is public too, so a callback or the script after fit may read the
whole run's history. ddpfix must not clear it by default.
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
        self.train_losses = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.train_losses.append(loss.detach())
        return loss

    def on_train_epoch_end(self):
        self.log("loss_window", torch.stack(self.train_losses[-6:]).mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(4, verbose=False)
    g = torch.Generator().manual_seed(8)
    x = torch.randn(32, 4, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
