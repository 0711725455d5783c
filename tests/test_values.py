"""analysis/values.py: where a value comes from (issue 29, A.6)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from ddpfix.analysis.values import GLOBAL, METRIC, METRICS, FunctionValues, ObjectKinds
from ddpfix.imports import ImportTable

HEADER = """
import lightning as L
import torch
import torch.distributed as dist
import torchmetrics
from torch import nn
from torchmetrics import MetricCollection

class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        metrics = MetricCollection([torchmetrics.Accuracy(task="binary")])
        self.val_metrics = metrics.clone(prefix="val_")
        self.per_stage = nn.ModuleDict({"val": torchmetrics.F1Score(task="binary")})
        self.acc = torchmetrics.Accuracy(task="binary")
        self.annotated: torchmetrics.MeanMetric = torchmetrics.MeanMetric()
        self.local = torchmetrics.Accuracy(task="binary", sync_on_compute=False)
        self.built = make_metric()
        self.twice = torchmetrics.Accuracy(task="binary")
        self.twice = None

    def hook(self, x, i):
"""


def origin(body: str):
    """The origin of the value of the last statement (``value = <expr>``) of ``body``."""
    tree = ast.parse(HEADER + textwrap.indent(textwrap.dedent(body), " " * 8))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    imports = ImportTable.from_tree(tree)
    hook = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "hook")
    last = hook.body[-1]
    found = FunctionValues(hook, ObjectKinds(tree, [cls], imports), imports).origin(last.value)
    return None if found is None else found.kind


@pytest.mark.parametrize(("body", "kind"), [
    ("value = self.all_gather(x).sum()", GLOBAL),
    ("g = self.all_gather(x)\nvalue = torch.mean(g) / 2", GLOBAL),
    ("value = self.all_gather(x, group=None)", None),
    ("value = self.all_gather(x)[i]", None),
    ("dist.all_reduce(x)\nvalue = x", GLOBAL),
    ("dist.all_reduce(x, group=g)\nvalue = x", None),
    ("if i:\n    dist.all_reduce(x)\nvalue = x", None),
    ("dist.all_reduce(x)\nx.add_(1)\nvalue = x", None),
    ("dist.all_reduce(x)\nhelper(x)\nvalue = x", None),
    ("dist.all_reduce(x)\nx = x * 2\nvalue = x", GLOBAL),
    ("dist.all_reduce(x)\nx = x * i\nvalue = x", None),
    ("for _ in range(2):\n    dist.all_reduce(x)\nvalue = x", None),
    ("value = self.trainer.strategy.reduce(x.mean(), reduce_op='sum')", GLOBAL),
    # DDPStrategy.reduce hands a Python number back as it is: a name not known to be a tensor is unknown.
    ("value = self.trainer.strategy.reduce(x, reduce_op='sum')", None),
    ("acc = self.acc.compute()\nvalue = acc.item()", GLOBAL),
    ("value = self.local.compute()", None),
    ("value = self.built", None),
    ("value = self.built.compute()", None),
    ("value = self.twice", None),
    ("value = self.acc", METRIC),
    ("value = self.annotated", METRIC),  # ``self.annotated: MeanMetric = MeanMetric()`` (review helper-43, c17)
    ("value = self.val_metrics", METRIC),
    ("value = self.per_stage['val']", METRIC),
    ("value = self.per_stage", METRICS),
    ("value = self.val_metrics.compute()", GLOBAL),
    ("value = self.val_metrics(x, x)", None),
    ("value = x", None),
    ("value = 1.0", None),
])
def test_origin(body, kind):
    assert origin(body) == kind


def test_a_callback_s_module_parameter():
    tree = ast.parse(textwrap.dedent("""
        class C(Callback):
            def on_validation_epoch_end(self, trainer, pl_module):
                a = pl_module.all_gather(pl_module.x).mean()
                b = trainer.strategy.reduce(pl_module.x.mean())
                c = self.all_gather(pl_module.x)
                d = pl_module.acc.compute()
    """))
    imports = ImportTable.from_tree(tree)
    hook = tree.body[0].body[0]
    values = FunctionValues(hook, None, imports, module="pl_module", trainer="trainer")
    kinds = [values.origin(s.value) for s in hook.body]
    assert [k.kind if k else None for k in kinds] == [GLOBAL, GLOBAL, None, None]


def _same(body: str, header: str = HEADER) -> bool:
    tree = ast.parse(header + textwrap.indent(textwrap.dedent(body), " " * 8))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    imports = ImportTable.from_tree(tree)
    hook = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "hook")
    return FunctionValues(hook, ObjectKinds(tree, [cls], imports), imports).same_on_every_rank(hook.body[-1].value)


@pytest.mark.parametrize(("body", "same"), [
    ("value = 0.0", True),
    ("value = -1", True),
    ("value = self.current_epoch", True),
    ("value = self.trainer.current_epoch * 2 + 1", True),
    ("value = float(self.current_epoch)", True),
    ("value = min(1.0, 0.1 * self.current_epoch)", True),  # a KL-annealing weight (review helper-43, c24)
    ("value = max(1.0, x)", False),
    ("value = min(values)", False),
    ("value = x", False),
    ("value = x * 0", False),  # a tensor times zero: still the rank's tensor (its device, its dtype)
    ("value = self.global_step", False),  # weighted by each rank's batch sizes over the steps
    ("value = self.model.current_epoch", False),
    ("value = 'text'", False),
    ("float = len\nvalue = float(self.current_epoch)", False),
    ("self = other\nvalue = self.current_epoch", False),
])
def test_same_on_every_rank(body, same):
    """A number written out and Lightning's epoch counter are the same on every rank; what the
    function binds again, the step counter (weighted by each rank's batch sizes) and a tensor are not."""
    assert _same(body) is same


def test_a_class_that_defines_the_epoch_counter_or_the_trainer_is_not_read_as_lightning_s():
    for own in ("current_epoch = 3", "@property\n    def trainer(self):\n        return make_trainer()"):
        header = HEADER.replace("    def hook(self, x, i):", f"    {own}\n\n    def hook(self, x, i):")
        assert not _same("value = self.current_epoch", header)
        assert not _same("value = self.trainer.current_epoch", header)


def test_a_callback_s_trainer_counts_its_epochs_and_its_module_is_not_read():
    tree = ast.parse(textwrap.dedent("""
        class C(Callback):
            def on_validation_epoch_end(self, trainer, pl_module):
                a = trainer.current_epoch
                b = pl_module.current_epoch
                c = pl_module.trainer.current_epoch
    """))
    imports = ImportTable.from_tree(tree)
    hook = tree.body[0].body[0]
    values = FunctionValues(hook, None, imports, module="pl_module", trainer="trainer")
    assert [values.same_on_every_rank(s.value) for s in hook.body] == [True, False, False]


def test_values_imports_no_rule():
    import subprocess
    import sys
    code = "import sys, ddpfix.analysis.values; print(' '.join(m for m in sys.modules if m.startswith('ddpfix')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert not [m for m in loaded if m.startswith(("ddpfix.rules", "ddpfix.engine", "ddpfix.edits"))]


CONTAINERS_HEADER = """
import lightning as L
import torch
from torch import nn
from torchmetrics import MeanMetric

class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.grown = nn.ModuleDict()
        self.listed = nn.ModuleList()
        self.plain = {}
        for name in ["a", "b"]:
            self.grown[name] = MeanMetric()
            self.listed.append(MeanMetric())
        self.plain.update({"a": MeanMetric()})
        self.mixed = nn.ModuleDict({"a": MeanMetric()})
        self.mixed["b"] = nn.Linear(2, 2)
        self.written = {"a": MeanMetric()}
        self.looped = nn.ModuleDict()
        self.never = nn.ModuleDict()

    def step(self, x):
        self.written["a"] = x
        for self.looped["a"] in [x]:
            pass

    def hook(self, x, i):
"""


@pytest.mark.parametrize(("body", "kind"), [
    ("value = self.grown", METRICS),
    ("value = self.grown['a']", METRIC),
    ("value = self.listed[0]", METRIC),
    ("value = self.plain['a']", METRIC),
    ("value = self.mixed['a']", None),  # something else was put in
    ("value = self.written['a']", None),  # a per-rank tensor stored into a dict of metrics
    ("value = self.looped['a']", None),  # a loop's target
    ("value = self.never", None),  # nothing put in: nothing known
    ("for k, v in self.grown.items():\n    value = v", METRIC),
    ("for v in self.grown.values():\n    value = v", METRIC),
    ("for v in self.grown.values():\n    v = x\n    value = v", None),
    ("for k, v in self.written.items():\n    value = v", None),
    ("for k in self.grown.keys():\n    value = k", None),
])
def test_containers_filled_item_by_item_and_loops_over_them(body, kind):
    """A container that starts empty is one of metrics where everything put into it is a metric; an
    item stored otherwise (a tensor, another module, a loop's target) makes it unknown. A loop over
    the items or values of a container of metrics binds a metric at the start of each iteration."""
    tree = ast.parse(CONTAINERS_HEADER + textwrap.indent(textwrap.dedent(body), " " * 8))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    imports = ImportTable.from_tree(tree)
    hook = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "hook")
    found = FunctionValues(hook, ObjectKinds(tree, [cls], imports), imports).origin(
        next(n for n in walk_assignments(hook) if n.targets[0].id == "value").value,
        within=next(n for n in walk_assignments(hook) if n.targets[0].id == "value"))
    assert (None if found is None else found.kind) == kind


