"""Typed edits, and the one generic LibCST transformer that carries them out.

A rule that fixes decides once, on CPython's tree (``Rule.check``): each fixable finding carries its
edits — set or drop a keyword argument of a call, replace an expression, add an import — placed by
the span the rule read off its tree (``ctx.position(node)``: LibCST's line and column terms). Here
those edits are applied to LibCST's tree of the same version of the file, keeping every comment and
the layout around them. Nothing here decides anything about a pitfall: a rule that knows what to
change names it, this module knows only how to change it. So ``--check`` (the findings) and
``--write`` (the findings plus these edits) come from one analysis and cannot disagree.

An edit whose target is not found in LibCST's tree (which should not happen: both trees come from
the same bytes) is not applied, and the engine reports the finding as not fixed; an edit that would
lose a comment is refused the same way (the rule should have said so itself: ``comment_in``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import libcst as cst

from ddpfix.positions import Positions
from ddpfix.transforms._args import TargetedTransformer, keeps_comments, with_keyword, without_keyword
from ddpfix.transforms._edit_imports import ensure_import
from ddpfix.transforms._walk import walk


class Span(NamedTuple):
    """Where a node stands, as LibCST counts: 1-based lines, 0-based columns in characters."""

    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def of(cls, where) -> Span:
        """From a ``CodeRange`` (what ``ctx.position(node)`` answers on either tree)."""
        return cls(where.start.line, where.start.column, where.end.line, where.end.column)


@dataclass(frozen=True)
class SetKeyword:
    """``name=value`` in the call at ``call``: replaced in place where present, else appended in the
    call's own style (one argument per line stays one argument per line)."""

    call: Span
    name: str
    value: str


@dataclass(frozen=True)
class DropKeyword:
    """The keyword argument ``name`` removed from the call at ``call`` (its comma and layout kept)."""

    call: Span
    name: str


@dataclass(frozen=True)
class ReplaceExpression:
    """The expression at ``node`` replaced by ``code`` (an expression's source)."""

    node: Span
    code: str


@dataclass(frozen=True)
class AddImport:
    """``import <module>`` at the top of the file, after its imports, unless it is there."""

    module: str


Edit = SetKeyword | DropKeyword | ReplaceExpression | AddImport


class _Targets(cst.CSTVisitor):
    """The nodes the edits point at: the outermost node of the wanted kind at each span."""

    def __init__(self, positions: Positions, calls: set[Span], expressions: set[Span]):
        super().__init__()
        self.positions, self.calls, self.expressions = positions, calls, expressions
        self.found: dict[tuple[str, Span], cst.CSTNode] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        wanted = []
        if isinstance(node, cst.Call):
            wanted.append("call")
        if isinstance(node, cst.BaseExpression):
            wanted.append("expression")
        if wanted and node in self.positions:
            span = Span.of(self.positions[node])
            for kind in wanted:
                if span in (self.calls if kind == "call" else self.expressions):
                    self.found.setdefault((kind, span), node)  # the outermost comes first
        return True


class _Apply(TargetedTransformer):
    def __init__(self, rewrites: dict[cst.CSTNode, list], positions: Positions):
        super().__init__(rewrites, positions)
        self.rewrites = rewrites

    def on_leave(self, original_node, updated_node):
        updated = super().on_leave(original_node, updated_node)
        for rewrite in self.rewrites.get(original_node, ()):
            updated = rewrite(updated)
        return updated


def apply_edits(module: cst.Module, positions: Positions, edits: Iterable[Edit]) -> tuple[cst.Module, list[Edit]]:
    """``module`` with ``edits`` applied, and the edits that could not be (target not found, or a
    comment would be lost). Edits of one node apply in the order given; a rewrite inside another
    one's target is kept (each applies to the updated node)."""
    edits = list(edits)
    calls = {e.call for e in edits if isinstance(e, (SetKeyword, DropKeyword))}
    expressions = {e.node for e in edits if isinstance(e, ReplaceExpression)}
    targets = _Targets(positions, calls, expressions)
    if calls or expressions:
        walk(module, targets)
    rewrites: dict[cst.CSTNode, list] = {}
    refused: list[Edit] = []
    imports: list[str] = []
    for edit in edits:
        if isinstance(edit, AddImport):
            imports.append(edit.module)
            continue
        key = ("call", edit.call) if isinstance(edit, (SetKeyword, DropKeyword)) else ("expression", edit.node)
        node = targets.found.get(key)
        rewrite = _rewrite(edit)
        if node is None or not keeps_comments(node, rewrite(node)):
            refused.append(edit)
            continue
        rewrites.setdefault(node, []).append(rewrite)
    if rewrites:
        module = module.visit(_Apply(rewrites, positions))
    for name in imports:
        module = ensure_import(module, name)
    return module, refused


def _rewrite(edit: Edit):
    if isinstance(edit, SetKeyword):
        return lambda node: with_keyword(node, edit.name, edit.value)
    if isinstance(edit, DropKeyword):
        return lambda node: without_keyword(node, edit.name)
    if isinstance(edit, ReplaceExpression):
        replacement = cst.parse_expression(edit.code)
        return lambda node: replacement
    raise TypeError(f"not an edit of a node: {edit!r}")

