"""``edits.calls``: what ``CallLayout`` reads off the text says which edits ``apply_edits`` refuses
(a rule's ``check`` and ``--write`` then agree), and the edits write what they promise."""

from __future__ import annotations

import ast
import itertools

import libcst as cst
import pytest

from ddpfix.edits import SetKeyword, Span, apply_edits
from ddpfix.edits.calls import RenameAttribute, ReplaceArguments, call_layout
from ddpfix.edits.expressions import ReplaceExpression
from ddpfix.positions import Positions
from ddpfix.rules.base import TreeView

# The places LibCST keeps a comment in: after "(", around commas, inside parentheses of a value,
# before ")"; some of these calls have the same comment twice, where a loss and a copy cancel.
AFTER_OPEN = ["", " ", "  # open\n    ", "\n    "]
BETWEEN = [", ", ",  # sep\n    ", " ,\n    # own line\n    ", ",  # open\n    "]
CLOSE = ["", ",", ",  # close\n", "  # close\n", "\n"]
VALUES = ["0", "(0)", "(  # in\n  0)", "non_blocking=True", "non_blocking=(True  # nb\n)", "device=( 0 )"]


def _calls():
    """Each combination of values in a sample of the layouts (every layout comes up several times)."""
    layouts = list(itertools.product(AFTER_OPEN, BETWEEN, CLOSE))
    combinations = [v for count in (0, 1, 2) for v in itertools.combinations(VALUES, count)
                    if sum("non_blocking" in value for value in v) < 2]
    for number, values in enumerate(combinations):
        for opened, between, close in layouts[number % 11::11]:
            arguments = between.join(values)
            yield f"y = x.cuda({opened}{arguments}{close if values else ''})\n"


CALLS = sorted(set(_calls()))


def _trees(source: str):
    tree = ast.parse(source)
    call = tree.body[0].value
    view = TreeView(tree, source.encode())
    module = cst.parse_module(source)
    return call, view, module, Positions(module)


def _refused(module, positions, edits) -> bool:
    _fixed, refused = apply_edits(module, positions, edits)
    return bool(refused)


@pytest.mark.parametrize("source", CALLS)
def test_layout_says_which_edits_are_refused(source):
    call, view, module, positions = _trees(source)
    layout = call_layout(view, call)
    assert layout is not None
    order = sorted([*call.args, *call.keywords], key=lambda a: (a.lineno, a.col_offset))
    at = Span.of(view.position(call))
    kept = {i for i, a in enumerate(order) if isinstance(a, ast.keyword) and a.arg == "non_blocking"}
    rebuild = [RenameAttribute(Span.of(view.position(call.func)), "to"), ReplaceArguments(at, ("self.device",), ("non_blocking",))]
    assert layout.replace_arguments_keeps_comments(1, kept) == (not _refused(module, positions, rebuild))
    assert layout.append_keeps_comments() == (not _refused(module, positions, [SetKeyword(at, "added", "0")]))
    for index, argument in enumerate(order):
        value = argument.value if isinstance(argument, ast.keyword) else argument
        replace = [ReplaceExpression(Span.of(view.position(value)), "self.device")]
        assert layout.replace_value_keeps_comments(index) == (not _refused(module, positions, replace))


@pytest.mark.parametrize(("source", "expected"), [
    ("y = x.cuda(0, non_blocking=True)\n", "y = x.to(self.device, non_blocking=True)\n"),
    ("y = (x.cuda)( device = 0 ,)\n", "y = (x.to)( self.device)\n"),
    ("y = x.cuda(\n    0,\n    non_blocking = (a  # why\n    ),\n)\n",
     "y = x.to(\n    self.device,\n    non_blocking=(a  # why\n    ))\n"),
])
def test_rebuilding_a_call(source, expected):
    call, view, module, positions = _trees(source)
    edits = [RenameAttribute(Span.of(view.position(call.func)), "to"),
             ReplaceArguments(Span.of(view.position(call)), ("self.device",), ("non_blocking",))]
    fixed, refused = apply_edits(module, positions, edits)
    assert not refused and fixed.code == expected


@pytest.mark.parametrize("source", ["y = f(x for x in z)\n", "y = f(\n)\n", "y = f(lambda a, b: a, (c))\n"])
def test_layout_of_unusual_calls(source):
    call, view, _module, _positions = _trees(source)
    layout = call_layout(view, call)
    if isinstance(call.args[0] if call.args else None, ast.GeneratorExp):
        assert layout is None  # the generator's parentheses are the call's
    else:
        assert layout is not None and len(layout.arguments) == len(call.args)
