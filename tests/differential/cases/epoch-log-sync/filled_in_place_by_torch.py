# differential: unsafe
"""validation_step computes its loss, averages a copy of it over the ranks (`dist.all_reduce`),
writes the average back into the loss with torch's functional in-place form
(`torch.fill_(loss, mean)`), and logs `loss` (a mean over the epoch).

`loss` is global once filled, not this rank's own: `torch.fill_(t, v)` is `t.fill_(v)`, a call that
writes into the tensor it is handed in place, whatever the value written derives from. DDP004
counts a call it does not know to keep its arguments as they are as one that may change them in
place, and leaves the fix to --unsafe-fixes, naming the call. (A mean of a value every rank shares
gives it back, to rounding; with reduce_fx="sum" it would double.)
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
        loss = F.mse_loss(self.net(x), y)
        if dist.is_available() and dist.is_initialized():
            mean = loss.clone()
            dist.all_reduce(mean)
            torch.fill_(loss, mean / dist.get_world_size())
        self.log("val_loss", loss)

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
