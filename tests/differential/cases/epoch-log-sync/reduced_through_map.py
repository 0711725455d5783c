# differential: unsafe
"""validation_step computes its loss and mean absolute error, sums both over the ranks in place by
mapping the collective over a list of them (`list(map(dist.all_reduce, [loss, mae]))`), and logs
both (means over the epoch).

Both values are global once the map has run, not this rank's own: a function handed to `map` as a
value is called with each item, and a list holds its items themselves, not copies, so
`all_reduce` changes `loss` and `mae` in place. DDP004 counts any unknown call handed something that
reaches a value (here a list holding it) as one that may change it in place, and leaves both fixes
to --unsafe-fixes, naming the call. (A mean of a value every rank shares gives it back, to
rounding; with reduce_fx="sum" it would double.)
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
        mae = F.l1_loss(self.net(x), y)
        if dist.is_available() and dist.is_initialized():
            list(map(dist.all_reduce, [loss, mae]))
        self.log("val_loss", loss)
        self.log("val_mae", mae)

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
