# differential: unchanged
"""EarlyStopping monitors val_loss, logged under `if self.trainer.is_global_zero:` whose `else:`
returns; rank 0 goes on to print a report.

Moving the log "just after the guard" with sync_dist=True does not reach the other ranks: they
have returned in the else branch. Rank 0 then enters the all-reduce alone and the run hangs,
where the original failed fast on rank 1's missing key.
"""
import lightning as L
import torch
from lightning.pytorch.callbacks import EarlyStopping
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
        loss = torch.stack(self.val_losses).mean()
        self.val_losses.clear()
        if self.trainer.is_global_zero:
            self.log("val_loss", loss)
        else:
            return
        print(f"epoch {self.current_epoch}: val_loss={loss:.4f}")

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(48, 4, generator=g), torch.randn(48, 1, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, callbacks=[EarlyStopping(monitor="val_loss")], **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8), DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
