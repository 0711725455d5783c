"""The DDP001 seed pattern: data and trainer.fit inside trainer.init_module()."""
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
        return torch.optim.SGD(self.parameters(), lr=0.1)


class RandomData(L.LightningDataModule):
    def setup(self, stage=None):
        g = torch.Generator().manual_seed(0)
        self.data = TensorDataset(torch.randn(64, 8, generator=g), torch.randn(64, 1, generator=g))

    def train_dataloader(self):
        return DataLoader(self.data, batch_size=8, shuffle=True)


def main():
    L.seed_everything(7, verbose=False)
    trainer = L.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=2, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    )
    with trainer.init_module():
        model = Model()
        dm = RandomData()
        trainer.fit(model, datamodule=dm)
    if trainer.is_global_zero:
        print(f"RESULT weight_sum {model.layer.weight.detach().sum().item():.6f}")


if __name__ == "__main__":
    main()
    # Lightning leaves the process group up; tearing it down here avoids gloo's occasional
    # "terminate called without an active exception" abort at interpreter exit.
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
