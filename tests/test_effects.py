"""Which reads ``analysis/effects.py`` knows run no code that builds tensors (DDP001 moves statements
out of ``init_module()`` only where they are known): an attribute, an item, ``len`` or iteration of
an object runs code of its class, known only where the object's class is."""

from __future__ import annotations

import ast
import textwrap

import pytest

from ddpfix.analysis.effects import Effects
from ddpfix.analysis.lightning import lightning_name
from ddpfix.imports import ImportTable

DATASET = """
import torch
from torch.utils.data import Dataset


class Points(Dataset):
    def __init__(self, images, labels):
        self.images = images
        self.labels = labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        return self.images[index], self.labels[index]
"""


def _unknown(code: str) -> str | None:
    """What ``Effects.unknown_in`` finds not known in the value of the module's last statement."""
    tree = ast.parse(textwrap.dedent(code))
    effects = Effects.of(tree, ImportTable.from_tree(tree), lightning_name)
    found = effects.unknown_in(tree.body[-1].value)
    return None if found is None else ast.unparse(found)


@pytest.mark.parametrize(("code", "unknown"), [
    # Python values, listed libraries' modules and objects, an argparse namespace: known.
    ("sizes = [1, 2]\nsizes[0]", None),
    ("import torch\ntorch.float64", None),
    ("import os\nos.environ['HOME']", None),
    ("import torch\nx = torch.randn(4, 3)\ny = (x[:, 0] > 0).long()\ny[:2]", None),
    ("import argparse\nparser = argparse.ArgumentParser()\nargs = parser.parse_args()\nargs.batch_size", None),
    # An object of a class not read here: another file's, a parameter, a function's result.
    ("from data import ImbalancedData\ndm = ImbalancedData()\ndm.class_weights", "dm.class_weights"),
    ("from data import Windows\nds = Windows()\nds[0]", "ds[0]"),
    ("def fit(dm):\n    return dm.class_weights\ndm.class_weights", "dm.class_weights"),
    ("from data import load\nsplits = load()\nsplits['train']", "splits['train']"),
    ("import torch\nstate = torch.load('x.pt')\nstate.weights", "state.weights"),
    ("import argparse\nparser = make_parser()\nargs = parser.parse_args()\nargs.batch_size", "args.batch_size"),
    # A library object that may hold the user's objects: a defaultdict calls its factory on a
    # missing key, a ModuleList holds the user's modules, a DataModule built by Lightning its datasets.
    ("from collections import defaultdict\nfrom data import Windows\nsplits = defaultdict(Windows)\nsplits['train']",
     "splits['train']"),
    ("import torch\nfrom model import Block\nblocks = torch.nn.ModuleList([Block()])\nblocks[0]", "blocks[0]"),
    ("import lightning as L\nfrom data import ds\ndm = L.LightningDataModule.from_datasets(ds)\ndm.train_dataset",
     "dm.train_dataset"),
    # Handed to a loader that asks its length: the object's ``__len__`` runs (review helper-43, c14).
    ("from torch.utils.data import DataLoader\nfrom data import WindowData\ndata = WindowData()\n"
     "DataLoader(data.train_set, shuffle=True)", "data.train_set"),
    ("from torch.utils.data import DataLoader\nfrom data import load\nDataLoader(load(), shuffle=True)",
     "load()"),
    ("from torch.utils.data import DataLoader\nimport torch\nx = torch.arange(8)\nDataLoader(x, shuffle=True)", None),
])
def test_reads_known_only_where_the_class_is(code, unknown):
    assert _unknown(code) == unknown


@pytest.mark.parametrize(("made", "known"), [
    ("images = torch.randint(0, 255, (8, 4))\nlabels = torch.randint(0, 3, (8,))", True),
    ("from data import load\nimages, labels = load(), load()", False),
])
def test_a_data_class_of_the_file_is_known_when_built_from_known_objects(made, known):
    """``len(ds)`` of a data class of the file runs its ``__len__``, ``len(self.labels)``: the
    ``__len__`` of what its constructor was handed. The module's ``images`` is not the
    ``__init__``'s parameter of that name (bindings read by Python's scoping)."""
    code = DATASET + made + "\nds = Points(images, labels)\nlen(ds)\n"
    assert (_unknown(code) is None) is known


def test_a_name_some_function_declares_global_may_be_any_of_its_bindings():
    code = (DATASET + "images = torch.randint(0, 255, (8, 4))\nlabels = torch.randint(0, 3, (8,))\n"
            "def reload():\n    global labels\n    labels = fetch()\nds = Points(images, labels)\nlen(ds)\n")
    assert _unknown(code) == "len(ds)"


def test_a_class_attribute_that_may_be_a_descriptor_makes_the_store_more_than_a_store():
    """``pixels = PIXELS`` may name a descriptor whose ``__set__`` builds a tensor: building the
    dataset is then not known to be pure, nor reading ``ds.pixels``."""
    code = ("from torch.utils.data import Dataset\nfrom helpers import PIXELS\n\n"
            "class Digits(Dataset):\n    pixels = PIXELS\n\n    def __init__(self, pixels):\n"
            "        self.pixels = pixels\n\nds = Digits([1, 2])\n")
    tree = ast.parse(code)
    effects = Effects.of(tree, ImportTable.from_tree(tree), lightning_name)
    assert effects.data_class("Digits") == "data"
    assert _unknown(code + "ds.pixels\n") == "ds.pixels"
    plain = code.replace("pixels = PIXELS", "size = 28")
    tree = ast.parse(plain)
    assert Effects.of(tree, ImportTable.from_tree(tree), lightning_name).data_class("Digits") == "pure"