def walk_assignments(function):
    return [n for n in ast.walk(function) if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)]


ESCAPES = """
import lightning as L
from torch import nn
from torchmetrics import MeanMetric

class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.aliased = {"a": MeanMetric()}
        self.read = {"a": MeanMetric()}
        self.handed = nn.ModuleDict({"a": MeanMetric()})

    def remember(self, name, value):
        stats = self.aliased
        stats[name] = value
        seen = self.read
        for key, metric in seen.items():
            self.log(key, metric)
        fill(self.handed)

    def hook(self, x, i):
"""


@pytest.mark.parametrize(("attribute", "subclassed", "kind"), [
    ("aliased", False, None),  # a store through a local alias (review helper-43, c05)
    ("read", False, METRICS),  # an alias only read
    ("handed", False, None),  # handed to code not read
    ("read", True, None),  # a subclass may put a tensor in it (review helper-43, c06)
])
def test_a_container_handed_on_or_of_a_subclassed_class_is_unknown(attribute, subclassed, kind):
    tree = ast.parse(ESCAPES + f"        value = self.{attribute}\n")
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    imports = ImportTable.from_tree(tree)
    hook = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "hook")
    kinds = ObjectKinds(tree, [cls], imports, subclassed=subclassed)
    found = FunctionValues(hook, kinds, imports).origin(hook.body[-1].value)
    assert (None if found is None else found.kind) == kind
