# differential: unsafe
"""validation_step makes a zero tensor, hands it with the mean of its loss gathered from every rank
to a helper that adds the second argument into the first (`_accumulate(acc, value)`: `acc += value`),
and logs the zero tensor it made (a mean over the epoch).

`total` is global once the helper has run, not this rank's own zeros: `+=` on a tensor adds in
place, so the caller's tensor holds what the helper added, here a mean every rank shares. DDP004
follows the helper, sees that it stores another argument into its parameter in place (a value not
known to be this rank's own), and leaves the fix to --unsafe-fixes, naming the call. (A mean of a
value every rank shares gives it back, to rounding; with reduce_fx="sum" it would double.)
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

    def _accumulate(self, acc, value):
        acc += value

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        total = torch.zeros((), device=self.device)
        self._accumulate(total, self.all_gather(loss).mean())
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
