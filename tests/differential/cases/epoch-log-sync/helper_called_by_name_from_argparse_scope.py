# differential: unsafe; project=argparse_scope_parts
"""validation_step hands its mean absolute error to a helper that logs it (`_report_mae`, a mean
over the epoch). The project's summary callback (summary.py beside the script, which also parses
the script's options into a module-level `args`) runs on the main process only at the epoch's end
and calls every `_report_*` method of the module's class by name
(`for name, fn in vars(args).items()`, where `args` is its parameter, handed `type(pl_module)`),
so `_report_mae` logs a baseline there too, on rank 0 alone.

Without sync_dist nothing is collective and every rank finishes. With sync_dist=True each call of
`_report_mae` syncs: rank 0's extra call waits for a partner the other rank never sends, and the
run fails. `vars(obj)` is the object's own namespace, not a copy, and of a class it holds the
methods (a parameter named `args` is whatever the caller hands it, not the parsed options), so that
loop calls methods by a name made at run time. DDP004 counts `vars(...)` in any file of the program
as a namespace that code may change (the functions the helper's value comes from may be other code
then), and leaves the fix to --unsafe-fixes, naming that line.
"""
import lightning as L
import torch
from summary import MainProcessSummary, args
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
        self._report_mae(F.l1_loss(self.net(x), y))

    def _report_mae(self, mae):
        self.log("val_mae", mae)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(48, 2, generator=g), torch.randn(48, 1, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=args.epochs, callbacks=[MainProcessSummary()], **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:16], y[:16]), batch_size=4), DataLoader(TensorDataset(x[16:], y[16:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
