# differential: safe; original=fails
"""Class weights for an imbalanced classifier built on a literal device in ``training_step``:
``weight=torch.tensor([1.0, 4.0], device="cuda:0")``, and the validation targets moved with
``y.to("cuda:0")``.

Under DDP rank N's logits are on ``cuda:N`` while ``"cuda:0"`` is GPU 0 on every rank: "Expected all
tensors to be on the same device". The file's Trainer is a literal DDP one with ``devices`` and
``accelerator`` left out (GPUs 0..n-1), so on rank 0 and on one GPU ``self.device`` is the
``cuda:0`` the literals name (the rewrite is the identity) and on rank N the literal was the
failure: ``self.device`` is safe for both. On this CPU-only build the original cannot run at all
("Torch not compiled with CUDA enabled"): the reference (``self.device`` by hand) is the yardstick.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Imbalanced(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

    def training_step(self, batch, batch_idx):
        x, y = batch
        weight = torch.tensor([1.0, 4.0], device="cuda:0")
        loss = nn.functional.cross_entropy(self.net(x), y, weight=weight)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        correct = (self.net(x).argmax(dim=1) == y.to("cuda:0")).float().mean()
        self.log("val_acc", correct, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(4, verbose=False)
    g = torch.Generator().manual_seed(6)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0.8).long()
    model = Imbalanced()
    trainer = L.Trainer(
        strategy="ddp",
        max_epochs=2,
        deterministic=True,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        default_root_dir=probe.out_dir(),
    )
    trainer.fit(
        model,
        DataLoader(TensorDataset(x[:40], y[:40]), batch_size=8, shuffle=True),
        DataLoader(TensorDataset(x[40:], y[40:]), batch_size=4),
    )
    probe.record(trainer, model)
    probe.finish()
