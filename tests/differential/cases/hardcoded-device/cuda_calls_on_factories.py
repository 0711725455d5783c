# differential: safe; original=fails
"""A label-smoothing target and a position index built on the CPU and moved to GPU 0:
``torch.full((n, k), eps).cuda(0)`` and ``torch.arange(k).cuda(device=0)`` in ``training_step``.

``.cuda(0)`` is GPU 0 on every rank (an index-less ``.cuda()`` would be the rank's own GPU, which
Trainer.fit set: not reported). Both receivers are tensor factories' results, so
``.to(self.device)`` is ``.cuda()``'s twin, and the Trainer is a literal DDP one with ``devices``
left out (GPUs 0..n-1): on rank 0 and on one GPU the rewrite is the identity, on rank N it removes
the failure. On this CPU-only build ``.cuda(0)`` cannot run ("Torch not compiled with CUDA
enabled"): the reference (``.to(self.device)`` by hand) is the yardstick.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class SmoothClassifier(L.LightningModule):
    def __init__(self, classes=3, eps=0.1):
        super().__init__()
        self.classes, self.eps = classes, eps
        self.net = nn.Linear(6, classes)

    def training_step(self, batch, batch_idx):
        x, y = batch
        smooth = torch.full((x.shape[0], self.classes), self.eps / self.classes).cuda(0)
        index = torch.arange(self.classes).cuda(device=0)
        target = smooth + (index == y.unsqueeze(1)).float() * (1 - self.eps)
        loss = nn.functional.cross_entropy(self.net(x), target)
        self.log("train_loss", loss, on_step=True, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.02)


if __name__ == "__main__":
    L.seed_everything(8, verbose=False)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(36, 6, generator=g)
    y = x[:, :3].argmax(dim=1)
    model = SmoothClassifier()
    trainer = L.Trainer(
        strategy="ddp",
        max_epochs=2,
        deterministic=True,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=probe.out_dir(),
    )
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=6, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
