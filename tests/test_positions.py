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


def _assert_spliced_matches_a_full_pass(module: cst.Module, before: cst.Module, positions: Positions,
                                       after=Positions.after) -> Positions:
    spliced = after(module, before, positions)
    full = Positions(module)
    assert spliced.code == full.code == module.code
    for node in full:
        assert spliced.offsets(node) == full.offsets(node), type(node).__name__
        assert spliced.outer(node) == full.outer(node), type(node).__name__
        assert spliced[node] == full[node]
    return spliced


def test_positions_after_a_fix_are_those_of_a_full_pass(monkeypatch):
    """``Positions.after`` (the code of the statements a fix did not enter taken over, their spans
    shifted) gives every node of the fixed module the span a full pass gives, over every fix the
    fixtures make, safe and unsafe. (The engine turns a failure inside a fix into a finding, so
    each comparison's outcome is gathered here.)"""
    from conftest import FIXTURES

    from ddpfix.positions import _Spliced
    from ddpfix.rules import all_rules
    from ddpfix.sources import fix_source

    original = Positions.after
    outcomes: list[str] = []

    def checked(module, before, positions):
        try:
            spliced = _assert_spliced_matches_a_full_pass(module, before, positions, original)
        except AssertionError as error:
            outcomes.append(f"differs: {error}")
            raise
        outcomes.append("spliced" if isinstance(spliced, _Spliced) else "full pass")
        return spliced

    monkeypatch.setattr(Positions, "after", staticmethod(checked))
    import ddpfix.engine as engine

    monkeypatch.setattr(engine, "_in_parts", lambda view, ctx: None)  # every LibCST fix on the whole file
    for path in sorted(FIXTURES.rglob("*.py")):
        for unsafe in (False, True):
            fix_source(str(path), path.read_bytes(), all_rules(), options={"unsafe_fixes": unsafe})
    assert len(outcomes) > 100 and set(outcomes) == {"spliced"}, sorted(set(outcomes))[:3]


def test_positions_after_a_fix_of_a_moved_inserted_and_removed_statement():
    before = cst.parse_module("import os\n\n# lead\nx = 1\n\n\ndef f(a):\n    return a\n\ny = f(x)  # tail\n# footer\n")
    positions = Positions(before)
    first, second, third, fourth = before.body
    changed = before.with_changes(body=[fourth, cst.parse_statement("z = 2\n"), first, third])
    spliced = _assert_spliced_matches_a_full_pass(changed, before, positions)
    # A node of a statement the fix dropped is not in the new tree.
    assert spliced.offsets(second) is None and second not in spliced
    again = changed.with_changes(body=[*changed.body[:2], cst.parse_statement("w = z\n")])
    _assert_spliced_matches_a_full_pass(again, changed, spliced)


def test_positions_after_fall_back_to_a_full_pass_where_the_module_changed_around_the_statements():
    from ddpfix.positions import _Spliced

    before = cst.parse_module("x = 1\ny = 2\n")
    positions = Positions(before)
    no_newline = before.with_changes(has_trailing_newline=False)
    assert not isinstance(Positions.after(no_newline, before, positions), _Spliced)
    twice = before.with_changes(body=[before.body[0], before.body[0]])
    assert not isinstance(Positions.after(twice, before, positions), _Spliced)
    _assert_spliced_matches_a_full_pass(no_newline, before, positions)
    _assert_spliced_matches_a_full_pass(twice, before, positions)
