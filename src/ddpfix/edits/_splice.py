"""Carrying out simple edits on the text itself, without LibCST, where that provably gives the
same bytes as the LibCST pass (``_apply``).

Most fixes set or drop one keyword argument, or replace one expression. Carried out on LibCST's
tree, such a fix costs a LibCST parse, a positions pass and a code generation of the whole file
(three quarters of ``--diff``'s time on corpus B); carried out on the text, it costs a few string
slices. The two must never disagree, so this path takes only what it can read exactly and
declines everything else (the engine then uses LibCST):

- only edits with a ``splice`` (``NodeEdit.splice``), on targets found on CPython's tree by span;
- a file that is UTF-8 without BOM, coding cookie, form feed or carriage return (LibCST's own
  round trip is not exact there, and the LibCST pass refuses such fixes);
- no ``#`` and no backslash in a target's text: no comment can be moved or lost, no line joined;
- targets that do not overlap (edits of one target apply in order, each on the text the previous
  one left, read again);
- each edit decides on the target's text and its tree (``Segment``) and may decline (None).

One difference is deliberate: LibCST does not give back every file byte for byte (a form feed
before code, some whitespace-only lines at the end of a file), and the LibCST pass then refuses
every fix of the file with a note. This path needs no round trip: it writes the file's own bytes
but for the spliced targets, so such a file gets the fixes that need nothing else.

``tests/test_splice.py`` compares this path with LibCST's on the fixtures and generated calls.
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator

from ddpfix.edits._base import MODULE, NodeEdit
from ddpfix.locations import TreePositions

# The LibCST kinds an edit names, and the node of CPython's tree that stands for each.
_AST_KIND = {"Call": ast.Call, "BaseExpression": ast.expr}
# Nodes whose span on CPython's tree may include parentheses LibCST's node leaves out (a tuple's,
# a generator's, even the call's around a lone generator argument), or that LibCST has no node for
# (a subscript's bare tuple): LibCST finds no target there, so neither may this path.
_SPANS_DIFFER = (ast.Tuple, ast.GeneratorExp)
_SPACE = " \t"


class Segment:
    """A target's source text, its tree read from that text alone, and whether it may stand in
    parentheses of its own (LibCST's node then owns them, and replacing it drops them)."""

    def __init__(self, text: str, maybe_parenthesized: bool):
        self.text = text
        self.maybe_parenthesized = maybe_parenthesized
        self.node = ast.parse(text, mode="eval").body  # SyntaxError: the caller declines
        self._positions = TreePositions(text)

    def start(self, node: ast.AST) -> int:
        return self._positions.offset(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> int:
        return self._positions.offset(node.end_lineno, node.end_col_offset)


def splice(text: str, data: bytes, tree: ast.Module, positions: TreePositions, edits: Iterable) -> str | None:
    """``text`` with ``edits`` carried out, or None where this path cannot promise LibCST's result
    (the caller then carries them out on LibCST's tree). ``tree``/``positions``: CPython's tree of
    ``text`` and its positions."""
    edits = list(edits)
    if not edits or any(not _spliceable(edit) for edit in edits):
        return None
    if not read_as_libcst_does(text, data):
        return None
    by_target: dict[int, tuple[ast.AST, list[NodeEdit]]] = {}
    targets = _targets(tree, positions, edits)
    for edit in edits:
        node = targets.get(edit)
        if node is None:
            return None
        by_target.setdefault(id(node), (node, []))[1].append(edit)
    spans = []
    for node, node_edits in by_target.values():
        start = positions.offset(node.lineno, node.col_offset)
        end = positions.offset(node.end_lineno, node.end_col_offset)
        spans.append((start, end, node, node_edits))
    spans.sort(key=lambda span: span[0])
    if any(later[0] < earlier[1] for earlier, later in zip(spans, spans[1:])):
        return None  # nested or overlapping targets: LibCST applies the inner edit first
    pieces, done = [], 0
    for start, end, node, node_edits in spans:
        new = _carry_out(text, start, end, node, tree, positions, node_edits)
        if new is None:
            return None
        pieces += [text[done:start], new]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def plain_code(code: str) -> bool:
    """Code an edit may splice in as it is: LibCST's node parsed from it generates the same text
    (no surrounding whitespace, no newline, comment or backslash)."""
    return code == code.strip() and not any(c in code for c in "\n\r#\\")


def _spliceable(edit) -> bool:
    return isinstance(edit, NodeEdit) and edit.at != MODULE and edit.kind in _AST_KIND and type(edit).splice is not NodeEdit.splice


def read_as_libcst_does(text: str, data: bytes) -> bool:
    """The file's bytes are ``text`` in UTF-8, without BOM, coding cookie, form feed or carriage
    return: LibCST reads and writes such text exactly, so a rewrite of part of it may keep the rest
    as it is (here, and in ``_in_parts``)."""
    return "\f" not in text and "\r" not in text and data == text.encode("utf-8") and not _has_cookie(text)


def _has_cookie(text: str) -> bool:
    # PEP 263: a coding comment on line 1 or 2 (LibCST then encodes with it); UTF-8 is the default.
    head = text.split("\n", 2)[:2]
    return any(line.lstrip().startswith("#") and "coding" in line for line in head)


def _targets(tree: ast.Module, positions: TreePositions, edits: list[NodeEdit]) -> dict[NodeEdit, ast.AST]:
    """Each edit's target: the outermost node of the edit's kind at its span, as ``_apply._Targets``
    finds LibCST's (an edit whose first such node is one LibCST finds no target at has none).

    One walk for all the edits, outer nodes first (``ast.walk``'s order), entering only nodes
    within whose lines some edit's span starts: asked edit by edit, each walk read every statement
    of the method around it, and 20,000 fixes in one method took minutes."""
    wanted: dict[tuple[int, int], list[NodeEdit]] = {}
    for edit in edits:
        wanted.setdefault((edit.at.line, edit.at.end_line), []).append(edit)
    starts = sorted(line for line, _end in wanted)

    def some_span_starts_within(node: ast.AST) -> bool:
        index = bisect_left(starts, node.lineno)
        return index < len(starts) and starts[index] <= node.end_lineno

    found: dict[NodeEdit, ast.AST] = {}
    decided: set[NodeEdit] = set()
    for child in _outer_first(tree, some_span_starts_within):
        if getattr(child, "lineno", None) is None:
            continue  # entered (an ``arguments`` holds nodes with lines), never a target
        for edit in wanted.get((child.lineno, child.end_lineno), ()):
            if edit in decided or not isinstance(child, _AST_KIND[edit.kind]):
                continue
            where = positions[child]
            at = edit.at
            if (where.start.column, where.end.column) == (at.column, at.end_column):
                decided.add(edit)
                if not isinstance(child, _SPANS_DIFFER):
                    found[edit] = child
    return found


def _nodes_on(tree: ast.AST, line: int, end_line: int) -> Iterator[ast.AST]:
    """Nodes that may span lines ``line``..``end_line``, outer ones first (``ast.walk``'s order),
    entering only nodes that contain those lines."""
    return _outer_first(tree, lambda node: node.lineno <= line and end_line <= node.end_lineno)


def _outer_first(tree: ast.AST, enter: Callable[[ast.AST], bool]) -> Iterator[ast.AST]:
    """The nodes below ``tree``, outer ones first (``ast.walk``'s order), of those ``enter`` admits
    (a node without lines, such as an ``arguments`` or an operator, is always admitted): one that
    is not admitted is neither given nor entered."""
    todo = [tree]
    while todo:
        later = []
        for node in todo:
            for child in ast.iter_child_nodes(node):
                if getattr(child, "lineno", None) is None or enter(child):
                    yield child
                    later.append(child)
        todo = later


def _carry_out(text: str, start: int, end: int, node: ast.AST, tree: ast.Module, positions: TreePositions,
               edits: list[NodeEdit]) -> str | None:
    segment_text = text[start:end]
    if "#" in segment_text or "\\" in segment_text:
        return None
    parenthesized = _maybe_parenthesized(text, start, node, tree, positions)
    for edit in edits:
        try:
            segment = Segment(segment_text, parenthesized)
        except (SyntaxError, ValueError):
            return None
        if type(segment.node) is not type(node):
            return None  # an earlier edit replaced the node: LibCST would hand this one another kind
        segment_text = edit.splice(segment)
        if segment_text is None:
            return None
    return segment_text


def _maybe_parenthesized(text: str, start: int, node: ast.AST, tree: ast.Module, positions: TreePositions) -> bool:
    """Whether ``(`` may stand right before the node as its own parenthesis (LibCST's node then
    includes it): True unless the code before it on its line says otherwise."""
    before = start
    while before > 0 and text[before - 1] in _SPACE:
        before -= 1
    if before == 0 or text[before - 1] == "\n":
        return True  # the node opens its line: what is above is not read here
    if text[before - 1] != "(":
        return False
    # ``f(x)``: the call's own parenthesis before its first argument.
    for call in _nodes_on(tree, node.lineno, node.end_lineno):
        if isinstance(call, ast.Call) and call.args and call.args[0] is node:
            between = text[positions.offset(call.func.end_lineno, call.func.end_col_offset):before - 1]
            return between.strip(_SPACE) != ""
    return True
