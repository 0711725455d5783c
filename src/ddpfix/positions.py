"""Where each node of a LibCST module stands: LibCST's ``PositionProvider`` answers, at a third of its cost.

``PositionProvider`` generates the module's code once and, for every token, splits it on newlines
and builds ``CodePosition``/``CodeRange`` objects for every node: on Lightning scripts that is 2.4×
the parse, and it was re-run after every rule that rewrote the file. Here the same code generation
only counts characters: a node's span is a pair of offsets into the generated code, turned into a
line and a column (by bisection over the line starts) only for the few nodes a rule asks about.
The answers are the same ranges (a test compares the two over the fixtures and generated programs).

A pass can stop at a node (``until``): a rule that reports one node near the top of a big file
does not pay for generating the rest of it.

After a fix, ``Positions.after`` gives the fixed module's positions and code without generating
the top-level statements the fix did not enter (LibCST keeps those nodes as they were): their code
is the one generated before, their spans are shifted on demand.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState

from ddpfix.locations import CodePosition, CodeRange, TreePositions  # noqa: F401 - TreePositions: the LibCST-free half

# As LibCST counts lines: ``\r\n``, a lone ``\r`` and ``\n`` each end one.
_NEWLINE = re.compile(r"\r\n?|\n")


@dataclass(frozen=False)
class _OffsetState(CodegenState):
    """Code generation that records each node's (start, end) character offsets."""

    spans: dict = field(default_factory=dict)
    outer: dict = field(default_factory=dict)
    offset: int = 0
    indent_width: int = 0
    popped: str = ""
    _stack: list = field(default_factory=list)
    until: cst.CSTNode | None = None  # a partial pass stops once this node is generated

    def increase_indent(self, value: str) -> None:
        self.indent_tokens.append(value)
        self.indent_width += len(value)

    def decrease_indent(self) -> None:
        self.indent_width -= len(self.indent_tokens.pop())

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        self.offset += self.indent_width

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def pop_trailing_newline(self) -> None:
        # LibCST drops the module's last newline from its code but (like PositionProvider) not
        # from the running position; keep it for counting lines.
        if self.tokens:
            self.popped = self.tokens.pop()

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._stack.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        span = (self._stack.pop(), self.offset)
        self.outer[node] = span
        if node not in self.spans:  # a syntactic span recorded inside the node wins
            self.spans[node] = span
        if node is self.until:
            raise _Reached

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _Syntactic(self, node, start_node, end_node)


class _Reached(Exception):
    """The node a partial pass was asked for is done: every span recorded so far is final."""


class _Syntactic:
    """``with state.record_syntactic_position(node)``: the span without the node's own whitespace."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: _OffsetState, node, start_node, end_node):
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = self.state.offset

    def __exit__(self, kind, *exc) -> None:
        if kind is not None:
            return  # a partial pass stopping inside the node: its span is never asked for
        spans = self.state.spans
        start = spans[self.start_node][0] if self.start_node is not None else self.start
        end = spans[self.end_node][1] if self.end_node is not None else self.state.offset
        spans[self.node] = (start, end)


class Positions:
    """``positions[node]``: the node's ``CodeRange`` (1-based lines, 0-based columns), as
    ``MetadataWrapper(module).resolve(PositionProvider)[node]`` gives it."""

    def __init__(self, module: cst.Module, until: cst.CSTNode | None = None):
        """``until``: stop once that node is generated (the spans of the nodes before it and of the
        node itself are then known); ``complete`` says whether the pass went to the end."""
        state = _OffsetState(default_indent=module.default_indent, default_newline=module.default_newline, until=until)
        self.complete = True
        try:
            module._codegen(state)
        except _Reached:
            self.complete = until is module  # the module is the last node generated
        self._spans: dict[cst.CSTNode, tuple[int, int]] = state.spans
        self._outer: dict[cst.CSTNode, tuple[int, int]] = state.outer
        code = "".join(state.tokens)
        #: ``module.code``, generated by this same pass (None for a partial pass): a caller that
        #: needs both pays for one code generation.
        self.code: str | None = code if self.complete else None
        text = code + state.popped
        self._line_starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]

    def _position(self, offset: int) -> CodePosition:
        line = bisect_right(self._line_starts, offset) - 1
        return CodePosition(line + 1, offset - self._line_starts[line])

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        start, end = self._spans[node]
        return CodeRange(self._position(start), self._position(end))

    def __contains__(self, node: object) -> bool:
        return node in self._spans

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._spans)

    def __len__(self) -> int:
        return len(self._spans)

    def offsets(self, node: cst.CSTNode) -> tuple[int, int] | None:
        """Character offsets of ``node``'s own range (what ``positions[node]`` turns into lines and
        columns); None for a node not in the tree."""
        return self._spans.get(node)

    def offset_of(self, line: int, column: int) -> int:
        """The character offset of a (1-based line, 0-based column) position."""
        return self._line_starts[line - 1] + column

    def outer(self, node: cst.CSTNode) -> tuple[int, int] | None:
        """Character offsets of everything ``node`` generates (decorators, leading comments and
        whitespace included): a node's descendants all lie within. None for a node not in the tree."""
        return self._outer.get(node)

    def lines(self, node: cst.CSTNode) -> tuple[int, int]:
        """First and last line of ``node``, without building positions."""
        start, end = self._spans[node]
        return bisect_right(self._line_starts, start), bisect_right(self._line_starts, end)

    @staticmethod
    def after(module: cst.Module, before: cst.Module, positions: Positions) -> Positions:
        """``Positions(module)``, where ``module`` is ``before`` (whose complete ``positions`` are
        given) with a fix carried out: the top-level statements both share keep the code generated
        before, and only the others are generated. Top-level code does not depend on what is around
        it, only on the module's indent and newline. Where the two modules differ elsewhere (header,
        footer, settings, a statement shared twice), the whole module is generated."""
        shared = _shared_layout(module, before, positions)
        if shared is None:
            return Positions(module)
        return _Spliced(module, before, positions, shared)


