"""A light import-alias table: which dotted name a local name stands for.

Rules recognise library names through imports, not spelling (``import torch as th`` then
``th.Generator``; ``from torch import Generator``). LibCST's QualifiedNameProvider answers the same
question through full scope analysis at several times the cost of a parse; a table built from the
module's import statements answers it for the spellings real scripts use, in one cheap pass.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator


def dotted_name(node: ast.expr) -> str | None:
    """``a.b.c`` for a Name/Attribute chain; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


#: The statements of CPython's tree that hold blocks (LibCST's ``BaseCompoundStatement``s).
TREE_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
                 ast.AsyncFunctionDef, ast.ClassDef, ast.Match, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


def tree_blocks(tree: ast.Module) -> Iterator[list[ast.stmt]]:
    """Every statement list of CPython's tree: the module's body, then the blocks nested in it."""
    pending = [tree.body]
    while pending:
        block = pending.pop()
        yield block
        for statement in block:
            pending.extend(tree_child_blocks(statement))


def tree_child_blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists nested in ``statement``: bodies, ``else``, ``finally``, handlers, cases."""
    blocks = [getattr(statement, field, None) for field in ("body", "orelse", "finalbody")]
    blocks += [h.body for h in getattr(statement, "handlers", ())] + [c.body for c in getattr(statement, "cases", ())]
    return [b for b in blocks if isinstance(b, list) and b]


class _SetDict(dict):
    def __missing__(self, key):
        value = self[key] = set()
        return value


class ImportTable:
    """Maps the names a module binds by import to the dotted names they stand for."""

    def __init__(self, targets: dict[str, set[str]]):
        #: local name -> every dotted name an import binds it to (several: ``try: import lightning as L``
        #: / ``except ImportError: import pytorch_lightning as L``, or imports in different functions).
        self.targets = targets

    @property
    def names(self) -> dict[str, str]:
        """The names with exactly one meaning."""
        return {name: next(iter(found)) for name, found in self.targets.items() if len(found) == 1}

    @classmethod
    def from_tree(cls, tree: ast.Module) -> ImportTable:
        """The table of a module: every import of the file, nested ones included; a name the file
        also defines or assigns itself is left out (which one a use means depends on order)."""
        names: dict[str, set[str]] = _SetDict()
        local_defs: set[str] = set()
        stars: list[tuple[str, int]] = []  # (the module a star import reads, its line)
        # Where each name is bound by an import: the earliest line, and whether one is nested.
        first: dict[str, int] = {}
        nested: set[str] = set()
        top_level = {id(stmt) for stmt in tree.body}
        for block in tree_blocks(tree):
            for stmt in block:
                if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    for alias in stmt.names:
                        if alias.name == "*":
                            stars.append(("." * stmt.level + (stmt.module or ""), stmt.lineno))
                            continue
                        bound = alias.asname or alias.name.split(".", 1)[0]
                        first[bound] = min(first.get(bound, stmt.lineno), stmt.lineno)
                        if id(stmt) not in top_level:
                            nested.add(bound)
                if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    local_defs.add(stmt.name)
                elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                    local_defs.update(t.id for t in targets if isinstance(t, ast.Name))
                elif isinstance(stmt, ast.Import):
                    for alias in stmt.names:
                        if alias.asname is not None:
                            names[alias.asname].add(alias.name)
                        else:
                            top = alias.name.split(".", 1)[0]
                            names[top].add(top)
                elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module is not None:
                    for alias in stmt.names:
                        if alias.name != "*":
                            names[alias.asname or alias.name].add(f"{stmt.module}.{alias.name}")
        # ``from helpers import *`` may bind any name, one imported before it too (a ``DataLoader``
        # of its own): the name may then mean either. Not where every import of the name is at the
        # top level after the last star import (the later binding is the one code reads then).
        for module, line in stars:
            for name in names:
                if name in nested or first[name] < line:
                    names[name].add(f"{module}.{name}")
        return cls._without(names, local_defs)

    @classmethod
    def _without(cls, names: dict[str, set[str]], local_defs: set[str]) -> ImportTable:
        # A class, function or assignment of the file's own with an imported name makes the name
        # ambiguous: which one a call means depends on order, so the name is not recognised at all.
        for name in local_defs:
            names.pop(name, None)
        return cls(dict(names))

    def qualify_all(self, node: ast.expr) -> set[str]:
        """Every dotted name ``node`` may stand for through the imports (empty: none)."""
        targets, rest = self._targets_of(node)
        return {f"{target}.{rest}" if rest else target for target in targets}

    def qualify(self, node: ast.expr) -> str | None:
        """The dotted name an expression like ``th.Generator`` stands for, if the imports say so unambiguously."""
        # Distinct targets give distinct dotted names: one target, one meaning. A name imported
        # from many places (a generated file's hundreds of ``from x import Model``) costs nothing.
        targets, rest = self._targets_of(node)
        if len(targets) != 1:
            return None
        (target,) = targets
        return f"{target}.{rest}" if rest else target

    def _targets_of(self, node: ast.expr) -> tuple[Collection[str], str]:
        """What the first name of ``node``'s dotted name is imported as, and the rest of the name."""
        dotted = dotted_name(node)
        if dotted is None:
            return (), ""
        head, _, rest = dotted.partition(".")
        return self.targets.get(head, ()), rest

    def is_any(self, node: ast.expr, qualified_names: frozenset[str] | set[str]) -> bool:
        return self.qualify(node) in qualified_names
