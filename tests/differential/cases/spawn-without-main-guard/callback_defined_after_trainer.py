# differential: unchanged
"""A ddp_spawn script with no main guard that defines a callback class between building the
Trainer's inputs and fit.

The spawned children unpickle the callback by looking its class up in the module's top level:
moved into main() with the statements around it, the class would no longer be a module global
(AttributeError in the children), and it cannot stay above statements it follows without
reordering the script. ddpfix reports the missing guard and offers no fix, not even with
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
        g = torch.Generator().manual_seed(181)
        x = torch.randn(32, 4, generator=g)
        return DataLoader(TensorDataset(x, 2 * x[:, :1]), batch_size=8, shuffle=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


L.seed_everything(180, verbose=False)
model = Model()


class Record(L.Callback):
    def on_fit_end(self, trainer, pl_module):
        probe.record(trainer, pl_module)


trainer = L.Trainer(
    strategy="ddp_spawn",
    accelerator="cpu",
    devices=probe.DEVICE_COUNT,
    max_epochs=2,
    callbacks=[Record()],
    logger=False,
    enable_progress_bar=False,
    enable_model_summary=False,
    enable_checkpointing=False,
    deterministic=True,
)
trainer.fit(model)
