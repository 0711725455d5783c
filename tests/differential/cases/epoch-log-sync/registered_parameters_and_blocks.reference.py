# differential: reference of registered_parameters_and_blocks.py (gathers the validation values by hand)
"""The classifier holds an encoder of this file: a class token and positional embeddings made by
`torch.randn` as `nn.Parameter`s in its `__init__` (repeated per batch with `.repeat`), and a
stack of blocks built by a generator expression (`nn.Sequential(*(Block(d) for _ in range(n)))`).
A helper logs the loss and accuracy under keys built from the stage its callers name; the logs say
nothing about sync_dist.

Under DDP each rank logs its own shard's validation mean. A parameter the module registers moves
with it to the rank's device, and its tensor methods make new tensors; each block of the stack is
built by the same known call: the encoder is read whole, DDP004 proves the values per rank and
adds `sync_dist=mode != "train"` by default. The reference gathers every validation batch's
values by hand and logs their mean.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return x + torch.relu(self.mix(self.norm(x)))


class Encoder(nn.Module):
    def __init__(self, dim=8, depth=2):
        super().__init__()
        self.embed = nn.Linear(2, dim)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.pos_embedding = nn.Parameter(torch.randn(1, 3, dim) * 0.1)
        self.blocks = nn.Sequential(*(Block(dim) for _ in range(depth)))
        self.head = nn.Linear(dim, 3)

    def forward(self, x):
        tokens = self.embed(x.view(x.size(0), 2, 2))
        cls_token = self.cls_token.repeat(x.size(0), 1, 1)
        tokens = torch.cat([cls_token, tokens], dim=1) + self.pos_embedding
        return self.head(self.blocks(tokens)[:, 0])


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = Encoder()
        self.val_losses, self.val_accs = [], []

    def _calculate_loss(self, batch, mode="train"):
        x, y = batch
        preds = self.model(x)
        loss = nn.functional.cross_entropy(preds, y)
        acc = (preds.argmax(dim=-1) == y).float().mean()
        if mode == "train":
            self.log(f"{mode}_loss", loss)
            self.log(f"{mode}_acc", acc)
        else:
            self.val_losses.append(loss.detach())
            self.val_accs.append(acc)
        return loss

    def training_step(self, batch, batch_idx):
        return self._calculate_loss(batch, mode="train")

    def validation_step(self, batch, batch_idx):
        self._calculate_loss(batch, mode="val")

    def on_validation_epoch_end(self):
        # every rank's batch means (equal batches on every rank), averaged: the whole epoch's mean
        self.log("val_loss", self.all_gather(torch.stack(self.val_losses)).mean())
        self.log("val_acc", self.all_gather(torch.stack(self.val_accs)).mean())
        self.val_losses.clear()
        self.val_accs.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def loaders():
    g = torch.Generator().manual_seed(13)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Classifier()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, log_every_n_steps=1, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
