"""DDP012 unseeded-random-split: where the name the fix writes (``torch`` in
``torch.Generator().manual_seed(...)``) is bound, on both trees.

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

import libcst as cst

from ddpfix.imports import dotted_name

NOT_BOUND = "(not rewritten: `{name}` is not imported where this call runs, so the fix would raise NameError)"

_TREE_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_CST_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


# --- CPython's tree ----------------------------------------------------------------------------

def _tree_import_binds(statement: ast.stmt, name: str) -> bool:
    return isinstance(statement, ast.Import) and any(
        (a.asname == name and a.name == "torch") or (a.asname is None and name == "torch" and a.name.split(".", 1)[0] == "torch")
        for a in statement.names)


def _tree_scope_imports(scope: ast.AST, name: str) -> bool:
    """The scope binds ``name`` by an import somewhere in its own code (nested scopes left out)."""
    pending = list(ast.iter_child_nodes(scope))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import) and any((a.asname or a.name.split(".", 1)[0]) == name for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            return True
        if not isinstance(node, _TREE_SCOPES):
            pending.extend(ast.iter_child_nodes(node))
    return False


def _before(statement: ast.stmt, call: ast.Call) -> bool:
    return statement.end_lineno < call.lineno  # lines only: columns count bytes here, characters there


def tree_other_bindings(tree: ast.Module, name: str) -> bool:
    for node in ast.walk(tree):
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
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
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

def _cst_import_names(node: cst.CSTNode) -> list[tuple[str, str]]:
    """(bound name, dotted target) of an ``import`` / ``from`` statement."""
    found = []
    if isinstance(node, cst.Import):
        for alias in node.names:
            full = dotted_name(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                found.append((alias.asname.name.value, full))
            else:
                top = full.split(".", 1)[0]
                found.append((top, top))
    elif isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
        for alias in node.names:
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                found.append((alias.asname.name.value, ""))
            elif isinstance(alias.name, cst.Name):
                found.append((alias.name.value, ""))
    return found


def _cst_scope_imports(scope: cst.CSTNode, name: str) -> bool:
    found = []

    class Imports(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if node is not scope and isinstance(node, _CST_SCOPES):
                return False
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                found.extend(bound for bound, _ in _cst_import_names(node) if bound == name)
                return False
            return True

    scope.visit(Imports())
    return bool(found)


def _cst_direct_imports(body, name: str) -> list[cst.CSTNode]:
    """The ``import torch`` statements (binding ``name``) standing directly in a block."""
    found = []
    for line in body:
        if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in line.body:
                if isinstance(small, cst.Import) and any(
                        bound == name and (target == "torch" or (bound == "torch" and target.split(".", 1)[0] == "torch"))
                        for bound, target in _cst_import_names(small)):
                    found.append(small)
    return found


def cst_other_bindings(module: cst.Module, name: str) -> bool:
    found = []

    def names_in(target) -> bool:
        hit = []

        class Names(cst.CSTVisitor):
            def visit_Name(self, node: cst.Name) -> None:
                hit.append(node.value == name)

            def visit_Attribute(self, node: cst.Attribute) -> bool:
                return False

            def visit_Subscript(self, node: cst.Subscript) -> bool:
                return False

        target.visit(Names())
        return any(hit)

    class Bindings(cst.CSTVisitor):
        def visit_Param(self, node: cst.Param) -> None:
            found.append(node.name.value == name)

        def visit_Global(self, node: cst.Global) -> None:
            found.append(any(item.name.value == name for item in node.names))

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            found.append(any(item.name.value == name for item in node.names))

        def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
            found.append(node.name is not None and isinstance(node.name.name, cst.Name) and node.name.name.value == name)

        def visit_ExceptStarHandler(self, node) -> None:
            found.append(node.name is not None and isinstance(node.name.name, cst.Name) and node.name.name.value == name)

        def visit_For(self, node: cst.For) -> None:
            found.append(names_in(node.target))

        def visit_CompFor(self, node: cst.CompFor) -> None:
            found.append(names_in(node.target))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            found.append(names_in(node.target))

        def visit_WithItem(self, node: cst.WithItem) -> None:
            found.append(node.asname is not None and names_in(node.asname.name))

    module.visit(Bindings())
    return any(found)


def cst_bound(module: cst.Module, call: cst.Call, scopes: tuple[cst.CSTNode, ...], name: str, position) -> bool:
    """``tree_bound`` on LibCST's tree; ``position`` gives a node's CodeRange."""
    here = position(call).start.line

    def before(node: cst.CSTNode) -> bool:
        return position(node).end.line < here

    for scope in reversed(scopes):
        if isinstance(scope, (cst.Lambda, cst.ClassDef)) and _cst_scope_imports(scope, name):
            return False
        if _cst_scope_imports(scope, name):
            block = scope.body.body if isinstance(scope.body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
            if isinstance(scope.body, cst.SimpleStatementSuite):
                block = [scope.body]
            return any(before(s) for s in _cst_direct_imports(block, name))
    return any(before(s) for s in _cst_direct_imports(module.body, name))