LAZY = """
import functools
import torch
from torch.utils.data import Dataset
from lazy import LazyRows


class Rows(Dataset):
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)
"""


@pytest.mark.parametrize(("code", "unknown"), [
    # c04: a namespace of the user's class handed to parse_args.
    ("import argparse\nfrom settings import Settings\nparser = argparse.ArgumentParser()\n"
     "args = parser.parse_args(namespace=Settings())\nargs.class_weights", "args.class_weights"),
    # c07: an object of a class of the file changed after it was built.
    (LAZY + "train_set = Rows([])\ntrain_set.rows = LazyRows(256)\nlen(train_set)", "len(train_set)"),
    (LAZY + "train_set = Rows([])\nlen(train_set)", None),
    # c10: a class whose __init__ stores an object it makes; c05: a default that is an object.
    (LAZY.replace("self.rows = rows", "self.rows = LazyRows(rows)") + "train_set = Rows(256)\nlen(train_set)",
     "len(train_set)"),
    (LAZY.replace("def __init__(self, rows)", "def __init__(self, rows=LazyRows(256))") + "train_set = Rows()\n"
     "len(train_set)", "len(train_set)"),
    # c06: a cached_property of that name.
    (LAZY.replace("    def __len__", "    @functools.cached_property\n    def table(self):\n"
                  "        return torch.tensor(self.rows)\n\n    def __len__") + "train_set = Rows([1, 2])\n"
     "len(train_set)", "len(train_set)"),
    # c08: a builtin runs its argument's special method; an f-string its __format__; truth its __bool__.
    ("from stats import LabelStats\nstats = LabelStats([0.7, 0.3])\nfloat(stats)", "float(stats)"),
    ("from stats import LabelStats\nstats = LabelStats([0.7, 0.3])\nf'{stats}'", "{stats}"),
    ("from stats import LabelStats\nstats = LabelStats([0.7, 0.3])\nstats or 1.0", "stats or 1.0"),
    ("import torch\nx = torch.ones(3)\nfloat(x)", None),
    # c09: a loader of torch's under another name returns objects of any class.
    ("import torch\ntrain_set = torch.serialization.load('rows.pt')\nlen(train_set)", "len(train_set)"),
    # c18: a key handed to sorted runs inside the call.
    ("import torch\nCOUNTS = {'a': 1}\nsorted(COUNTS, key=lambda c: torch.tensor(COUNTS[c]))",
     "sorted(COUNTS, key=lambda c: torch.tensor(COUNTS[c]))"),
    ("names = ['b', 'a']\nsorted(names, key=len)", None),
])
def test_review_helper_44_reads_that_run_code(code, unknown):
    """Each shape made a move out of init_module() safe that changed a dtype or a result on CPU
    (review helper-44, cases c04 to c18)."""
    assert _unknown(code) == unknown


def test_a_read_in_a_function_sees_the_module_s_binding_unless_it_binds_the_name_itself():
    """Python's scoping: ``x`` read in ``f`` is the module's tensor where ``f`` binds no ``x``, and
    ``f``'s own parameter where it does."""
    for code, unknown in (("import torch\nx = torch.arange(8)\n\ndef f():\n    return x[0]\n", None),
                          ("import torch\nx = torch.arange(8)\n\ndef f(x):\n    return x[0]\n", "x[0]"),
                          ("import torch\nx = torch.arange(8)\n\nclass C:\n    x = 3\n\n    def f(self):\n"
                           "        return x[0]\n", None)):
        tree = ast.parse(code)
        effects = Effects.of(tree, ImportTable.from_tree(tree), lightning_name)
        function = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
        found = effects.unknown_in(function.body[-1].value)
        assert (None if found is None else ast.unparse(found)) == unknown, code


@pytest.mark.parametrize(("code", "unknown"), [
    # c01: the object changed through another name: a loop over a tuple, an alias.
    (LAZY + "train_set = Rows([])\nfor split in (train_set,):\n    split.rows = LazyRows(256)\nlen(train_set)",
     "len(train_set)"),
    (LAZY + "train_set = Rows([])\nalias = train_set\nalias.rows = LazyRows(256)\nlen(train_set)", "len(train_set)"),
    # c02: a class whose __getattr__ builds what a read of a missing attribute returns is not pure.
    (LAZY.replace("    def __len__", "    def __getattr__(self, name):\n        return torch.randn(8)\n\n    def __len__")
     + "train_set = Rows([1, 2])\nlen(train_set)", "len(train_set)"),
])
def test_review_helper_46_objects_changed_or_built_elsewhere(code, unknown):
    assert _unknown(code) == unknown


def test_an_object_handed_on_through_or_or_a_conditional_escapes():
    """``alias = train_set or fallback`` holds the same object: a store through the alias changes it."""
    code = LAZY + "train_set = Rows([])\nalias = train_set or None\nalias.rows = LazyRows(256)\nlen(train_set)"
    assert _unknown(code) == "len(train_set)"
    code = LAZY + "train_set = Rows([])\nalias = train_set if train_set else None\nalias.rows = LazyRows(256)\nlen(train_set)"
    assert _unknown(code) == "len(train_set)"
