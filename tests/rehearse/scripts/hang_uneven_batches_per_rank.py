# rehearse: hang
# rule: none
"""Different numbers of batches per rank (use_distributed_sampler=False).

Each rank reads its own pre-split shard and the distributed sampler is turned
off, but the shards are not the same size: rank 0 has 6 batches per epoch,
rank 1 has 5. Every training step is collective (DDP all-reduces the
gradients), so rank 0's extra steps are answered by the first steps of rank
1's next epoch, and when rank 1 has finished its 3 epochs rank 0 still has
steps to go: it waits in a collective that no other rank will ever enter.
On NCCL it waits until the collective timeout; under gloo the wait ends with
"Connection closed by peer" once rank 1 has exited.
"""
import os

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

SHARD_SIZES = [48, 40]  # rows in shard-0.pt, shard-1.pt


def load_shard(rank):
    # Stands in for torch.load(f"shard-{rank}.pt").
    rows = torch.Generator().manual_seed(rank)
    n = SHARD_SIZES[rank % len(SHARD_SIZES)]
    return TensorDataset(torch.randn(n, 8, generator=rows), torch.randn(n, 1, generator=rows))


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
    L.seed_everything(21)
    shard = load_shard(int(os.environ.get("LOCAL_RANK", 0)))
    trainer = L.Trainer(
        accelerator="gpu",
        devices=2,
        strategy="ddp",
        max_epochs=3,
        use_distributed_sampler=False,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(Model(), DataLoader(shard, batch_size=8, shuffle=True))  # rehearse: here
