# differential: unchanged
"""A ddp_spawn script with no main guard that sets the matmul precision after building the model
(the first statement that would move).

Moved into main() with the rest, the setting would no longer run in the spawned children, which
train with it; kept at the top, it would run before the model it followed (a setting may read what
the statements above it bind). ddpfix reports the missing guard and offers no fix, not even with
--unsafe-fixes.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def configure_model(self):
        if not hasattr(self, "net"):
            self.net = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def train_dataloader(self):
        g = torch.Generator().manual_seed(171)
        x = torch.randn(32, 4, generator=g)
        return DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=8, shuffle=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)

    def on_fit_end(self):
        probe.record(self.trainer, self, matmul_precision=torch.get_float32_matmul_precision())


L.seed_everything(170, verbose=False)
model = Model()
torch.set_float32_matmul_precision("medium")
trainer = L.Trainer(
    strategy="ddp_spawn",
    accelerator="cpu",
    devices=probe.DEVICE_COUNT,
    max_epochs=2,
    logger=False,
    enable_progress_bar=False,
    enable_model_summary=False,
    enable_checkpointing=False,
    deterministic=True,
)
trainer.fit(model)
