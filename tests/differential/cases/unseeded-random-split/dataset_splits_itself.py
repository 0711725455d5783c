# differential: unsafe
"""A Dataset of sliding windows over a series offers its own train/validation split; the script
trains a zero-initialised autoregressive model on it under DDP and never seeds.

The split is drawn from each process's randomly seeded global generator: each DDP rank gets
another one. The reference splits with a seeded generator by hand (42: no seed in the script).
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, random_split

import probe


class Windows(Dataset):
    def __init__(self, series, width=4):
        self.series, self.width = series, width

    def __len__(self):
        return len(self.series) - self.width

    def __getitem__(self, i):
        return self.series[i:i + self.width], self.series[i + self.width:i + self.width + 1]

    def split(self, val_fraction=0.25):
        n_val = int(len(self) * val_fraction)
        return random_split(self, [len(self) - n_val, n_val])


class AutoRegressive(L.LightningModule):
    def __init__(self, width=4):
        super().__init__()
        self.linear = nn.Linear(width, 1)
        nn.init.zeros_(self.linear.weight)
        nn.init.zeros_(self.linear.bias)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.linear(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.linear(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    series = torch.sin(torch.arange(44, dtype=torch.float32) * 0.4)
    windows = Windows(series)
    train_set, val_set = windows.split()
    trainer = L.Trainer(accelerator="cpu", devices=probe.devices(), strategy="ddp", max_epochs=2, logger=False,
                        enable_progress_bar=False, enable_model_summary=False, enable_checkpointing=False,
                        num_sanity_val_steps=0)
    model = AutoRegressive()
    trainer.fit(model, DataLoader(train_set, batch_size=5, shuffle=True), DataLoader(val_set, batch_size=5))
    probe.record(trainer, model, splits={"train": list(train_set.indices), "val": list(val_set.indices)})
    probe.finish()
