"""``_ast_shapes.every_node``: the cached walk gives ``ast.walk``'s nodes in ``ast.walk``'s order."""

from __future__ import annotations

import ast

from conftest import FIXTURES

from ddpfix.analysis.ast_shapes import every_node


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
        assert every_node(tree) is every_node(tree)  # computed once per tree
