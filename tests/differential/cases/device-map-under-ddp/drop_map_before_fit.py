# differential: unsafe; stubs=stubs
"""The script loads the backbone itself, with ``device_map="cuda:0"``, hands it to the
LightningModule through plain assignments and calls ``trainer.fit`` in the same block.

Under the literal DDP Trainer the launcher re-runs the script per rank: every copy is pinned to
GPU 0 while Lightning moves rank N's module to ``cuda:N``. The load is the one trained (it flows
into fit's arguments), in full precision: dropping ``device_map`` lets Lightning place it.

It was a safe case until review helper-41 showed why dropping the map is not proven harmless:
the model's other uses (a generate before fit, another file that builds the class for
inference) are not read, and dropping ``device_map`` also turns off transformers' low-memory
loading (each rank builds the whole model in host memory; before 4.36 the missing weights are
drawn in another order). The fix is offered for review only (unsafe).

Runs against a stand-in for ``transformers`` (``stubs/``, see its README): this machine has no
transformers, and without CUDA the original's load fails (as the real library's does).
"""
import tempfile

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from transformers import PretrainedConfig, PreTrainedModel

import probe


class TinyConfig(PretrainedConfig):
    model_type = "tiny-regressor"

    def __init__(self, width=4, hidden=8, **kwargs):
        super().__init__(**kwargs)
        self.width, self.hidden = width, hidden


class TinyRegressor(PreTrainedModel):
    config_class = TinyConfig

    def __init__(self, config):
        super().__init__(config)
        self.body = nn.Linear(config.width, config.hidden)
        self.head = nn.Linear(config.hidden, 1)
        self.post_init()

    def forward(self, x):
        return self.head(torch.tanh(self.body(x)))


def pretrained_checkpoint():
    """A small "pretrained" model saved to a folder of this process's own (same weights on every rank)."""
    model = TinyRegressor(TinyConfig())
    g = torch.Generator().manual_seed(100)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(0.3 * torch.randn(parameter.shape, generator=g))
    folder = tempfile.mkdtemp(prefix="tiny-regressor-")
    model.save_pretrained(folder)
    return folder


class FineTune(L.LightningModule):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.l1_loss(self.backbone(x), y)
        self.log("train_l1", loss, on_step=True, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.5)


if __name__ == "__main__":
    L.seed_everything(7, verbose=False)
    g = torch.Generator().manual_seed(2)
    x = torch.randn(40, 4, generator=g)
    y = torch.sin(x).sum(dim=1, keepdim=True)
    backbone = TinyRegressor.from_pretrained(pretrained_checkpoint(), device_map="cuda:0")
    model = FineTune(backbone)
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
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
