"""The device rules recognise Lightning and torch through every import spelling."""

from __future__ import annotations

import pytest

from ddpfix.sources import fix_source
from ddpfix.rules.hardcoded_device import HardcodedDevice
from ddpfix.rules.tensor_attribute import TensorAttribute

ALL = {"unsafe_fixes": True}  # the fix machinery is tested with every fix, safe or not

SPELLINGS = [
    ("import lightning as L", "L.LightningModule"),
    ("import lightning.pytorch as pl", "pl.LightningModule"),
    ("import pytorch_lightning as pl", "pl.LightningModule"),
    ("import lightning", "lightning.LightningModule"),
    ("from lightning.pytorch import LightningModule", "LightningModule"),
    ("from pytorch_lightning.core.module import LightningModule", "LightningModule"),
]
TORCH = [("import torch", "torch"), ("import torch as th", "th")]


@pytest.mark.parametrize("import_line, base", SPELLINGS)
@pytest.mark.parametrize("torch_import, torch_name", TORCH)
def test_spellings(import_line, base, torch_import, torch_name):
    source = f"""{import_line}
{torch_import}


class Model({base}):
    def __init__(self):
        super().__init__()
        self.mask = {torch_name}.ones(4)

    def training_step(self, batch, batch_idx):
        return batch.cuda(0) + {torch_name}.zeros(4)
""".encode()
    result = fix_source("m.py", source, [HardcodedDevice, TensorAttribute], options=ALL)
    text = result.output.decode()
    assert "batch.to(self.device)" in text
    assert f"{torch_name}.zeros(4, device=self.device)" in text
    assert f'self.register_buffer("mask", {torch_name}.ones(4), persistent=False)' in text


@pytest.mark.parametrize(
    "base",
    ["nn.Module", "Trainer", "object", "MyLightningModule"],
)
def test_not_lightning_modules(base):
    source = f"""from torch import nn
import torch
from lightning import Trainer


class Model({base}):
    def __init__(self):
        super().__init__()
        self.mask = torch.ones(4)

    def training_step(self, batch, batch_idx):
        return batch.cuda()
""".encode()
    result = fix_source("m.py", source, [HardcodedDevice, TensorAttribute], options=ALL)
    assert result.fixed is None and not result.findings
