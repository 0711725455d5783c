"""Where each node of a LibCST module stands: LibCST's ``PositionProvider`` answers, at a third of its cost.

``PositionProvider`` generates the module's code once and, for every token, splits it on newlines
and builds ``CodePosition``/``CodeRange`` objects for every node: on Lightning scripts that is 2.4×
the parse, and it was re-run after every rule that rewrote the file. Here the same code generation
only counts characters: a node's span is a pair of offsets into the generated code, turned into a
line and a column (by bisection over the line starts) only for the few nodes a rule asks about.
The answers are the same ranges (a test compares the two over the fixtures and generated programs).

A pass can stop at a node (``until``): a rule that reports one node near the top of a big file
does not pay for generating the rest of it.
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
