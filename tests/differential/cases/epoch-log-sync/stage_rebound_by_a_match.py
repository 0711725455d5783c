# differential: unsafe
"""A `_shared_step` helper logs in the branch of its stage, the stage its callers name with a
literal (`"train"` from training_step, `"val"` from validation_step); but a batch may name its own
split, and a `match` capture rebinds the stage (`case {"split": stage}`). The training batches
here carry `"split": "val"`, so the training step logs `val_loss` at every step too.

sync_dist=True would then sync each training step's value as well. A name bound by a `match`
capture (stored as a string, not an `ast.Name`) is a binding like any other: the stage is not the
caller's literal after it, and DDP004 leaves the fix to --unsafe-fixes.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader

import probe

class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)

    def _shared_step(self, batch, stage):
        x, y = batch["x"], batch["y"]
        match batch:
            case {"split": stage}:
                pass
        loss = nn.functional.cross_entropy(self.net(x), y)
        if stage == "val":
            self.log("val_loss", loss, batch_size=4)
        return loss

    def training_step(self, batch, batch_idx):
        return self._shared_step(batch, "train")

    def validation_step(self, batch, batch_idx):
        self._shared_step(batch, "val")

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(3)
    items = [{"x": torch.randn(4, 4, generator=g), "y": torch.randint(0, 3, (4,), generator=g), "split": "val"}
             for _ in range(8)]
    train = DataLoader(items, batch_size=None)
    val = DataLoader([{"x": i["x"], "y": i["y"]} for i in items[:4]], batch_size=None)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, log_every_n_steps=1, **probe.trainer_kwargs())
    trainer.fit(model, train, val)
    probe.record(trainer, model)
    probe.finish()
