"""The import-alias table: names are recognised through imports, not spelling."""

from __future__ import annotations

import libcst as cst
import pytest

from ddpfix.imports import ImportTable

SOURCE = """
import torch as th
import torch.utils.data
import torch.utils.data as tud
from torch import Generator as Gen
from torch.utils.data import DataLoader
import lightning as L
import lightning.pytorch as pl
from .local import thing
try:
    from pytorch_lightning import Trainer
except ImportError:
    pass
def f():
    from torch.utils.data import random_split
"""


@pytest.mark.parametrize(
    "expression, qualified",
    [
        ("th.Generator", "torch.Generator"),
        ("torch.utils.data.DataLoader", "torch.utils.data.DataLoader"),
        ("tud.RandomSampler", "torch.utils.data.RandomSampler"),
        ("Gen", "torch.Generator"),
        ("DataLoader", "torch.utils.data.DataLoader"),
        ("L.Trainer", "lightning.Trainer"),
        ("pl.LightningModule", "lightning.pytorch.LightningModule"),
        ("Trainer", "pytorch_lightning.Trainer"),
        ("random_split", "torch.utils.data.random_split"),
        ("thing", None),
        ("unknown.Generator", None),
        ("f().x", None),
    ],
)
def test_qualify(expression, qualified):
    table = ImportTable.from_module(cst.parse_module(SOURCE))
    assert table.qualify(cst.parse_expression(expression)) == qualified


def test_a_local_definition_shadows_an_import():
    table = ImportTable.from_module(cst.parse_module("from torch import Generator\nclass Generator: pass\n"))
    assert table.qualify(cst.Name("Generator")) is None
