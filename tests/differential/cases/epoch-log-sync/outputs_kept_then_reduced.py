# differential: unsafe
"""validation_step returns its loss and also keeps it on the module (`self.last_loss = loss`);
on_validation_batch_end averages the kept loss over the ranks in place (`dist.all_reduce`, then
`/=` the world size) and logs `outputs`, what the step returned (a mean over the epoch).

`outputs` is global once the kept loss is reduced, not this rank's own: Lightning hands a batch-end
hook the very object its step returned, not a copy, and an attribute assignment binds the attribute
to that same object, so reducing `self.last_loss` in place changes `outputs`. DDP004 counts a step's
outputs as this rank's own only when the step keeps nothing it returns on the module, and leaves the
fix to --unsafe-fixes. (A mean of a value every rank shares gives it back, to rounding; with
reduce_fx="sum" it would double.)
"""
import lightning as L
import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y).detach()
        self.last_loss = loss
        return loss

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(self.last_loss)
            self.last_loss /= dist.get_world_size()
        self.log("val_loss", outputs)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(48, 2, generator=g), torch.randn(48, 1, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:16], y[:16]), batch_size=4), DataLoader(TensorDataset(x[16:], y[16:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
