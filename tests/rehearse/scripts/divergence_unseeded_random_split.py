# rehearse: divergence
# rule: DDP012
"""random_split without a generator, before anything is seeded.

Every DDP rank is a separate process that runs this file from the top, so
every rank draws its own permutation in random_split: the ranks train and
validate on different subsets, and samples that are validation data on one
rank are training data on another (validation leaks into training). Nothing
crashes; the numbers are just wrong. seed_everything below comes too late to
help the split.
"""
import lightning as L
import torch
from lightning.pytorch.strategies import DDPStrategy
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split


def load_dataset():
    # Stands in for reading a file: the same 100 rows on every rank.
    rows = torch.Generator().manual_seed(1234)
    x = torch.randn(100, 8, generator=rows)
    y = (x.sum(dim=1, keepdim=True) > 0).float()
    return TensorDataset(x, y)


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.binary_cross_entropy_with_logits(self.layer(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.binary_cross_entropy_with_logits(self.layer(x), y)
        self.log("val_loss", loss, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    dataset = load_dataset()
    train_set, val_set = random_split(dataset, [80, 20])  # rehearse: here
    L.seed_everything(42)
    trainer = L.Trainer(
        accelerator="gpu",
        devices=8,
        strategy=DDPStrategy(find_unused_parameters=False),
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(Model(), DataLoader(train_set, batch_size=8, shuffle=True), DataLoader(val_set, batch_size=8))
