"""Which names a statement reads, binds and may change: what decides whether two statements may swap."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ddpfix.transforms._tree_names import (  # noqa: F401 - the names this module's users import from here
    CONSTANTS, PURE_CALLEES, READ_ONLY_METHODS, StatementNames, settled,
)
from ddpfix.transforms._walk import walk


def root_name(node: cst.BaseExpression) -> str | None:
    """``dm`` for ``dm``, ``dm.x.y``, ``dm[0]``, ``dm.f().x``; None for anything else."""
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node.value if isinstance(node, cst.Name) else None


def _callee_name(func: cst.BaseExpression) -> str | None:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


class _Collect(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.names = StatementNames()
        self.not_loads: set[int] = set()

    def _bind(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.names.binds.add(target.value)
            self.not_loads.add(id(target))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)
        else:
            root = root_name(target)
            if root is not None:
                self.names.assigns.add(root)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)
        root = root_name(node.target)
        if root is not None:
            self.names.reads.add(root)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        if isinstance(node.name, (cst.Name, cst.Tuple, cst.List)):
            self._bind(node.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind(node.target)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:
            name = node.name
            while isinstance(name, cst.Attribute):
                name = name.value
            self._bind(name)
        self.not_loads.update(id(n) for n in _all_names(node.name))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.module is not None:
            self.not_loads.update(id(n) for n in _all_names(node.module))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bind(node.name)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bind(node.name)

    def visit_Param(self, node: cst.Param) -> None:
        self.not_loads.add(id(node.name))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.not_loads.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.not_loads.add(id(node.keyword))

    def visit_Call(self, node: cst.Call) -> None:
        callee = _callee_name(node.func)
        if isinstance(node.func, cst.Attribute) and callee not in READ_ONLY_METHODS:
            root = root_name(node.func.value)
            if root is not None:
                self.names.writes.add(root)
        if callee in PURE_CALLEES or callee in READ_ONLY_METHODS:
            return
        for arg in node.args:
            root = root_name(arg.value)
            if root is not None:
                self.names.writes.add(root)

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self.not_loads:
            self.names.reads.add(node.value)


def _all_names(node: cst.CSTNode):
    if isinstance(node, cst.Name):
        yield node
    for child in node.children:
        yield from _all_names(child)


def statement_names(statement: cst.CSTNode) -> StatementNames:
    collect = _Collect()
    walk(statement, collect)
    return settled(collect.names)


class _Exits(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.found: str | None = None

    def visit_FunctionDef(self, node) -> bool:
        return False

    visit_Lambda = visit_ClassDef = visit_FunctionDef

    def _hit(self, word: str) -> None:
        self.found = self.found or word

    def visit_Return(self, node) -> None:
        self._hit("return")

    def visit_Raise(self, node) -> None:
        self._hit("raise")

    def visit_Break(self, node) -> None:
        self._hit("break")

    def visit_Continue(self, node) -> None:
        self._hit("continue")

    def visit_Yield(self, node) -> None:
        self._hit("yield")


def exit_in(statement: cst.CSTNode) -> str | None:
    """The first return/raise/break/continue/yield in ``statement`` (not in a function defined there)."""
    exits = _Exits()
    walk(statement, exits)
    return exits.found