def _same_nodes(first, second) -> bool:
    return len(first) == len(second) and all(a is b for a, b in zip(first, second))


def _shared_layout(module: cst.Module, before: cst.Module, positions: Positions) -> dict[int, tuple[int, int]] | None:
    """The code spans in ``before`` of its top-level statements, by id, when ``module`` can take the
    code of those it shares; else None."""
    if (positions.code is None or not before.body or not module.has_trailing_newline or not before.has_trailing_newline
            or module.default_indent != before.default_indent or module.default_newline != before.default_newline
            or not _same_nodes(module.header, before.header) or not _same_nodes(module.footer, before.footer)):
        return None
    spans: dict[int, tuple[int, int]] = {}
    for statement in before.body:
        span = positions.outer(statement)
        if span is None:
            return None
        spans[id(statement)] = span
    seen: set[int] = set()
    for statement in module.body:
        if id(statement) in spans:
            if id(statement) in seen:
                return None  # one node in two places: which one a span is asked for is not known
            seen.add(id(statement))
    return spans


class _Spliced(Positions):
    """``Positions`` of a module made by a fix from a module whose positions are known: own spans
    for what was generated (the statements the fix made), the earlier spans, shifted, for the code
    taken over (the header, the statements kept, the footer)."""

    def __init__(self, module: cst.Module, before: cst.Module, positions: Positions, shared: dict[int, tuple[int, int]]):
        old_code = positions.code
        first = shared[id(before.body[0])][0]
        last = shared[id(before.body[-1])][1]
        pieces = [old_code[:first]]
        segments = [(0, first, 0)]  # (start, end) in the old code, and the shift to the new one
        state = _OffsetState(default_indent=module.default_indent, default_newline=module.default_newline)
        state.offset = first
        for statement in module.body:
            span = shared.get(id(statement))
            if span is not None:
                segments.append((span[0], span[1], state.offset - span[0]))
                pieces.append(old_code[span[0]:span[1]])
                state.offset += span[1] - span[0]
            else:
                mark = len(state.tokens)
                statement._codegen(state)
                pieces.append("".join(state.tokens[mark:]))
        segments.append((last, len(old_code), state.offset - last))
        pieces.append(old_code[last:])
        code = "".join(pieces)
        state.spans[module] = state.outer[module] = (0, len(code))
        self.complete = True
        self.code = code
        self._spans = state.spans
        self._outer = state.outer
        self._old = positions
        segments.sort()
        self._segments = segments
        self._segment_starts = [segment[0] for segment in segments]
        self._line_starts = [0, *(m.end() for m in _NEWLINE.finditer(code))]

    def _shifted(self, span: tuple[int, int] | None) -> tuple[int, int] | None:
        """An earlier span in the new code, where it lies in code taken over; else None (its node
        was in a statement the fix replaced)."""
        if span is None:
            return None
        index = bisect_right(self._segment_starts, span[0]) - 1
        if index < 0:
            return None
        start, end, shift = self._segments[index]
        if span[1] > end:
            return None
        return span[0] + shift, span[1] + shift

    def offsets(self, node: cst.CSTNode) -> tuple[int, int] | None:
        own = self._spans.get(node)
        return own if own is not None else self._shifted(self._old.offsets(node))

    def outer(self, node: cst.CSTNode) -> tuple[int, int] | None:
        own = self._outer.get(node)
        return own if own is not None else self._shifted(self._old.outer(node))

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        span = self.offsets(node)
        if span is None:
            raise KeyError(node)
        return CodeRange(self._position(span[0]), self._position(span[1]))

    def __contains__(self, node: object) -> bool:
        return self.offsets(node) is not None  # type: ignore[arg-type]

    def lines(self, node: cst.CSTNode) -> tuple[int, int]:
        span = self.offsets(node)
        if span is None:
            raise KeyError(node)
        return bisect_right(self._line_starts, span[0]), bisect_right(self._line_starts, span[1])

    def __iter__(self) -> Iterator[cst.CSTNode]:
        raise TypeError("the nodes of spliced positions are not listed; generate Positions(module)")

    def __len__(self) -> int:
        raise TypeError("the nodes of spliced positions are not counted; generate Positions(module)")
