# differential: unchanged
"""Inside `with trainer.init_module():` the model is built, a dataset of this file reads the
model's input width from it, and a wrapper model is built from the dataset's class count.

The dataset must come after the model (it reads model.in_features) and before the wrapper (which
reads dataset.num_classes): it can neither leave before the block nor after it without changing
what a name holds. ddpfix reports the block and offers no fix, not even with --unsafe-fixes.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

import probe


class Columns(Dataset):
    def __init__(self, table, width):
        self.x = table[:, :width]
        self.y = table[:, -1].long()
        self.num_classes = 2

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.in_features = 3
        self.layer = nn.Linear(3, 5)

    def forward(self, x):
        return torch.relu(self.layer(x))


class Wrapper(L.LightningModule):
    def __init__(self, encoder, num_classes):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(5, num_classes)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.head(self.encoder(x)), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(130, verbose=False)
    g = torch.Generator().manual_seed(131)
    table = torch.randn(32, 5, generator=g)
    table[:, -1] = (table[:, 0] > table[:, 1]).float()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    with trainer.init_module():
        encoder = Encoder()
        data = Columns(table, width=encoder.in_features)
        model = Wrapper(encoder, num_classes=data.num_classes)
    trainer.fit(model, DataLoader(data, batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
