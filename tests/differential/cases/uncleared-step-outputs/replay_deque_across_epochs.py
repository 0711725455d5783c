# differential: unsafe
"""A bounded replay of recent per-sample errors (a deque with maxlen), kept across epochs on purpose.

training_step extends the deque with each sample's error; on_train_epoch_end logs the mean of the
last 40 errors, which span epochs (an epoch has 32 samples). Clearing it at the end of the hook
would make every epoch's replay_error the mean of that epoch's errors alone. A container other
than a list made empty in __init__ makes the fix unsafe.
"""
from collections import deque

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.__replay = deque(maxlen=40)

    def training_step(self, batch, batch_idx):
        x, y = batch
        errors = (self.net(x) - y).pow(2).squeeze(1)
        self.__replay.extend(errors.detach())
        return errors.mean()

    def on_train_epoch_end(self):
        self.log("replay_error", torch.stack(list(self.__replay)).mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(98, verbose=False)
    g = torch.Generator().manual_seed(99)
    x = torch.randn(32, 4, generator=g)
    model = Model()
    trainer = L.Trainer(strategy="ddp", max_epochs=3, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, x[:, :2].sum(dim=1, keepdim=True)), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
