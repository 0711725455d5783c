# rehearse: crash
# rule: DDP002
"""A CUDA generator handed to the DataLoader.

Lightning swaps in a DistributedSampler but keeps the loader's generator.
When the loader starts iterating it draws its base seed on the CPU with that
generator (`torch.empty((), dtype=torch.int64).random_(generator=...)`), and
a CUDA generator cannot drive a CPU draw: every rank fails with
"RuntimeError: Expected a 'cpu' device type for generator but found 'cuda'"
when the first training epoch starts. (A CPU-only PyTorch cannot even build
the generator: "Cannot get CUDA generator without ATen_cuda library".)
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 2)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.layer(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    L.seed_everything(5)
    train = TensorDataset(torch.randn(40, 8), torch.randint(0, 2, (40,)))
    loader = DataLoader(
        train,
        batch_size=8,
        shuffle=True,
        generator=torch.Generator(device="cuda"),  # rehearse: here
    )
    trainer = L.Trainer(
        accelerator="gpu",
        devices=2,
        strategy="ddp",
        max_epochs=3,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(Model(), loader)
