# differential: unchanged
"""Inside `with trainer.init_module():` an encoder is built, a helper of this file writes the
vocabulary file whose path it is given, and the tagger around the encoder reads that path.

write_vocab is a call ddpfix does not know, so it may change what its arguments hold, and the
tagger reads vocab_file after it: moving the call out of the block after it (where it would run
after the tagger's construction: FileNotFoundError) would change what vocab_file is when the
tagger reads it. ddpfix reports the block and offers no fix, not even with --unsafe-fixes.
"""
import json
import os

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


def write_vocab(path, tokens):
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump({token: i for i, token in enumerate(tokens)}, handle)
    os.replace(path + ".tmp", path)


class Tagger(L.LightningModule):
    def __init__(self, encoder, vocab_file):
        super().__init__()
        with open(vocab_file, encoding="utf-8") as handle:
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
    vocab_file = f"vocab-{os.getpid()}.json"
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    with trainer.init_module():
        encoder = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
        write_vocab(vocab_file, ["<pad>", "a", "b", "c", "d"])
        model = Tagger(encoder, vocab_file)
    trainer.fit(model, DataLoader(TensorDataset(ids, y), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
