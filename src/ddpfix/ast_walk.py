"""``ast.walk``, faster: the same nodes in the same order (breadth first, a node before its
children), without the two generators ``ast.walk`` runs per node (``iter_child_nodes`` over
``iter_fields``). The rules and the facts pass walk every file they read, several times; a quarter
of that time went to the walking itself. ``tests/test_ast_shapes.py`` compares both on the fixtures.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator

_AST = ast.AST


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk(node)``: lazily, so a search that stops at its first match pays for no more."""
    todo = deque([node])
    pop, append, extend = todo.popleft, todo.append, todo.extend
    while todo:
        node = pop()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                extend([item for item in value if isinstance(item, _AST)])
            elif isinstance(value, _AST):
                append(value)
        yield node


def walk_list(node: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(node))``, built in place (faster than ``list(walk(node))``)."""
    nodes = [node]
    append, extend = nodes.append, nodes.extend
    index = 0
    while index < len(nodes):
        node = nodes[index]
        index += 1
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                extend([item for item in value if isinstance(item, _AST)])
            elif isinstance(value, _AST):
                append(value)
    return nodes


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))``, in its order, without its two generators: the per-hook
    proofs ask it of every node of every hook."""
    found: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            found.extend([item for item in value if isinstance(item, _AST)])
        elif isinstance(value, _AST):
            found.append(value)
    return found


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def walk_outside_scopes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes below ``node`` that run where it runs: a nested function, lambda or class (its
    body runs when called or made, with names of its own) is left out, whole."""
    pending = child_nodes(node)
    while pending:
        current = pending.pop()
        if isinstance(current, _SCOPES):
            continue
        yield current
        pending.extend(child_nodes(current))


def kept_on(node: ast.AST, compute, *key):
    """``compute(node, *key)``, kept on ``node`` for the next ask: a rule asks the same question of
    a method, a class or a tree once per finding, and answering it afresh each time made a file of
    many findings quadratic. Kept under ``compute`` itself (no attribute name to collide with
    another cache's) and, where ``key`` is given, for those objects only (compared by identity: the
    facts or the set an answer was read with). A parsed tree is never changed, so neither is what
    its code says."""
    kept = node.__dict__.get("_ddpfix_kept")
    if kept is None:
        kept = node._ddpfix_kept = {}
    held = kept.get(compute)
    if held is not None and len(held[0]) == len(key) and all(a is b for a, b in zip(held[0], key)):
        return held[1]
    value = compute(node, *key)
    kept[compute] = (key, value)
    return value
