# differential: unsafe
"""Validation by the clock (Lightning 2.6: a duration as `val_check_interval`): each rank validates
when its own clock says, at a step of its own, and here rank 0 alone also samples after each
validation, so the ranks drift apart. Unsynced, the validation log runs no collective and the run
finishes; `sync_dist=True` makes rank 1's validation wait for rank 0, which is still training: a
hang (review round 15, proven under gloo: the original finished in 20-27 s, the rewrite hung).
"""
from datetime import timedelta

import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe

VOCAB = 32


class CharLM(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.head = nn.Linear(16, VOCAB)

    def training_step(self, batch, batch_idx):
        (tokens,) = batch
        logits = self.head(self.embed(tokens[:, :-1]))
        return F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].reshape(-1))

    def validation_step(self, batch, batch_idx):
        (tokens,) = batch
        logits = self.head(self.embed(tokens[:, :-1]))
        loss = F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].reshape(-1))
        self.log("val_loss", loss)

    def on_validation_epoch_end(self):
        if self.trainer.is_global_zero:
            with torch.no_grad():  # a sample of text, on rank 0 alone: about half a second
                tokens = torch.zeros(64, 1, dtype=torch.long)
                for _ in range(300):
                    tokens = torch.multinomial(F.softmax(self.head(self.embed(tokens[:, -1:]))[:, -1], -1), 1)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=3e-3)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    data = torch.randint(0, VOCAB, (3000, 17), generator=torch.Generator().manual_seed(0))
    model = CharLM()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, val_check_interval=timedelta(seconds=1), **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(data[:2400]), batch_size=4, shuffle=True),
                DataLoader(TensorDataset(data[2400:2480]), batch_size=8))
    probe.record(trainer, model)
    probe.finish()
