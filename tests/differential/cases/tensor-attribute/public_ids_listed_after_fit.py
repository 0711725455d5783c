# differential: unsafe
"""A public int64 tensor of class ids, turned into a list by the training script after fit.

Inside the class the attribute is a constant, but it is public: ddpfix's facts do not follow
attributes across files, and here the script itself reassigns it (model.class_ids =
model.class_ids.tolist(), to write a JSON report). As a buffer that assignment raises TypeError
("cannot assign 'list' as buffer 'class_ids'"). The fix is unsafe for a public name.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)
        self.class_ids = torch.tensor([0, 1, 2])

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def predicted_ids(self, x):
        return self.class_ids[self.net(x).argmax(dim=1)]

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(74, verbose=False)
    g = torch.Generator().manual_seed(75)
    x = torch.randn(32, 4, generator=g)
    y = torch.bucketize(x[:, 1], torch.tensor([-0.4, 0.4]))
    model = Classifier()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True))
    model.class_ids = model.class_ids.tolist()  # for the JSON report
    probe.record(trainer, model, class_ids=model.class_ids)
    probe.finish()
