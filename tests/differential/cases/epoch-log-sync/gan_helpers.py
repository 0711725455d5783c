# differential: safe; project=gan_parts
"""A GAN's losses logged by helpers that validation_step calls one after the other with the same
batch tensor (`x, _ = batch`), the noise sized by literals, the networks built by
factory methods from another file's classes (whose sizes come from `np.prod`). The logs say
nothing about sync_dist.

Under DDP each rank logs its own shard's epoch mean. DDP004 proves the values per rank: the first
helper changes nothing of `x` that the second then receives, and NumPy at build time makes
sizes. (A size read from `self.hparams` is not taken: what the constructor was handed is not read,
and an object's `__index__` is code.)
sync_dist=True is added by default. The reference
gathers every batch's values by hand and logs their mean.
"""
import lightning as L
import torch
from gan_components import Discriminator, Generator
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import probe


class GAN(L.LightningModule):
    def __init__(self, latent_dim: int = 6):
        super().__init__()
        self.save_hyperparameters()
        self.img_shape = (4,)
        self.generator = self.init_generator(self.img_shape)
        self.discriminator = self.init_discriminator(self.img_shape)

    def init_generator(self, img_shape):
        return Generator(self.hparams.latent_dim, img_shape)

    def init_discriminator(self, img_shape):
        return Discriminator(img_shape)

    def generator_loss(self, x):
        z = torch.randn(x.shape[0], 6, device=self.device)
        y = torch.ones(x.size(0), 1, device=self.device)
        return F.binary_cross_entropy(self.discriminator(self.generator(z)), y)

    def discriminator_loss(self, x):
        real = F.binary_cross_entropy(self.discriminator(x), torch.ones(x.size(0), 1, device=self.device))
        z = torch.randn(x.size(0), 6, device=self.device)
        fake = F.binary_cross_entropy(self.discriminator(self.generator(z)), torch.zeros(x.size(0), 1, device=self.device))
        return real + fake

    def training_step(self, batch, batch_idx):
        x, _ = batch
        return self.generator_loss(x) + self.discriminator_loss(x)

    def validation_step(self, batch, batch_idx):
        x, _ = batch
        self.generator_step(x)
        self.discriminator_step(x)

    def generator_step(self, x):
        g_loss = self.generator_loss(x)
        self.log("val_g_loss", g_loss, prog_bar=True)
        return g_loss

    def discriminator_step(self, x):
        d_loss = self.discriminator_loss(x)
        self.log("val_d_loss", d_loss)
        return d_loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loaders():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(48, 4, generator=g).tanh()
    y = torch.zeros(48)
    train = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=4)
    return train, val


if __name__ == "__main__":
    L.seed_everything(0, verbose=False)
    model = GAN()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, *loaders())
    probe.record(trainer, model)
    probe.finish()
