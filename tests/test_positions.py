"""ddpfix's own position pass gives the ranges LibCST's PositionProvider gives, node for node."""

from __future__ import annotations

import libcst as cst
import pytest
from conftest import fixture_sources, libcst_parses
from hypothesis import HealthCheck, given, settings
from libcst.metadata import MetadataWrapper, PositionProvider

from ddpfix.positions import Positions

try:
    import hypothesmith
except ImportError:  # pragma: no cover - in the test extra
    hypothesmith = None

TRICKY = [
    "x = 1",  # no trailing newline
    "",
    "\n\n",
    "a = 1\r\nb = (2,\r\n     3)\r\n",
    "a = 1\rb = 2\r",
    "def f(\n    a,  # c\n    b,\n):\n    '''doc\n    more'''\n    return a\n",
    "@dec\n# comment\nclass A(B, metaclass=M):\n    x: int = 1\n\n    async def g(self):\n        async with a as b:\n            await c\n",
    "if a:\n    pass\nelif b:\n    pass\nelse:\n    x = [i for i in y if i]\n",
    "s = f'{a!r:>{width}}' 'b' \\\n    'c'\n",
    "match p:\n    case [1, *rest] if rest:\n        pass\n    case {'k': v, **kw}:\n        pass\n",
    "lambda: (yield)\nx = a if b else c\ndel a[1:2, ::3]\n",
    "\ttabbed = 1\n" if False else "if x:\n\tdone = 1\n",
]


def assert_same_positions(source: str) -> None:
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    ours = Positions(module)
    assert set(ours) == set(expected)
    for node in expected:
        want = expected[node]
        got = ours[node]
        assert (got.start.line, got.start.column, got.end.line, got.end.column) == (
            want.start.line, want.start.column, want.end.line, want.end.column), (type(node).__name__, source)
        first, last = ours.lines(node)
        assert (first, last) == (expected[node].start.line, expected[node].end.line)


@pytest.mark.parametrize("source", TRICKY)
def test_tricky_sources(source):
    assert_same_positions(source)


def test_every_fixture():
    for source in fixture_sources():
        assert_same_positions(source)


@pytest.mark.skipif(hypothesmith is None, reason="hypothesmith not installed")
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(source=hypothesmith.from_grammar() if hypothesmith else None)
def test_generated_programs(source):
    if libcst_parses(source):
        assert_same_positions(source)


@pytest.mark.parametrize("source", TRICKY)
def test_a_pass_that_stops_at_a_node_gives_the_full_ranges_of_what_it_reached(source):
    module = cst.parse_module(source)
    full = Positions(module)
    for node in full:
        partial = Positions(module, until=node)
        assert node in partial
        assert all(partial[seen] == full[seen] for seen in partial), type(node).__name__
        assert partial.complete == (node is module)


def test_tree_positions_are_libcsts_positions_in_characters():
    """The spans rules read off CPython's tree (columns in characters, not UTF-8 bytes) are the
    spans of the same nodes in LibCST's tree, where edits find their targets."""
    import ast

    from ddpfix.rules.base import TreeView

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


def test_statement_starts_are_libcsts_statement_lines():
    """A ``# noqa`` on the first line of a statement line covers it: the tree's notion of that line
    (statements joined by ``;``, continuations) is LibCST's ``SimpleStatementLine``."""
    import ast

    from ddpfix.rules.base import TreeView

    source = (b"a = 1; b = f(\n  2)\nif x: c = g(\n  3)\nd = (\n 4); e = 5\n"
              b"h = 1  # ;\ni = (\n 1)\nj = 1; \\\n k = 2\nl = 1;\nm = f(\n 1)\nn = 1; \\\r\no = f(\n 2)\np = 1; # c \\\nq = f(\n 3)\n")
    module = cst.parse_module(source)
    positions = Positions(module)
    starts: dict[int, int] = {}
    for node in positions:
        if isinstance(node, cst.SimpleStatementLine):
            first, last = positions.lines(node)
            for covered in range(first + 1, last + 1):
                starts.setdefault(covered, first)
    tree_view = TreeView(ast.parse(source), source)
    lines = range(1, source.count(b"\n") + 2)
    assert [tree_view.statement_start(n) for n in lines] == [starts.get(n, n) for n in lines]
