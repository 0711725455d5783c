# differential: reference of default_parameter_generator.py (a CPU generator by hand)
"""A loader helper takes its generator as a parameter whose default is made on the GPU:
``def make_loader(dataset, batch_size=8, generator=torch.Generator(device="cuda"))``.

The default is built once, when ``def`` runs (on this CPU-only build that fails already; on a GPU
the sampler's CPU ``randperm`` fails with it). The helper is called without a generator, so the
default's fixed initial seed decides the shuffle: the reference (a CPU generator as the default)
is the yardstick. The generator is a parameter's default used only as the loader's ``generator``,
and nothing makes CUDA the default device: the fix is safe, and a CPU generator's default seed is
the same, so the order (and every weight) must be the reference's.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


def make_loader(dataset, batch_size=8, generator=torch.Generator()):
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, generator=generator)


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.2)


if __name__ == "__main__":
    L.seed_everything(5, verbose=False)
    g = torch.Generator().manual_seed(2)
    x = torch.randn(40, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    model = Classifier()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, make_loader(TensorDataset(x, y)))
    probe.record(trainer, model)
    probe.finish()
