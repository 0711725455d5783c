"""``DropArgument`` (an argument dropped from a call by its place) and its text twin,
``drop_keeps_comments``: what a rule's ``check`` says about comments is what the edit does."""

from __future__ import annotations

import ast
import itertools

import libcst as cst
import pytest

from ddpfix.edits import apply_edits
from ddpfix.edits._base import Span
from ddpfix.edits.arguments import DropArgument, drop_keeps_comments
from ddpfix.positions import Positions
from ddpfix.rules.base import TreeView


def drop(source: str, index: int) -> tuple[bool, str | None]:
    """What the text says of dropping argument ``index`` of the first call to ``f``, and the code
    the edit gives (None where it refuses)."""
    tree = ast.parse(source)
    call = next(node for node in ast.walk(tree) if isinstance(node, ast.Call) and ast.unparse(node.func) == "f")
    view = TreeView(tree, source.encode())
    module = cst.parse_module(source)
    edited, refused = apply_edits(module, Positions(module), [DropArgument(Span.of(view.position(call)), index)])
    return drop_keeps_comments(view, call, index), None if refused else edited.code


@pytest.mark.parametrize(("source", "index", "expected"), [
    ('x = f("cuda")\n', 0, "x = f()\n"),
    ('x = f(a, device="cuda")\n', 1, "x = f(a)\n"),
    ('x = f("cuda", a)\n', 0, "x = f(a)\n"),
    ('x = f(  # why\n    device="cuda"\n)\n', 0, "x = f(  # why\n)\n"),
    ('x = f(\n    device="cuda",  # why\n)\n', 0, "x = f(  # why\n)\n"),
    ('x = f(  # one\n    device="cuda",  # two\n)\n', 0, None),  # only one of them fits in ``f()``
    ('x = f(\n    device="cuda"  # why\n)\n', 0, None),
    ('x = f(\n    ("cuda"  # in\n    ),\n)\n', 0, None),
    ('x = f(\n    a,  # a\n    "cuda",\n    b,\n)\n', 1, "x = f(\n    a,  # a\n    b,\n)\n"),
    ('x = f(\n    a,\n    "cuda",  # gone\n    b,\n)\n', 1, None),
    ('x = f(\n    a,  # a\n    device="cuda",\n)\n', 1, None),  # the comma before the last goes, with its comment
    ('x = f(\n    a,\n    device="cuda",\n)  # after\n', 1, "x = f(\n    a)  # after\n"),
])
def test_drop_argument(source, index, expected):
    keeps, code = drop(source, index)
    assert code == expected
    assert keeps == (expected is not None)


SPACES = ["", " ", "\n    ", "  # w\n    ", "\n    # line\n    "]


@pytest.mark.parametrize("count", [1, 2, 3])
def test_the_text_says_what_the_edit_does(count):
    """Every placement of a comment around the arguments' commas and parentheses, for every
    argument dropped: the text's answer is the edit's."""
    arguments = ["(a  # in\n)", "b", 'device="cuda"'][-count:]
    placements = list(itertools.product(SPACES, repeat=2 * count + 1))
    for spaces in placements[::max(1, len(placements) // 100)]:  # a spread of a hundred or so
        parts = [spaces[0]]
        for position, argument in enumerate(arguments):
            comma = "," if position < count - 1 or spaces[-1] != "" else ""
            parts += [argument, spaces[2 * position + 1], comma, spaces[2 * position + 2] if comma else ""]
        source = "x = f(" + "".join(parts) + ")\n"
        for index in range(count):
            keeps, code = drop(source, index)
            assert keeps == (code is not None), (source, index)
