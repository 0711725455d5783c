"""DDP012 unseeded-random-split: where the name the fix writes (``torch`` in
``torch.Generator().manual_seed(...)``) is bound, on CPython's tree (the rule's one analysis).

The fix writes the name the file imports torch under. ``ctx.imports`` gathers imports from every
block, so that name may be bound only inside another function (``def prepare(): import torch``):
there ``torch.Generator()`` raises NameError when the split runs, which compiling cannot catch. The
name is proven bound where the call runs when

- the innermost scope around the call (function, lambda, class body) that imports the name imports
  it by a statement directly in its body, before the call (``def setup(self): import torch`` then the
  split), or
- no scope around the call binds it, and an ``import torch`` (``as <name>``, or ``import torch.x``
  for ``torch``) stands directly at the module's top level, ending on a line before the call's: top-level code runs in
  order, and a function whose text follows the import runs after it;

and nowhere in the file is the name a parameter, a loop/``with``/``except``/comprehension/walrus
target, or named by ``global``/``nonlocal`` (assignments and definitions already make the import
table drop it). A call inside an enclosing scope that binds it otherwise is not proven either.
"""

from __future__ import annotations

import ast
from ddpfix.ast_walk import child_nodes, walk
from ddpfix.analysis.ast_shapes import every_node

NOT_BOUND = "(not rewritten: `{name}` is not imported where this call runs, so the fix would raise NameError)"

_TREE_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _tree_import_binds(statement: ast.stmt, name: str) -> bool:
    return isinstance(statement, ast.Import) and any(
        (a.asname == name and a.name == "torch") or (a.asname is None and name == "torch" and a.name.split(".", 1)[0] == "torch")
        for a in statement.names)


def _tree_scope_imports(scope: ast.AST, name: str) -> bool:
    """The scope binds ``name`` by an import somewhere in its own code (nested scopes left out)."""
    pending = child_nodes(scope)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import) and any((a.asname or a.name.split(".", 1)[0]) == name for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            return True
        if not isinstance(node, _TREE_SCOPES):
            pending.extend(child_nodes(node))
    return False


def _before(statement: ast.stmt, call: ast.Call) -> bool:
    return statement.end_lineno < call.lineno  # lines only: columns count bytes here, characters there


def tree_other_bindings(tree: ast.Module, name: str) -> bool:
    for node in every_node(tree):
        if isinstance(node, ast.arg) and node.arg == name:
            return True
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return True
        if isinstance(node, ast.ExceptHandler) and node.name == name:
            return True
        targets = []
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr)):
            targets = [node.target]
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            targets = [node.optional_vars]
        for target in targets:
            if any(isinstance(n, ast.Name) and n.id == name for n in walk(target)):
                return True
    return False


def tree_bound(tree: ast.Module, call: ast.Call, scopes: tuple[ast.AST, ...], name: str) -> bool:
    """``name`` is proven bound to torch where ``call`` runs (``scopes``: outermost first)."""
    for scope in reversed(scopes):
        if isinstance(scope, (ast.Lambda, ast.ClassDef)) and _tree_scope_imports(scope, name):
            return False
        if _tree_scope_imports(scope, name):
            return any(_tree_import_binds(s, name) and _before(s, call) for s in scope.body)
    return any(_tree_import_binds(s, name) and _before(s, call) for s in tree.body)


# --- LibCST's tree ----------------------------------------------------------------------------
