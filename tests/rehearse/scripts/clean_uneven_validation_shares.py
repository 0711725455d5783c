# rehearse: clean
# rule: none
"""Each rank validates its own stride of the data, uneven, with the distributed sampler off (exact
metrics): evaluation has no per-step collective, so uneven shares do not hang.
(From a review of the rehearsal.)"""
import torch
import lightning as L
from torch.utils.data import DataLoader, DistributedSampler, Subset, TensorDataset


def data(n, seed):
    x = torch.randn(n, 8, generator=torch.Generator().manual_seed(seed))
    return TensorDataset(x, (x[:, 0] > 0).long())


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 2)
        self.train_set, self.val_set = data(64, 0), data(33, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.layer(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        # summed per rank, then summed across ranks: exact over the whole validation set
        self.log("val_correct", (self.layer(x).argmax(1) == y).sum().float(), reduce_fx="sum", sync_dist=True)

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=8, sampler=DistributedSampler(self.train_set, shuffle=True))

    def val_dataloader(self):
        # every validation sample exactly once (no DistributedSampler padding duplicates)
        mine = range(self.global_rank, len(self.val_set), self.trainer.world_size)
        return DataLoader(Subset(self.val_set, list(mine)), batch_size=8)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0)
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=3, logger=False,
                        enable_checkpointing=False, use_distributed_sampler=False)
    trainer.fit(Model())
