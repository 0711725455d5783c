# differential: safe
"""The logs sit in helper methods: validation_step hands its batch to `_evaluate`, which computes the
loss and accuracy and hands them to `_report(loss, accuracy, verbose=True)`, which logs them (the
accuracy under `if verbose:`, a flag every caller passes as a constant); training_step hands its loss
to `_log_train`, which logs it per epoch only. Nothing else calls the helpers; the logs say nothing
about sync_dist. The network is built by a factory method (`self.net = self.build_net(8)`) from a list of
layers (`nn.Sequential(*layers)`).

Under DDP each rank logs its own shard's epoch mean. DDP004 follows each helper's callers: every call
is a statement of a hook Lightning calls on every rank (or of such a helper), reached on every call,
with that rank's own values, and the `if` is decided alike on every rank. So sync_dist=True is added
by default. The reference gathers every validation batch's values by hand and syncs the training
loss by hand.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = self.build_net(8)

    def build_net(self, width):
        layers = [nn.Linear(4, width)]
        layers.append(nn.ReLU())
        layers.append(nn.Linear(width, 3))
        return nn.Sequential(*layers)

    def _evaluate(self, batch):
        x, y = batch
        logits = self.net(x)
        loss = nn.functional.cross_entropy(logits, y)
        accuracy = (logits.argmax(dim=1) == y).float().mean()
        self._report(loss, accuracy, verbose=True)
        return loss

    def _report(self, loss, accuracy, verbose=False):
        self.log("val_loss", loss)
        if verbose:
            self.log("val_acc", accuracy, prog_bar=True)

    def _log_train(self, loss):
        self.log("train_loss_epoch_mean", loss, on_step=False, on_epoch=True)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self._log_train(loss)
        return loss

    def validation_step(self, batch, batch_idx):
        self._evaluate(batch)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def loaders():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = Classifier()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
