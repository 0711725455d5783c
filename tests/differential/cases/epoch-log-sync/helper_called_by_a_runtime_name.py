# differential: unsafe
"""training_step logs its loss per step and per epoch through `_log_train`; on_train_batch_end logs a
high loss again through the stage's helper, reached by a name made at run time
(`getattr(self, f"_log_{stage}")`), on the ranks whose own batch has a high loss only.

Without sync_dist nothing is collective and every rank finishes. With sync_dist=True every call of
`_log_train` syncs the step's value: a rank that makes the extra call waits for a partner the other
rank never sends, and training hangs. DDP004 sees the run-time name (it may call any method) and
leaves the fix to a person.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x).squeeze(1), y)
        self._log_train(loss)
        return loss

    def on_train_batch_end(self, outputs, batch, batch_idx):
        if outputs["loss"] > 1.0:  # decided by this rank's own batch
            getattr(self, f"_log_{self.trainer.state.stage.value}")(outputs["loss"])

    def _log_train(self, loss):
        self.log("train_loss", loss, on_epoch=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(8)
    x = torch.randn(32, 4, generator=g)
    y = x[:, 0] * torch.linspace(0.1, 3.0, 32)
    model = Regressor()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
