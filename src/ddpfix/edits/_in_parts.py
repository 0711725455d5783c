"""Carrying out edits that need LibCST on the top-level statements they touch, not on the whole file.

A fix that rebuilds blocks (a ``self.log`` moved out of a rank guard, data work moved out of a
``with``) needs LibCST's tree, but it touches one class or function. LibCST's parse, the positions
pass and the code generation of the whole file each grow with the file: on a 1 MB file they were
most of ``--diff``'s time. Here each top-level compound statement that holds a target is parsed on
its own, with the lines that follow it up to the next top-level statement, its edits are carried
out on that tree, and its new text takes the place of the old.

The bytes are those the whole-file pass gives, because the part is parsed as LibCST parses it in
the file:

- a compound statement shares no line with another top-level statement, and a part runs from its
  first line (its first decorator's) to the line where the next top-level statement starts: the
  comments and blank lines between belong to the part, so every block of the statement keeps the
  trailing lines LibCST gives it in the file (those indented deeper than the column-0 line that
  follows, which is the next statement there and the end of the part here);
- the text is the file's own, under the splice's conditions (UTF-8 without BOM or coding cookie, no
  form feed, no carriage return): LibCST reads it the same way, and each part's round trip is checked;
- statements an edit builds are indented with the module's default indent, which LibCST takes from
  the file's first indented line: a part whose own first indented line differs is declined;
- a target must lie inside the statement, never be the statement (its leading lines stay in the
  file, outside the part), nor the module (an added import, a main guard): those are declined.

Declined: ``None``, and the engine parses the whole file. ``tests/test_in_parts.py`` compares both
ways on every fixture, generated scripts and layouts of trailing lines; an adversarial review
compared them on 7,800 mutated files (4,670 through parts) and found no layout that tells them apart.

One difference is deliberate, as for the splice (``_splice``): where LibCST cannot give back some
other text of the file (a line holding only a backslash, a blank line before a last comment with no
newline), cannot parse it (an indented backslash line CPython accepts) or recurses too deep on it,
the whole-file pass refuses every fix of the file with a note. Here only the parts are LibCST's to
read, each checked by its own round trip, and the rest of the file is copied as it is: such a file
gets the fixes whose parts LibCST reads exactly (and each result is compiled, as always).
"""

from __future__ import annotations

import ast
import io
import tokenize
from bisect import bisect_right
from dataclasses import fields, replace

from ddpfix.edits._base import MODULE, NodeEdit, Span
from ddpfix.edits._splice import read_as_libcst_does

_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
             ast.With, ast.AsyncWith, ast.Try, ast.TryStar, ast.Match)


class _Part:
    """One top-level statement's lines, parsed by LibCST, with the edits that target inside it."""

    def __init__(self, first_line: int, start: int, end: int):
        self.first_line = first_line  # the part's first line in the file
        self.start, self.end = start, end  # character offsets of its text in the file
        self.module = None
        self.positions = None
        self.rewrites_module = False  # holds an edit of the module (the statement alone)

    def parse(self, text: str, default_indent: str) -> bool:
        """LibCST's tree of the part and its positions; False where they may not stand for the
        file's (a round trip that is not exact, another default indent)."""
        import libcst as cst

        from ddpfix.positions import Positions

        source = text[self.start:self.end]
        try:
            module = cst.parse_module(source)
        except (cst.ParserSyntaxError, RecursionError):
            return False
        if module.default_indent != default_indent:
            return False
        positions = Positions(module)
        if positions.code is None or positions.code != source:
            return False
        self.module, self.positions = module, positions
        return True

    def carry_out(self, edits: list[tuple[NodeEdit, NodeEdit]]) -> tuple[str, list[NodeEdit]]:
        """The part's new text with ``edits`` (each the file's edit and the same edit made for the
        part, in order) applied, and the file's edits refused."""
        from ddpfix.edits._apply import apply_edits

        fixed, refused = apply_edits(self.module, self.positions, [here for _edit, here in edits])
        lost = {id(here) for here in refused}
        return fixed.code, [edit for edit, here in edits if id(here) in lost]


