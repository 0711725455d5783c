# differential: unchanged
"""Inside `with trainer.init_module():` an encoder is built, a helper of this file writes the
vocabulary file, and the tagger around the encoder reads that file in its constructor.

write_vocab is a call with effects ddpfix does not know (it writes a file). Moved out of the block
after it, it would run after the tagger's construction, which then reads a file that does not
exist yet (FileNotFoundError); moved before it, it jumps over the encoder's construction. A call
with unknown effects changing its order is unsafe.
"""
import json
import os

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


# Each run writes its own vocabulary (a fresh folder per run: probe's output folder).
VOCAB_FILE = os.path.join(probe.out_dir() or ".", "vocab.json")


def write_vocab(tokens):
    with open(VOCAB_FILE + f".{os.getpid()}", "w", encoding="utf-8") as handle:
        json.dump({token: i for i, token in enumerate(tokens)}, handle)
    os.replace(VOCAB_FILE + f".{os.getpid()}", VOCAB_FILE)


class Tagger(L.LightningModule):
    def __init__(self, encoder):
        super().__init__()
        with open(VOCAB_FILE, encoding="utf-8") as handle:
            self.vocab = json.load(handle)
        self.embed = nn.Embedding(len(self.vocab), 4)
        self.encoder = encoder

    def training_step(self, batch, batch_idx):
        ids, y = batch
        loss = nn.functional.mse_loss(self.encoder(self.embed(ids)).squeeze(1), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(124, verbose=False)
    g = torch.Generator().manual_seed(125)
    ids = torch.randint(0, 5, (32,), generator=g)
    y = ids.float() / 4
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    with trainer.init_module():
        encoder = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
        write_vocab(["<pad>", "a", "b", "c", "d"])
        model = Tagger(encoder)
    trainer.fit(model, DataLoader(TensorDataset(ids, y), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
