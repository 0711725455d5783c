"""``_tree_text.quoted`` prints an expression as LibCST's ``code_for_node`` does (messages quote
code): every expression over several lines of the sources below and of every fixture, matched to
the LibCST node with the same range, must read the same."""

from __future__ import annotations

import ast

import libcst as cst
import pytest
from fixture_cases import cases

from ddpfix.positions import Positions
from ddpfix.analysis import tree_text as tree_text
from ddpfix.rules.base import TreeView

TRICKY = [
    b"def main():\n    trainer = Trainer(devices=[0,\n                             1], x=f(\n        2))\n",
    b"class A:\n    def f(self):\n        if x:\n            y = g(a,  # note\n\n                  b)\n",
    b"def f():\n    s = h('''one\n    two''', [1,\n        2])\n    t = [0, \\\n  1]\n",
    b"def f():\r\n    v = [0,\r\n         1]\r\n",
    b"def f():\r    v = [0,\r         1]\r",
    b"def f():\r\n    v = [0,\n         1,\r\n  2, \\\r\n 3]\r\n",  # newlines of another kind, a continuation
    b"def f():\n\tv = {'a':\n\t\t1}\n",
    b"def f():\n    with open(x,\n              y) as z:\n        pass\n",
    b"@decorate(a,\n          b)\ndef f():\n    pass\n",
    b"def f():\n    x = [1,\n  2]\n",  # a continuation line indented less than the block: all of it is kept
    b"def f():\n    x = f'''{a}\n    b'''\n    y = [f'{a}',\n         2]\n",
]


def _libcst_code(source: bytes) -> dict[tuple, str]:
    module = cst.parse_module(source)
    positions = Positions(module)
    found = {}
    for node in positions:
        if isinstance(node, cst.BaseExpression) and not node.lpar:
            where = positions[node]
            key = (where.start.line, where.start.column, where.end.line, where.end.column)
            found.setdefault(key, cst.Module([]).code_for_node(node))
    return found


def _compared(source: bytes) -> int:
    tree = ast.parse(source)
    view = TreeView(tree, source)
    expected = _libcst_code(source)
    compared = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr) or node.end_lineno == node.lineno:
            continue
        where = view.position(node)
        key = (where.start.line, where.start.column, where.end.line, where.end.column)
        if key not in expected:
            continue  # parentheses of its own, which LibCST's node range leaves out
        assert tree_text.quoted(node, tree_text.statement_of(tree, node), view) == expected[key], source
        compared += 1
    return compared


@pytest.mark.parametrize("source", TRICKY)
def test_quoted_code_is_libcsts(source):
    assert _compared(source) >= 1


def test_quoted_code_is_libcsts_on_every_fixture():
    compared = sum(_compared(c.input.read_bytes()) for c in cases() if c.input.suffix == ".py")
    assert compared > 10
