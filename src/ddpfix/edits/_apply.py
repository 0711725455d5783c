"""Carrying out typed edits on LibCST's tree: finding each edit's node by its span, then one pass
that rewrites them (inner nodes first, so an outer edit sees the inner fixes)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

import libcst as cst

from ddpfix.edits._base import MODULE, ModuleEdit, NodeEdit
from ddpfix.positions import Positions
from ddpfix.edits._args import TargetedTransformer, remembered_comments
from ddpfix.edits._walk import walk

Edit = NodeEdit | ModuleEdit


def _kinds(edit: NodeEdit) -> tuple[type, ...]:
    names = (edit.kind,) if isinstance(edit.kind, (str, type)) else edit.kind
    return tuple(getattr(cst, name) if isinstance(name, str) else name for name in names)


class _Targets(cst.CSTVisitor):
    """The node each edit points at: the outermost node of the edit's kind at its span. Spans are
    compared as character offsets, and a node none of whose descendants can hold a target is not
    entered: a fix touches a few lines of a file."""

    def __init__(self, positions: Positions, edits: list[NodeEdit]):
        super().__init__()
        self.positions = positions
        self.wanted: dict[tuple[int, int], list[tuple[NodeEdit, tuple[type, ...]]]] = {}
        for edit in edits:
            at = edit.at
            start = positions.offset_of(at.line, at.column)
            end = positions.offset_of(at.end_line, at.end_column)
            self.wanted.setdefault((start, end), []).append((edit, _kinds(edit)))
        self.starts = sorted(start for start, _end in self.wanted)
        self.found: dict[NodeEdit, cst.CSTNode] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        span = self.positions.offsets(node)
        if span is not None:
            for edit, kinds in self.wanted.get(span, ()):
                if edit not in self.found and isinstance(node, kinds):
                    self.found[edit] = node  # the outermost comes first
        outer = self.positions.outer(node)
        if outer is None:
            return True
        first = bisect_left(self.starts, outer[0])
        return first < len(self.starts) and self.starts[first] <= outer[1]  # a target starts inside


class _Apply(TargetedTransformer):
    def __init__(self, rewrites: dict[cst.CSTNode, list[NodeEdit]], positions: Positions):
        super().__init__(rewrites, positions)
        self.rewrites = rewrites

    def on_leave(self, original_node, updated_node):
        updated = super().on_leave(original_node, updated_node)
        for edit in self.rewrites.get(original_node, ()):
            if not isinstance(updated, cst.CSTNode):
                break  # removed or split by an earlier edit of the node: the rule ordered them so
            updated = edit.rewrite(updated)
        return updated


def apply_edits(module: cst.Module, positions: Positions, edits: Iterable[Edit]) -> tuple[cst.Module, list[Edit]]:
    """``module`` with ``edits`` applied, and the edits that could not be (target not found, or a
    comment would be lost). Edits of one node apply in the order given; a rewrite inside another
    one's target is kept (each applies to the updated node). Module edits come last, in order."""
    with remembered_comments():
        return _apply_edits(module, positions, list(edits))


def _apply_edits(module: cst.Module, positions: Positions, edits: list[Edit]) -> tuple[cst.Module, list[Edit]]:
    node_edits = [e for e in edits if isinstance(e, NodeEdit) and e.at != MODULE]
    on_module = [e for e in edits if isinstance(e, NodeEdit) and e.at == MODULE]
    targets = _Targets(positions, node_edits)
    if node_edits:
        walk(module, targets)
    rewrites: dict[cst.CSTNode, list[NodeEdit]] = {}
    refused: list[Edit] = []
    for edit in node_edits:
        node = targets.found.get(edit)
        if node is None or not edit.comments_kept(node, edit.rewrite(node)):
            refused.append(edit)
            continue
        rewrites.setdefault(node, []).append(edit)
    if rewrites:
        module = module.visit(_Apply(rewrites, positions))
    for edit in on_module:
        rewritten = edit.rewrite(module)
        if not isinstance(rewritten, cst.Module) or not edit.comments_kept(module, rewritten):
            refused.append(edit)
            continue
        module = rewritten
    for edit in edits:
        if isinstance(edit, ModuleEdit):
            module = edit.carry_out(module)
    return module, refused
