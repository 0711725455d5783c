"""Where a class is built and what its constructions hand it (model/constructions.py): the calls
that build it, the first use that may build it unseen, and whether a name handed to it holds a
module built by a known call and left as built."""

from __future__ import annotations

import ast

import pytest

from ddpfix.analysis.attribute_access import attribute_stores
from ddpfix.model.constructions import class_uses, object_problem, use_problem

CLASS = "class Model:\n    @staticmethod\n    def add_args(parser):\n        return parser\n"


@pytest.mark.parametrize(("code", "calls", "other"), [
    ("m = Model(1)\nn = pkg.Model(x=2)\nModel.add_args(p)\n", 2, None),
    ("m = Model.load_from_checkpoint('a.ckpt')\n", 0, "Name"),  # built from a checkpoint's hparams
    ("class Sub(Model):\n    pass\n", 0, "Name"),
    ("registry = {'m': Model}\n", 0, "Name"),
    ("from pkg import Model as Other\n", 0, "alias"),
    ("x = getattr(pkg, 'Model')()\n", 0, "Constant"),
    ("m = Model(1)\nagain = type(m)(2)\n", 1, "Call"),
    ("m = Model(1)\nagain = m.__class__(2)\n", 1, "Attribute"),
    ("m = Model(1)\nklass = type(m)\nagain = klass(2)\n", 1, "Call"),  # kept first, built later
    ("m = Model(1)\nname = type(m).__name__\nsame = type(m) is int\n", 1, None),  # only read
    ("def Model():\n    pass\n", 0, "FunctionDef"),
])
def test_class_uses_finds_the_calls_and_the_first_other_use(code, calls, other):
    tree = ast.parse(CLASS + code)
    found, first = class_uses(tree, "Model", tree.body[0])
    if first is None:  # past another use, the calls found are not all of them
        assert len(found) == calls
    assert (type(first).__name__ if first is not None else None) == other


def known(call: ast.Call) -> str | None:
    """A stand-in for the module reader: ``nn.*`` calls build known modules."""
    return None if ast.unparse(call.func).startswith("nn.") else f"`{ast.unparse(call.func)}` is not read"


def problem(code: str, name: str = "backbone", elsewhere=None) -> str | None:
    tree = ast.parse(code)
    construction = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "Lit")
    argument = construction.args[0]
    found = object_problem(tree, argument, lambda node: node is argument, known, elsewhere)
    return None if found is None else found[0]


def nowhere(_name: str) -> None:
    """No other file reaches or replaces anything."""
    return None


@pytest.mark.parametrize("code", [
    "backbone = nn.Linear(4, 4)\nlm = Lit(backbone)\n",
    "backbone = nn.Linear(4, 4)\nfor p in backbone.parameters():\n    p.requires_grad = False\nlm = Lit(backbone)\n",
    "backbone = nn.Sequential(nn.Linear(4, 4))\nbackbone[0] = nn.Tanh()\nbackbone.fc = nn.Linear(4, 4)\nlm = Lit(backbone)\n",
    "backbone = nn.Linear(4, 4)\nbackbone\nprint_it = backbone.training\nlm = Lit(backbone)\n",
    # a function of the file that only reads it, and one whose own parameter of that name is another variable
    "def count(m):\n    return sum(p.numel() for p in m.parameters())\n"
    "def other(backbone):\n    backbone.register_forward_hook(print)\n"
    "backbone = nn.Linear(4, 4)\ncount(backbone.weight_holder)\nlm = Lit(backbone)\n",
    "class S:\n    @staticmethod\n    def run(m, x):\n        m.eval()\n        return m(x)\n"
    "def main():\n    backbone = nn.Linear(4, 4)\n    S.run(backbone, 1)\n    lm = Lit(backbone)\n",
])
def test_a_module_left_as_built(code):
    assert problem(code) is None


def test_a_deep_copy_shares_nothing_with_the_module():
    copied = "import copy\nbackbone = nn.Linear(4, 4)\nema = copy.deepcopy(backbone)\nlm = Lit(backbone)\n"
    assert problem(copied, elsewhere=nowhere) is None
    assert problem("from copy import deepcopy\nbackbone = nn.Linear(4, 4)\nema = deepcopy(backbone)\nlm = Lit(backbone)\n",
                   elsewhere=nowhere) is None
    assert problem("def deepcopy(m):\n    return m\nbackbone = nn.Linear(4, 4)\nema = deepcopy(backbone)\nlm = Lit(backbone)\n",
                   elsewhere=nowhere) is not None  # not the standard library's
    assert problem(copied, elsewhere=lambda name: "plugins.py:3" if name == "deepcopy" else None) is not None  # patched
    assert problem(copied) is not None  # the program's other files not read


