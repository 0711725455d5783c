"""``walk`` calls a read-only visitor's hooks exactly as ``node.visit`` does, in the same order."""

from __future__ import annotations

import libcst as cst
import pytest
from conftest import fixture_sources, libcst_parses
from hypothesis import HealthCheck, given, settings

from ddpfix.edits._walk import walk

try:
    import hypothesmith
except ImportError:  # pragma: no cover - in the test extra
    hypothesmith = None


class Recorder(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.events: list[tuple[str, int]] = []


class Events(Recorder):
    """Every node in and out, and no children below a lambda (a visit_ that says False)."""

    def on_visit(self, node):
        self.events.append(("in", id(node)))
        return not isinstance(node, cst.Lambda)

    def on_leave(self, original_node):
        self.events.append(("out", id(original_node)))


class Methods(Recorder):
    """The visit_<Node>/leave_<Node> methods most rules use."""

    def visit_Call(self, node):
        self.events.append(("call", id(node)))

    def visit_FunctionDef(self, node):
        self.events.append(("def", id(node)))
        return node.name.value != "skip_me"

    def leave_Name(self, original_node):
        self.events.append(("name", id(original_node)))

    def visit_FormattedStringExpression(self, node):
        self.events.append(("fexpr", id(node)))

    def visit_SimpleString(self, node):
        self.events.append(("str", id(node)))


def assert_same_walk(source: str) -> None:
    module = cst.parse_module(source)
    for kind in (Events, Methods):
        theirs, ours = kind(), kind()
        module.visit(theirs)
        walk(module, ours)
        assert ours.events == theirs.events, (kind.__name__, source)


TRICKY = [
    'f"{a!r:>{width}} {b=}" f"{c:{d}.{e}}"\n',  # format specs: visited only when present
    "def skip_me():\n    call()\ndef other(a=f(), *, b: int = g()) -> h():\n    return lambda x: y(x)\n",
    "@d(1)\nclass A(B, metaclass=M):\n    async def m(self):\n        async for x in y():\n            await z()\n",
    "match p:\n    case [1, *rest] if rest:\n        pass\n    case {'k': v, **kw} | Point(x=0):\n        pass\n",
    "try:\n    a()\nexcept* E as e:\n    b()\nelse:\n    c()\nfinally:\n    d()\n",
    "x = [i async for i in a() if i] or {k: v for k, v in b()} or (yield from c())\n",
    "global g\ndel a[1:2, ::3], b.c\nassert x, y\nraise E from F\nwith a() as (b, c), d():\n    pass\n",
]


@pytest.mark.parametrize("source", TRICKY)
def test_tricky_sources(source):
    assert_same_walk(source)


def test_every_fixture():
    for source in fixture_sources():
        assert_same_walk(source)


def test_a_transformer_is_refused():
    with pytest.raises(TypeError, match="read-only"):
        walk(cst.parse_module("x = 1\n"), cst.CSTTransformer())


@pytest.mark.skipif(hypothesmith is None, reason="hypothesmith not installed")
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(source=hypothesmith.from_grammar() if hypothesmith else None)
def test_generated_programs(source):
    if libcst_parses(source):
        assert_same_walk(source)
