"""A light import-alias table: which dotted name a local name stands for.

Rules recognise library names through imports, not spelling (``import torch as th`` then
``th.Generator``; ``from torch import Generator``). LibCST's QualifiedNameProvider answers the same
question through full scope analysis at several times the cost of a parse; a table built from the
module's import statements answers it for the spellings real scripts use, in one cheap pass.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst


def _dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain; None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


def _statements(block: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every small statement, class and function of a block and of the blocks nested in it.

    Expressions are not entered: imports and definitions only ever stand as statements.
    """
    for stmt in getattr(block, "body", ()):
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield from stmt.body
            continue
        yield stmt
        if isinstance(stmt, cst.BaseCompoundStatement):
            for inner in _blocks(stmt):
                yield from _statements(inner)


def _blocks(stmt: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield stmt.body
    orelse = getattr(stmt, "orelse", None)
    if isinstance(orelse, cst.If):
        yield from _blocks(orelse)
    elif orelse is not None:
        yield orelse.body
    finalbody = getattr(stmt, "finalbody", None)
    if finalbody is not None:
        yield finalbody.body
    for handler in getattr(stmt, "handlers", ()):
        yield handler.body
    for case in getattr(stmt, "cases", ()):
        yield case.body


class ImportTable:
    """Maps the names a module binds by import to the dotted names they stand for."""

    def __init__(self, names: dict[str, str]):
        self.names = names

    @classmethod
    def from_module(cls, module: cst.Module) -> ImportTable:
        names: dict[str, str] = {}
        local_defs: set[str] = set()
        for stmt in _statements(module):
            if isinstance(stmt, (cst.ClassDef, cst.FunctionDef)):
                local_defs.add(stmt.name.value)
            if isinstance(stmt, cst.Import):
                for alias in stmt.names:
                    full = _dotted(alias.name)
                    if full is None:
                        continue
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        names[alias.asname.name.value] = full
                    else:
                        # ``import torch.utils.data`` binds ``torch``.
                        top = full.split(".", 1)[0]
                        names[top] = top
            elif isinstance(stmt, cst.ImportFrom) and not stmt.relative and stmt.module is not None:
                module_name = _dotted(stmt.module)
                if module_name is None or isinstance(stmt.names, cst.ImportStar):
                    continue
                for alias in stmt.names:
                    if not isinstance(alias.name, cst.Name):
                        continue
                    local = alias.name.value
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        local = alias.asname.name.value
                    names[local] = f"{module_name}.{alias.name.value}"
        # A class or function of the file's own with an imported name makes the name ambiguous:
        # which one a call means depends on order, so the name is not recognised at all.
        for name in local_defs:
            names.pop(name, None)
        return cls(names)

    def qualify(self, node: cst.BaseExpression) -> str | None:
        """The dotted name an expression like ``th.Generator`` stands for, if it comes from an import."""
        dotted = _dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        target = self.names.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    def is_any(self, node: cst.BaseExpression, qualified_names: frozenset[str] | set[str]) -> bool:
        return self.qualify(node) in qualified_names
