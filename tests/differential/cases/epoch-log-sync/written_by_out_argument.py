# differential: unsafe
"""validation_step gathers its loss from every rank (`self.all_gather(loss)`), writes their mean into
a tensor it made beforehand (`torch.mean(gathered, dim=0, out=total)`), and logs that tensor (a mean
over the epoch).

`total` is global once the mean is written, not this rank's own zeros: a torch function's `out=`
argument is the tensor it writes its result into, in place. DDP004 counts any call with `out=` as
one that may change what it is handed there, and leaves the fix to --unsafe-fixes, naming the call.
(A mean of a value every rank shares gives it back, to rounding; with reduce_fx="sum" it would
double.)
"""
import lightning as L
import torch
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
        total = torch.zeros((), device=self.device)
        gathered = self.all_gather(loss)
        torch.mean(gathered, dim=0, out=total)
        self.log("val_loss", total)

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
