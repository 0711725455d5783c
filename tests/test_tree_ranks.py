"""``_tree_ranks`` (rank guards on CPython's tree) gives the answers ``_ranks`` gives on LibCST's:
the same ``if`` tests classified the same way, the same statements gated by the same guards, at the
same places. DDP005 reads CPython's tree; DDP003 and DDP004 read LibCST's; they must agree on what
a rank guard is."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest

from ddpfix.positions import Positions
from ddpfix.transforms import _ranks, _tree_ranks
from ddpfix.transforms._lightning import all_functions
from ddpfix.transforms.base import ModuleView, TreeView

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted(p for p in (ROOT / "fixtures").rglob("*.py") if b"rank" in p.read_bytes() or b"zero" in p.read_bytes())

SPELLINGS = {
    "operators": """
import os
import torch.distributed as dist
from lightning.pytorch.utilities import rank_zero_only
def f(self, trainer):
    if self.global_rank == 0: a = 1
    if 0 == self.trainer.global_rank:
        b = 1; c = 2
    if self.local_rank != 0:
        d = 1
    elif trainer.is_global_zero:
        e = 1
    else:
        if self.global_rank > 0:
            pass
        else:
            g = 1
    if 0 < self.global_rank:
        h = 1
    else:
        i = 1
    if self.trainer.is_global_zero == False:
        j = 1
    else:
        k = 1
    if self.trainer.is_global_zero is not True and x:
        l = 1
    if batch_idx == 0 and self.trainer.is_global_zero and y:
        m = 1
    if not (self.global_rank == 0):
        n = 1
    if not (self.global_rank == 0 and z):
        o = 1
    if rank_zero_only.rank == 0:
        p = 1
    if dist.get_rank() == 0:
        q = 1
    if int(os.environ["LOCAL_RANK"]) == 0:
        r = 1
    if os.environ.get("RANK", "0") == "0":
        s = 1
    if os.getenv(key="LOCAL_RANK") == "0":
        t = 1
    if self.global_rank == False:
        u = 1
    if self.global_rank == 0.0:
        v = 1
    if self.global_rank:
        w = 1
    else:
        ww = 1
""",
    "early return and loops": """
def f(self):
    for batch in data:
        if not self.trainer.is_global_zero:
            return
        a = 1
        while b:
            c = 1
        try:
            d = 1
        except E:
            e = 1
        finally:
            g = 1
        with x:
            h = 1
        match y:
            case 1:
                i = 1
        def inner():
            j = 1
        class K:
            k = 1
    l = 1
""",
    "decorators and module level": """
import lightning as L
from lightning.pytorch.utilities.rank_zero import rank_zero_only as zero_only
from lightning.pytorch.utilities import rank_zero_only
import torch.distributed as dist

if dist.get_rank() == 0:
    dist.barrier()

@zero_only
def save():
    torch.save(x, "x.pt")

@rank_zero_only
async def later():
    await y

@L.pytorch.utilities.rank_zero_only
def third():
    z = (
        1
    )

class M:
    @other
    def f(self):
        if self.global_rank == 0:
            self.log("a", 1)
        if self.global_rank != 0: return
        q = 1
""",
    "names that shadow": """
from torch.distributed import get_rank
def get_rank():
    return 3
def f(self):
    if get_rank() == 0:
        a = 1
    if self.local_rank == 0:
        b = 1
""",
    "non-ascii and a BOM": "\ufeff" + """
def f(self):
    if self.global_rank == 0: é = "ü"; ß = self.all_gather("ä")
""",
}


def _cst_answers(source: bytes):
    module = cst.parse_module(source)
    view = ModuleView(module, source)
    tests = _ranks.RankTests(view.imports)
    positions = Positions(module)
    gated = set()
    regions = [_ranks.gated_at_module_level(module, tests)] + [_ranks.gated_statements(f, tests) for f in all_functions(module)]
    for region in regions:
        for item in region:
            for small in item.statement.body:
                where = positions[small].start
                gated.add((where.line, where.column, positions[item.guard.node].start.line, item.guard.branch, item.guard.pure))
    classified = {}

    class Ifs(cst.CSTVisitor):
        def visit_If(self, node: cst.If) -> None:
            where = positions[node.test].start
            classified[(where.line, where.column)] = tests.classify(node.test)

    module.visit(Ifs())
    return gated, classified


def _tree_answers(source: bytes):
    tree = ast.parse(source)
    view = TreeView(tree, source)
    tests = _tree_ranks.TreeRankTests(view.imports)
    positions = view.positions
    gated = set()
    regions = [_tree_ranks.gated_at_module_level(tree, tests)] + [_tree_ranks.gated_statements(f, tests) for f in _tree_ranks.functions(tree)]
    for region in regions:
        for statement, guard in region:
            where = positions[statement].start
            gated.add((where.line, where.column, positions[guard.node].start.line, guard.branch, guard.pure))
    classified = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            where = positions[node.test].start
            classified[(where.line, where.column)] = tests.classify(node.test)
    return gated, classified


def _compare(source: bytes) -> None:
    cst_gated, cst_classified = _cst_answers(source)
    tree_gated, tree_classified = _tree_answers(source)
    assert tree_classified == cst_classified
    assert tree_gated == cst_gated


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_the_trees_agree_on_spellings(name):
    source = SPELLINGS[name].encode("utf-8")
    _compare(source)
    gated, _ = _tree_answers(source)
    assert gated, "a case with nothing gated shows nothing"


def test_the_trees_agree_on_every_fixture_with_rank_words():
    assert len(FIXTURES) > 20
    for path in FIXTURES:
        try:
            _compare(path.read_bytes())
        except AssertionError as err:
            raise AssertionError(f"{path}: {err}") from None


def test_tree_positions_are_libcsts_positions_in_characters():
    source = "if 1:\n\tx = 'é'; y = f(\n  'ü', z)  # ñ\n\tw = g('€', h('😀'))\n".encode()
    module = cst.parse_module(source)
    positions = Positions(module)
    cst_calls = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            cst_calls.append(positions[node])

    module.visit(Calls())
    view = TreeView(ast.parse(source), source)
    tree_calls = [view.position(n) for n in ast.walk(view.tree) if isinstance(n, ast.Call)]
    assert tree_calls == cst_calls and cst_calls[0].start.column == 14 and len(cst_calls) == 3


def test_statement_starts_agree():
    source = (b"a = 1; b = f(\n  2)\nif x: c = g(\n  3)\nd = (\n 4); e = 5\n"
              b"h = 1  # ;\ni = (\n 1)\nj = 1; \\\n k = 2\nl = 1;\nm = f(\n 1)\nn = 1; \\\r\no = f(\n 2)\np = 1; # c \\\nq = f(\n 3)\n")
    cst_view = ModuleView(cst.parse_module(source), source)
    tree_view = TreeView(ast.parse(source), source)
    lines = range(1, source.count(b"\n") + 2)
    assert [tree_view.statement_start(n) for n in lines] == [cst_view.statement_start(n) for n in lines]
