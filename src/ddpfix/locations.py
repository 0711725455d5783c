"""Where a node of CPython's tree stands, as LibCST counts — without importing LibCST.

A report (``--check``, the language server) reads only CPython's tree; LibCST, which takes longer to
import than ddpfix's whole report of a small file, is loaded only once a fix is carried out. The
ranges here have LibCST's shape (``.start.line``, ``.end.column``), so rules and edits read either.
"""

from __future__ import annotations

from typing import NamedTuple

from ddpfix.lazy_regex import lazy_compile

# As LibCST counts lines: ``\r\n``, a lone ``\r`` and ``\n`` each end one.
_NEWLINE = lazy_compile(r"\r\n?|\n")


class CodePosition(NamedTuple):
    line: int  # 1-based
    column: int  # 0-based, in characters


class CodeRange(NamedTuple):
    start: CodePosition
    end: CodePosition


class TreePositions:
    """``positions[node]`` for a node of CPython's ``ast`` tree, as LibCST counts: 1-based lines,
    0-based columns in characters (``ast`` counts columns in UTF-8 bytes of the line). The same
    ranges ``Positions`` gives the LibCST node of the same code (a test compares them)."""

    def __init__(self, text: str):
        self._text = text
        self._line_starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]

    def _line(self, number: int) -> str:
        starts = self._line_starts
        end = starts[number] if number < len(starts) else len(self._text)
        return self._text[starts[number - 1]:end]

    def _column(self, line: int, byte_offset: int) -> int:
        text = self._line(line)
        if text.isascii():
            return byte_offset
        return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="replace"))

    def __getitem__(self, node) -> CodeRange:
        return CodeRange(
            CodePosition(node.lineno, self._column(node.lineno, node.col_offset)),
            CodePosition(node.end_lineno, self._column(node.end_lineno, node.end_col_offset)),
        )

    def offset(self, line: int, byte_column: int) -> int:
        """Where ``ast``'s (line, column) stands in the text, in characters."""
        return self._line_starts[line - 1] + self._column(line, byte_column)

    def line_start(self, line: int) -> int:
        return self._line_starts[line - 1]

    def segment(self, node) -> str:
        """The source text of ``node``."""
        return self._text[self.offset(node.lineno, node.col_offset):self.offset(node.end_lineno, node.end_col_offset)]
