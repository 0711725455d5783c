# differential: safe; original=fails
"""A script builds its sampler with a generator bound by a walrus and seeds it afterwards:
``RandomSampler(train_set, generator=(g := torch.Generator(device=torch.device("cuda"))))``, then
``g.manual_seed(17)`` before training.

The sampler draws on the CPU, where a CUDA generator fails (on this CPU-only build it cannot even be
made): the reference (a CPU generator) is the yardstick. On a GPU under DDP the original runs, since
Lightning replaces a ``RandomSampler`` by a ``DistributedSampler`` and drops its generator; it fails on
one device without DDP. The rewrite computes the same in both (bench/gpu-check.md). ``g`` is a local name of ``main()``, used
only for seeding (a statement) and as the sampler's generator, and nothing makes CUDA the default
device: the fix is safe. The seed set after the sampler was built still decides the order.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, RandomSampler, TensorDataset

import probe


class Scorer(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(6, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.binary_cross_entropy_with_logits(self.net(x), y)
        self.log("train_bce", loss, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def main():
    L.seed_everything(9, verbose=False)
    data_gen = torch.Generator().manual_seed(1)
    x = torch.randn(36, 6, generator=data_gen)
    train_set = TensorDataset(x, (x.mean(dim=1, keepdim=True) > 0).float())
    sampler = RandomSampler(train_set, generator=(g := torch.Generator(device=torch.device("cuda"))))
    g.manual_seed(17)
    model = Scorer()
    trainer = L.Trainer(strategy="ddp", max_epochs=2, **probe.trainer_kwargs())
    trainer.fit(model, DataLoader(train_set, batch_size=6, sampler=sampler))
    probe.record(trainer, model)


if __name__ == "__main__":
    main()
    probe.finish()
