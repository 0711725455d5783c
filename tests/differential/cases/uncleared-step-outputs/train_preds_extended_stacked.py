# differential: safe; reference=all
"""training_step extends two private lists (made with list()) with the batch's predictions and
labels, one 0-d tensor per sample; on_train_epoch_end stacks each and logs the epoch's accuracy.

Nothing clears the lists, so epoch 2's train_acc is the accuracy over epochs 1 and 2 together: the
original is wrong in one process too, so the reference (the lists emptied by hand at the end of
the hook) is the yardstick everywhere. Both lists are name-mangled, made empty in __init__, only
extended, and read whole through torch.stack and element-wise operators; they are cleared in one
hook, so they share one decision, safe for both: the rewrite must log each epoch's own accuracy.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        self.__preds = list()
        self.__labels = list()

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.__preds.extend(logits.argmax(dim=1).detach())
        self.__labels.extend(y)
        return nn.functional.cross_entropy(logits, y)

    def on_train_epoch_end(self):
        correct = torch.stack(self.__preds) == torch.stack(self.__labels)
        self.log("train_acc", correct.float().mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.05)


if __name__ == "__main__":
    L.seed_everything(90, verbose=False)
    g = torch.Generator().manual_seed(91)
    x = torch.randn(32, 4, generator=g)
    y = torch.bucketize(x[:, 0] + x[:, 2], torch.tensor([-0.5, 0.5]))
    model = Classifier()
    trainer = L.Trainer(strategy="ddp", max_epochs=3, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
