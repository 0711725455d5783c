# rehearse: crash
# rule: DDP011
"""strategy="ddp_spawn" with no `if __name__ == "__main__":` guard.

ddp_spawn starts each rank with multiprocessing's "spawn" method, and a
spawned child imports this file as `__mp_main__`, running all module-level
code again: it builds the data and the Trainer and calls trainer.fit a second
time, inside the child. Lightning notices and raises in every child
("RuntimeError: Launching multiple processes with the 'spawn' start method
requires that your script guards the main function with an
`if __name__ == "__main__"` clause"); the parent's spawn then fails with
"ProcessExitedException: process N terminated with exit code 1".
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


L.seed_everything(6)
train = TensorDataset(torch.randn(32, 8), torch.randn(32, 1))
trainer = L.Trainer(
    accelerator="gpu",
    devices=2,
    strategy="ddp_spawn",
    max_epochs=2,
    logger=False,
    enable_checkpointing=False,
    enable_progress_bar=False,
)
trainer.fit(Model(), DataLoader(train, batch_size=8))  # rehearse: here
