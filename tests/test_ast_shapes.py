"""``ast_walk`` and ``ast_shapes.every_node`` give ``ast.walk``'s nodes in ``ast.walk``'s order."""

from __future__ import annotations

import ast

from conftest import FIXTURES

from ddpfix.analysis.ast_shapes import every_node
from ddpfix.ast_walk import walk, walk_list


def test_every_node_is_ast_walk_in_its_order():
    sources = [path.read_bytes() for path in sorted(FIXTURES.rglob("*.py"))]
    assert len(sources) > 300
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        walked = list(ast.walk(tree))
        assert every_node(tree) == walked
        assert walk_list(tree) == walked
        for node in walked[::50]:  # subtrees too, as the rules walk a method or a statement
            assert list(walk(node)) == list(ast.walk(node))
        assert every_node(tree) is every_node(tree)  # computed once per tree
