# rehearse: crash
# rule: DDP007
"""A plain tensor attribute handed to a collective.

`self.prior` is an ordinary attribute, not a registered buffer, so
`model.to(device)` leaves it on the CPU while the parameters go to
cuda:<rank>. On GPUs the process group is NCCL, which only takes CUDA
tensors: `self.trainer.strategy.reduce(self.prior)` hands it to an all_reduce
as it is and fails with "RuntimeError: No backend type associated with device
type cpu" on every rank at the end of the first validation epoch (unlike
`self.all_gather`, which moves the data to the rank's device first). Under gloo
(CPU rehearsal) the same call succeeds, so the rehearsal has to notice that a
CPU tensor entered the collective while the module lives on the accelerator. (ddpfix's DDP007 points at the
`self.prior = ...` line in __init__; register_buffer fixes it.)
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(10, 1)
        self.prior = torch.randn(10)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x + self.prior.to(x.device)), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.layer(x), y), sync_dist=True)

    def on_validation_epoch_end(self):
        # Check that every rank still holds the same prior.
        mean = self.trainer.strategy.reduce(self.prior, reduce_op="mean")  # rehearse: here
        if not torch.allclose(mean, self.prior):
            raise RuntimeError("ranks disagree on the prior")

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(3)
    train = TensorDataset(torch.randn(32, 10), torch.randn(32, 1))
    val = TensorDataset(torch.randn(16, 10), torch.randn(16, 1))
    trainer = L.Trainer(
        accelerator="gpu",
        devices=4,
        strategy="ddp",
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer.fit(Model(), DataLoader(train, batch_size=4), DataLoader(val, batch_size=4))
