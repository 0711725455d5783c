# differential: reference of training_step_on_epoch.py (sync_dist=True by hand)
"""training_step logs the loss per epoch only (on_step=False, on_epoch=True) for the progress bar.

The epoch value is each rank's mean over its own batches; the reference syncs it (sync_dist=True).
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class AutoEncoder(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(6, 2)
        self.decoder = nn.Linear(2, 6)

    def training_step(self, batch, batch_idx):
        (x,) = batch
        loss = nn.functional.mse_loss(self.decoder(torch.tanh(self.encoder(x))), x)
        self.log("train_loss", loss, on_step=False, on_epoch=True, prog_bar=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.01)


if __name__ == "__main__":
    L.seed_everything(1, verbose=False)
    g = torch.Generator().manual_seed(4)
    data = TensorDataset(torch.randn(32, 2, generator=g) @ torch.randn(2, 6, generator=g))
    model = AutoEncoder()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(data, batch_size=4, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
