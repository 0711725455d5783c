# rehearse: hang
# rule: DDP005
"""torch.distributed.all_reduce under a rank-zero guard in a hook.

Only rank 0 enters the all-reduce; the other ranks go straight on to the next
epoch and wait in their next collective (Lightning broadcasts a small tensor
at every training step, then DDP all-reduces the gradients). Rank 0 waits for
partners that never join its all-reduce, the others wait for rank 0: every
rank stalls (NCCL: until the collective timeout).
"""
import lightning as L
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 1)
        self.samples_seen = 0

    def training_step(self, batch, batch_idx):
        x, y = batch
        self.samples_seen += x.shape[0]
        return nn.functional.mse_loss(self.layer(x), y)

    def on_train_epoch_end(self):
        if self.global_rank == 0:
            total = torch.tensor(float(self.samples_seen), device=self.device)
            dist.all_reduce(total)  # rehearse: here
            print(f"samples seen by all ranks: {int(total.item())}")

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(2)
    train = TensorDataset(torch.randn(32, 8), torch.randn(32, 1))
    trainer = L.Trainer(
        accelerator="cuda",
        devices=2,
        strategy="ddp",
        max_epochs=3,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(Model(), DataLoader(train, batch_size=4, shuffle=True))
