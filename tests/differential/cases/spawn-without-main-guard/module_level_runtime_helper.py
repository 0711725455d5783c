# differential: unsafe
"""A ddp_spawn script at module level that also calls a helper of its own before building the Trainer.

setup_runtime() is an unknown call to ddpfix: moved into main(), the spawned children would no
longer run it, and whatever it sets for the whole process (here the matmul precision and the
thread count) would be lost in the processes that train. The move is unsafe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe



class Model(L.LightningModule):
    def configure_model(self):
        if not hasattr(self, "net"):
            self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def train_dataloader(self):
        g = torch.Generator().manual_seed(31)
        x = torch.randn(32, 4, generator=g)
        return DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=8, shuffle=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)

    def on_fit_end(self):
        # ddp_spawn: only the spawned processes hold the trained ranks, so each records itself here
        probe.record(self.trainer, self)


def setup_runtime():
    torch.set_float32_matmul_precision("high")
    torch.set_num_threads(1)


L.seed_everything(30, verbose=False)
setup_runtime()
model = Model()
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