def test_a_module_left_as_built_by_any_binding_and_read_by_builtins():
    assert problem("backbone: nn.Module = nn.Linear(4, 4)\nprint(backbone)\nassert isinstance(backbone, nn.Module)\n"
                   "lm = Lit(backbone)\n") is None
    assert problem("def print(m):\n    m.forward = None\nbackbone = nn.Linear(4, 4)\nprint(backbone)\nlm = Lit(backbone)\n") \
        is not None  # a print of the file is not the builtin


@pytest.mark.parametrize(("code", "reason"), [
    ("backbone = nn.Linear(4, 4)\nbackbone.register_forward_hook(f)\nlm = Lit(backbone)\n", "may change what"),
    ("backbone = make()\nlm = Lit(backbone)\n", "`make` is not read"),
    ("backbone = nn.Linear(4, 4)\nhead = backbone\nlm = Lit(backbone)\n", "may change what"),
    ("backbone = nn.Linear(4, 4)\nfreeze(backbone)\nlm = Lit(backbone)\n", "may change what"),
    ("backbone = nn.Linear(4, 4)\nbackbone[0] = Other()\nlm = Lit(backbone)\n", "may change what"),
    ("for backbone in [nn.Linear(4, 4)]:\n    lm = Lit(backbone)\n", "not a call that builds"),
    ("backbone = nn.Linear(4, 4)\nlm = Lit(backbone)\ndef f():\n    global backbone\n    backbone = 1\n", "declared `global`"),
    ("def build(backbone):\n    return Lit(backbone)\n", "is a parameter of `build`"),
    ("backbone = nn.Linear(4, 4)\ndel backbone\nbackbone = nn.Linear(4, 4)\nlm = Lit(backbone)\n", "deleted"),
    ("def hook(m):\n    m.forward = print\ndef wrap(m):\n    hook(m)\n"
     "backbone = nn.Linear(4, 4)\nwrap(backbone)\nlm = Lit(backbone)\n", "may change what"),
    ("def hook(m):\n    pass\ndef hook(m):\n    m.forward = print\n"
     "backbone = nn.Linear(4, 4)\nhook(backbone)\nlm = Lit(backbone)\n", "may change what"),
    ("import backbone\nlm = Lit(backbone)\n", "also imported"),
    # a "size" is a part where a class of the program names it so: only used as a value it is read
    ("backbone = nn.Linear(4, 4)\nhead = backbone.in_features\nhead.register_forward_hook(f)\nlm = Lit(backbone)\n",
     "may change what"),
    # what returns the module itself or its parts is another way to it (adversarial review)
    ("backbone = nn.Linear(4, 4)\nbackbone.eval().register_forward_hook(f)\nlm = Lit(backbone)\n", "may change what"),
    ("backbone = nn.Linear(4, 4)\nnet = backbone.to('cuda')\nlm = Lit(backbone)\n", "may change what"),
    ("backbone = nn.Linear(4, 4)\nfor m in backbone.modules():\n    m.register_forward_hook(f)\nlm = Lit(backbone)\n",
     "may change what"),
    ("match x:\n    case nn.Module() as backbone:\n        pass\nbackbone = nn.Linear(4, 4)\nlm = Lit(backbone)\n",
     "a `match` pattern binds"),
    ("globals()['backbone'] = 1\nbackbone = nn.Linear(4, 4)\nlm = Lit(backbone)\n", "may bind any name"),
    ("def prep(m):\n    m.eval()\nif flag:\n    def prep(m):\n        m.forward = print\n"
     "backbone = nn.Linear(4, 4)\nprep(backbone)\nlm = Lit(backbone)\n", "may change what"),
])
def test_a_module_that_may_be_changed_or_unknown(code, reason):
    found = problem(code)
    assert found is not None and reason in found, found


def test_a_part_handed_on_is_followed_into_the_function():
    tree = ast.parse("def freeze(m):\n    m.requires_grad_(False)\nb = nn.Linear(1, 1)\nfreeze(b.layer)\n")
    use = next(n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "b" and isinstance(n.ctx, ast.Load))
    assert use_problem(tree, use, known) is None
    tree = ast.parse("def freeze(m):\n    m.layer = object()\nb = nn.Linear(1, 1)\nfreeze(b.layer)\n")
    use = next(n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "b" and isinstance(n.ctx, ast.Load))
    assert use_problem(tree, use, known) is not None


@pytest.mark.parametrize(("code", "stores"), [
    ("print(f'{config.__dict__}')\nx = cfg.__dict__.items()\nprint(obj.__dict__)\n", False),
    ("obj.__dict__.update(forward=f)\n", True),
    ("d = obj.__dict__\n", True),
])
def test_a_namespace_only_shown_or_read_stores_nothing(code, stores):
    assert ("*" in attribute_stores(ast.parse(code))) is stores
