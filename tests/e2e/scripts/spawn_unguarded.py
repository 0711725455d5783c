"""The DDP011 pattern: a ddp_spawn script with no main guard."""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class CloseProcessGroup(L.Callback):
    """Tear the process group down in each spawned rank: gloo otherwise aborts now and then at exit
    ("terminate called without an active exception")."""

    def teardown(self, trainer, pl_module, stage):
        if torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()


L.seed_everything(3, verbose=False)
data = TensorDataset(torch.randn(16, 4), torch.randn(16, 1))
trainer = L.Trainer(
    accelerator="cpu", devices=2, strategy="ddp_spawn", max_epochs=1, logger=False,
    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    callbacks=[CloseProcessGroup()],
)
trainer.fit(Model(), DataLoader(data, batch_size=4))
print(f"RESULT finished {trainer.state.finished}")
