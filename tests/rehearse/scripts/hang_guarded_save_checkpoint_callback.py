# rehearse: hang
# rule: DDP005
"""trainer.save_checkpoint() under a rank-zero guard in a callback, mid-training.

A hand-written "save every epoch" callback calls trainer.save_checkpoint on
rank 0 only. save_checkpoint ends in a barrier that every rank must enter:
rank 0 waits there, the other ranks start the next epoch and wait for rank 0
in their next collective (the small broadcast Lightning does at every
training step). Nobody can proceed (NCCL: until the collective timeout).
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class SaveEveryEpoch(L.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        if trainer.is_global_zero:
            trainer.save_checkpoint(f"epoch-{trainer.current_epoch}.ckpt")  # rehearse: here


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(19)
    train = TensorDataset(torch.randn(32, 8), torch.randn(32, 1))
    trainer = L.Trainer(
        accelerator="gpu",
        devices=4,
        strategy="ddp",
        max_epochs=3,
        callbacks=[SaveEveryEpoch()],
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(Model(), DataLoader(train, batch_size=8, shuffle=True))
