# differential: unsafe
"""An encoder, an unseeded random_split, then the classifier around the encoder, all inside
`with trainer.init_module():` after seed_everything.

The split draws from the global random state, and so does the classifier's construction (its
layers' initial weights). Moving the split out of the block puts it after the classifier: the
classifier would draw the numbers the split drew, and the split the ones after them: another
split (recorded) and other initial weights. A reorder past model construction is unsafe.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

import probe


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 6)

    def forward(self, x):
        return torch.tanh(self.layer(x))


class Classifier(L.LightningModule):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(6, 2)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.head(self.encoder(x)), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(120, verbose=False)
    g = torch.Generator().manual_seed(121)
    x = torch.randn(48, 4, generator=g)
    dataset = TensorDataset(x, (x[:, 0] > 0).long())
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    with trainer.init_module():
        encoder = Encoder()
        train_set, val_set = random_split(dataset, [32, 16])
        model = Classifier(encoder)
    trainer.fit(model, DataLoader(train_set, batch_size=8, shuffle=True))
    probe.record(trainer, model, splits={"train": train_set.indices, "val": val_set.indices})
    probe.finish()
