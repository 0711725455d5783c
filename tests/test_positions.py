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


def test_in_a_big_file_the_view_answers_the_first_node_from_a_partial_pass_and_later_ones_from_the_full_one():
    from ddpfix.transforms.base import ModuleView

    from ddpfix.transforms.base import PARTIAL_POSITIONS_BYTES

    source = "import torch\n\n\ndef f():\n    return 1\n\n\n" + "x = 1\n" * (PARTIAL_POSITIONS_BYTES // 6) + "y = f()\n"
    module = cst.parse_module(source)
    full = Positions(module)
    first, last = module.body[0], module.body[-1]
    view = ModuleView(module, source.encode())
    assert view.position(first) == full[first]
    assert view._positions is None, "the first question must not generate the whole file"
    assert view.position(last) == full[last]
    assert view._positions is not None


def test_in_a_small_file_the_view_makes_the_full_pass_at_once():
    from ddpfix.transforms.base import ModuleView

    source = "import torch\nx = torch.zeros(1)\n"
    module = cst.parse_module(source)
    view = ModuleView(module, source.encode())
    assert view.position(module.body[0]) == Positions(module)[module.body[0]]
    assert view._positions is not None