class Parts:
    """The parts of a file that a set of edits touches (see the module's docstring)."""

    def __init__(self, text: str, parts: list[_Part], edits: dict[int, tuple[NodeEdit, _Part, NodeEdit]]):
        self.text = text
        self.parts = parts  # in the file's order
        # id of a file's edit -> that edit (kept, so that its id stays its own), its part, and the
        # edit made for the part. By identity: equal edits given twice are carried out twice, as
        # the whole-file pass does.
        self._edits = edits

    @classmethod
    def of(cls, text: str, data: bytes, tree: ast.Module, positions, edits) -> Parts | None:
        """The parts holding ``edits``, parsed; None where one of them cannot be carried out here.
        ``tree``/``positions``: CPython's tree of ``text`` and its positions (``TreePositions``)."""
        edits = list(edits)
        if not edits or not all(isinstance(edit, NodeEdit) for edit in edits):
            return None  # an edit of the module after the others (an import): the whole file
        if not read_as_libcst_does(text, data):
            return None
        statements = tree.body
        firsts = [_first_line(statement) for statement in statements]
        by_statement: dict[int, _Part] = {}
        found: dict[int, tuple[NodeEdit, _Part, NodeEdit]] = {}
        for edit in edits:
            index = _placed(edit, statements, firsts)
            if index is None:
                return None
            part = by_statement.get(index)
            if part is None:
                following = firsts[index + 1] if index + 1 < len(statements) else None
                end = len(text) if following is None else positions.line_start(following)
                start = positions.line_start(firsts[index])
                if getattr(statements[index], "decorator_list", None) and not text.startswith("@", start):
                    return None  # a decorator whose expression starts below its ``@``
                part = by_statement[index] = _Part(firsts[index], start, end)
            if edit.at == MODULE:
                if part.rewrites_module:
                    return None  # a second rebuild of one statement would find another statement
                part.rewrites_module = True
                found[id(edit)] = (edit, part, edit.alone()[1])
            else:
                found[id(edit)] = (edit, part, _moved_up(edit, firsts[index] - 1))
        default_indent = _default_indent(text)
        parts = sorted(by_statement.values(), key=lambda part: part.start)
        if not all(part.parse(text, default_indent) for part in parts):
            return None
        return cls(text, parts, found)

    def carry_out(self, edits) -> tuple[str, list[NodeEdit]]:
        """The file's text with ``edits`` (some or all of those the parts were made for, in the
        order given) applied, and the edits refused (a target not found, a comment that would be lost)."""
        mine: dict[int, list[tuple[NodeEdit, NodeEdit]]] = {id(part): [] for part in self.parts}
        for edit in edits:
            _edit, part, here = self._edits[id(edit)]
            mine[id(part)].append((edit, here))
        pieces, refused, done = [], [], 0
        for part in self.parts:
            pieces.append(self.text[done:part.start])
            if mine[id(part)]:
                code, lost = part.carry_out(mine[id(part)])
                pieces.append(code)
                refused += lost
            else:
                pieces.append(self.text[part.start:part.end])
            done = part.end
        pieces.append(self.text[done:])
        return "".join(pieces), refused


def _placed(edit: NodeEdit, statements: list[ast.stmt], firsts: list[int]) -> int | None:
    """The top-level compound statement whose part can carry ``edit`` out (its index), or None."""
    if edit.at == MODULE:
        alone = edit.alone()
        if alone is None:
            return None
        index = _line_from_end(statements, alone[0])
    else:
        at = edit.at
        index = bisect_right(firsts, at.line) - 1
        if index < 0 or at.end_line > statements[index].end_lineno:
            return None
        if at.line == firsts[index] and at.column == 0:
            return None  # the statement itself (or its first decorator): its leading lines are the file's
    if index is None or not isinstance(statements[index], _COMPOUND):
        return None
    return index


def _line_from_end(statements: list[ast.stmt], from_end: int) -> int | None:
    """The index of the first statement of the top-level statement line ``from_end`` lines before
    the module's end, lines counted as LibCST does (``a; b`` is one)."""
    line_starts = [i for i, statement in enumerate(statements)
                   if i == 0 or statement.lineno != statements[i - 1].end_lineno]
    return line_starts[-1 - from_end] if from_end < len(line_starts) else None


def _first_line(statement: ast.stmt) -> int:
    """The line a top-level statement starts on as LibCST counts it: its first decorator's."""
    decorators = getattr(statement, "decorator_list", None)
    return min(statement.lineno, *(d.lineno for d in decorators)) if decorators else statement.lineno


def _moved_up(edit: NodeEdit, lines: int) -> NodeEdit:
    """``edit`` with the spans it names counted from a part that starts after ``lines`` lines."""
    changes = {}
    for field in fields(edit):
        value = getattr(edit, field.name)
        if isinstance(value, Span) and value != MODULE:
            changes[field.name] = Span(value.line - lines, value.column, value.end_line - lines, value.end_column)
    return replace(edit, **changes)


def _default_indent(text: str) -> str:
    """The indent LibCST gives statements an edit builds: that of the file's first indented line."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.INDENT:
                return token.string
    except (tokenize.TokenError, SyntaxError):
        return ""  # no part will match: the whole file is parsed instead
    return " " * 4  # LibCST's default for a file with no indented line
