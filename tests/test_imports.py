"""The import-alias table: names are recognised through imports, not spelling."""

from __future__ import annotations

import ast

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
try:
    import lightning as Lx
except ImportError:
    import pytorch_lightning as Lx
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
        ("Lx.Trainer", None),  # two different meanings
        ("random_split", "torch.utils.data.random_split"),
        ("thing", None),
        ("unknown.Generator", None),
        ("f().x", None),
    ],
)
def test_qualify(expression, qualified):
    table = ImportTable.from_tree(ast.parse(SOURCE))
    assert table.qualify(ast.parse(expression, mode="eval").body) == qualified


def test_a_local_definition_shadows_an_import():
    table = ImportTable.from_tree(ast.parse("from torch import Generator\nclass Generator: pass\n"))
    assert table.qualify(ast.Name("Generator")) is None


def test_a_name_bound_twice_is_not_recognised():
    source = "from torch import Generator\nGenerator = __import__('mylib').Generator\n"
    assert ImportTable.from_tree(ast.parse(source)).qualify(ast.Name("Generator")) is None
    source = "def a():\n    from torch import Generator\ndef b():\n    from mylib import Generator\n"
    assert ImportTable.from_tree(ast.parse(source)).qualify(ast.Name("Generator")) is None


def test_lightning_fallback_imports_are_one_meaning():
    from ddpfix.analysis.lightning import lightning_name

    source = "try:\n    import lightning.pytorch as pl\nexcept ImportError:\n    import pytorch_lightning as pl\n"
    table = ImportTable.from_tree(ast.parse(source))
    assert lightning_name(table, ast.parse("pl.Trainer", mode="eval").body) == "Trainer"


@pytest.mark.parametrize(("source", "qualified"), [
    # A star import after the name's import may bind it again (review helper-42, c13/g08: a DataLoader
    # of the helpers' own was taken for torch's, and DDP001/DDP002 rewrote around it as if it were).
    ("from torch.utils.data import DataLoader\nfrom helpers import *\n", None),
    ("from torch.utils.data import DataLoader\nfrom .helpers import *\n", None),
    ("import torch.utils.data as tud\nfrom helpers import *\n", None),
    ("def f():\n    from torch.utils.data import DataLoader\nfrom helpers import *\n", None),
    # The same module's star import binds nothing else; an import after every star import is the
    # binding the code reads.
    ("from torch.utils.data import DataLoader\nfrom torch.utils.data import *\n", "torch.utils.data.DataLoader"),
    ("from helpers import *\nfrom torch.utils.data import DataLoader\n", "torch.utils.data.DataLoader"),
])
def test_a_star_import_may_bind_a_name_imported_before_it(source, qualified):
    table = ImportTable.from_tree(ast.parse(source))
    name = "tud.DataLoader" if "tud" in source else "DataLoader"
    expected = qualified if "tud" not in source else None
    assert table.qualify(ast.parse(name, mode="eval").body) == expected
