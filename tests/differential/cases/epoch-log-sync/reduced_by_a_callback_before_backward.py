# differential: unsafe
"""A manually optimized training_step logs its loss per epoch (`on_step=False, on_epoch=True`) after
`self.manual_backward(loss)`; a callback (`NanGuard`) sums that loss over the ranks in its
`on_before_backward` hook, which `manual_backward` calls, to stop every rank when any rank's loss is
not finite — through `loss.detach()`, which shares the loss's storage, so the sum lands in `loss`.

`loss` is global once backward has begun, not this rank's own: `detach()` returns a view of the
same memory, not a copy, so an in-place collective on it changes the original tensor, and Lightning
calls every callback's `on_before_backward` from `manual_backward`. DDP004 counts a value handed to
a call that runs callbacks' hooks as one those hooks may change, and leaves the fix to
--unsafe-fixes. (A mean of a value every rank shares gives it back, to rounding; with
reduce_fx="sum" it would double.)
"""
import lightning as L
import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import probe


class NanGuard(L.Callback):
    """Stops every rank when any rank's loss is not finite."""

    def on_before_backward(self, trainer, pl_module, loss):
        flag = loss.detach()
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(flag)
        if not torch.isfinite(flag):
            raise RuntimeError("non-finite loss")


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.net = nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        opt = self.optimizers()
        opt.zero_grad()
        loss = F.mse_loss(self.net(x), y)
        self.manual_backward(loss)
        opt.step()
        self.log("train_loss", loss, on_step=False, on_epoch=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(48, 2, generator=g), torch.randn(48, 1, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=1, callbacks=[NanGuard()], **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x[:16], y[:16]), batch_size=4), DataLoader(TensorDataset(x[16:], y[16:]), batch_size=4))
    probe.record(trainer, model)
    probe.finish()
