# rehearse: hang
# rule: DDP005
"""trainer.save_checkpoint() under a rank-zero guard after fit.

Trainer.save_checkpoint is itself collective: every rank must call it
(the strategy decides who writes) and it ends in
`strategy.barrier("Trainer.save_checkpoint")`. Called on rank 0 only, rank 0
waits in that barrier for ranks that never arrive; on GPUs (NCCL) it sits
there until the collective timeout. (Under gloo the wait ends with
"Connection closed by peer" once the other ranks have finished and exited.)
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
        loss = nn.functional.mse_loss(self.layer(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(11)
    train = TensorDataset(torch.randn(32, 8), torch.randn(32, 1))
    trainer = L.Trainer(
        accelerator="gpu",
        devices=4,
        strategy="ddp",
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    model = Model()
    trainer.fit(model, DataLoader(train, batch_size=8, shuffle=True))
    if trainer.is_global_zero:
        trainer.save_checkpoint("final.ckpt")  # rehearse: here
        print("saved final.ckpt")
