"""Rewriting a call: the attribute it calls, its whole argument list; and reading a call's layout
from the source text, so that a rule's ``check`` can tell (before any LibCST parse) which comments
an edit of the call keeps.

LibCST keeps a call's layout in whitespace nodes: after ``(`` (``Call.whitespace_before_args``),
around each comma, after the last argument. ``CallLayout`` finds the same places in the text (by
tokenizing the call), so the questions "which comments stand where" have one answer on both trees.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections import Counter
from dataclasses import dataclass
from itertools import accumulate

from ddpfix.edits._base import NodeEdit, Span, cst


@dataclass(frozen=True)
class RenameAttribute(NodeEdit):
    """``value.name`` at ``attribute`` becomes ``value.<name>``: the object, its parentheses and
    the dot's layout stay as they are (``x.cuda`` -> ``x.to``)."""

    attribute: Span
    name: str
    kind = "Attribute"

    @property
    def at(self) -> Span:
        return self.attribute

    def rewrite(self, node: cst.Attribute) -> cst.Attribute:
        return node.with_changes(attr=cst.Name(self.name))


@dataclass(frozen=True)
class ReplaceArguments(NodeEdit):
    """The arguments of the call at ``call`` replaced by ``arguments`` (each one argument's code:
    ``x``, ``name=x``) followed by the call's own keyword arguments named in ``keep``, in the
    call's order, each written ``name=value`` with its value as it stands (comments and fixes
    inside it kept).

    The arguments are laid out as ``SetKeyword`` appends one: the whitespace after ``(`` stays, and
    separates the arguments where it is not empty (one argument per line stays so); what stood
    after the old last argument (a trailing comma, a line break before ``)``) goes. A comment among
    the old arguments would be lost, one after ``(`` repeated by a second argument: the edit is then
    refused (``CallLayout.replace_arguments_keeps_comments`` says so beforehand)."""

    call: Span
    arguments: tuple[str, ...]
    keep: tuple[str, ...] = ()
    kind = "Call"

    @property
    def at(self) -> Span:
        return self.call

    def rewrite(self, node: cst.Call) -> cst.Call:
        kept = [arg for arg in node.args if arg.keyword is not None and arg.keyword.value in self.keep]
        from ddpfix.edits._args import tight_equal, with_argument

        rebuilt = node.with_changes(args=())
        for code in self.arguments:
            rebuilt = with_argument(rebuilt, _parse_argument(code))
        for arg in kept:
            rebuilt = with_argument(rebuilt, cst.Arg(value=arg.value, keyword=arg.keyword, equal=tight_equal()))
        return rebuilt


def _parse_argument(code: str) -> cst.Arg:
    """One argument from its code, with no layout of its own."""
    return cst.ensure_type(cst.parse_expression(f"f({code})"), cst.Call).args[0]


# --- the same places, read off the text of a call of CPython's tree ------------------------------------


@dataclass(frozen=True)
class Argument:
    """Where one argument stands, in characters of the file's text: ``start`` at its first token
    (its keyword, its ``*``, or the first parenthesis around its value), ``value`` where its value
    starts with the parentheses around it (after ``name=``), ``end`` after its last token, and
    ``comma`` the offset of the comma after it (None for the last without a trailing comma)."""

    start: int
    value: int
    end: int
    comma: int | None


@dataclass(frozen=True)
class CallLayout:
    """A call's arguments as LibCST's tree holds them, read from the text: ``opened`` just after the
    ``(`` of the arguments, ``closing`` at the ``)``, the ``arguments`` in source order, and every
    comment of the call's text as (offset, text)."""

    opened: int
    closing: int
    arguments: tuple[Argument, ...]
    comments: tuple[tuple[int, str], ...]

    def comments_between(self, first: int, stop: int) -> list[str]:
        return [text for at, text in self.comments if first <= at < stop]

    def replace_arguments_keeps_comments(self, added: int, kept: set[int]) -> bool:
        """Whether ``ReplaceArguments`` with ``added`` new arguments keeps every comment when it
        keeps the values of the arguments at the indices ``kept``: the old arguments' comments go,
        except those inside a kept value; the whitespace after ``(`` is copied as the separator of
        each argument after the first, its comments with it. The two may cancel: the edit is
        refused only where the call would not hold the same comments (``NodeEdit.comments_kept``)."""
        first = self.arguments[0].start if self.arguments else self.closing
        lost = self.comments_between(first, self.closing)
        for index in kept:
            argument = self.arguments[index]
            for text in self.comments_between(argument.value, argument.end):
                lost.remove(text)
        repeated = self.comments_between(self.opened, first) * max(added + len(kept) - 1, 0)
        return Counter(lost) == Counter(repeated)

    def append_keeps_comments(self) -> bool:
        """Whether ``SetKeyword`` appending a new keyword keeps every comment once: it copies the
        whitespace before the last argument (after the comma before it, or after ``(``) as the new
        separator, and after a trailing comma what stood between the last value and that comma."""
        if not self.arguments:
            return True
        last = self.arguments[-1]
        separator = self.arguments[-2].comma + 1 if len(self.arguments) > 1 else self.opened
        if self.comments_between(separator, last.start):
            return False
        return last.comma is None or not self.comments_between(last.end, last.comma)

    def replace_value_keeps_comments(self, index: int) -> bool:
        """Whether replacing the value of the argument at ``index`` (``ReplaceExpression``) keeps
        every comment: none may stand inside the value or its parentheses."""
        argument = self.arguments[index]
        return not self.comments_between(argument.value, argument.end)


_LAYOUT = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER})


def call_layout(view, call: ast.Call) -> CallLayout | None:
    """The layout of ``call`` (``view``: the file's ``TreeView``); None where its text does not
    tokenize or its arguments are not where ``ast`` puts them (a lone generator expression, whose
    parentheses are the call's), which a caller takes as "an edit may lose a comment"."""
    positions = view.positions
    first = positions.offset(call.lineno, call.col_offset)
    tokens = _tokens(view.text[first:positions.offset(call.end_lineno, call.end_col_offset)], first)
    if tokens is None:
        return None
    code = [t for t in tokens if t[0] != tokenize.COMMENT]
    comments = tuple((at, text) for kind, text, at, _end in tokens if kind == tokenize.COMMENT)
    opened_at = _matching_open(code)
    if opened_at is None:
        return None
    opened, closing = code[opened_at][3], code[-1][2]
    nodes = sorted([*call.args, *call.keywords], key=lambda a: (a.lineno, a.col_offset))
    spans = [(positions.offset(n.lineno, n.col_offset), positions.offset(n.end_lineno, n.end_col_offset)) for n in nodes]
    # Between two arguments' ``ast`` spans stand only the parentheses around them and one comma.
    bounds = [opened, *(at for span in spans for at in span), closing]
    gaps = [[t for t in code if bounds[2 * i] <= t[2] and t[3] <= bounds[2 * i + 1]] for i in range(len(spans) + 1)]
    if any(not bounds[2 * i] <= bounds[2 * i + 1] for i in range(len(spans) + 1)):
        return None
    arguments: list[Argument] = []
    for index, node in enumerate(nodes):
        before, after = gaps[index], gaps[index + 1]
        opening = _after_comma(before) if index else before
        closing_parens, comma = _before_comma(after)
        if opening is None or closing_parens is None or any(t[1] != "(" for t in opening):
            return None
        if len(closing_parens) != len(opening) or any(t[1] != ")" for t in closing_parens):
            return None
        start, end = spans[index]
        if opening:
            start, end = opening[0][2], closing_parens[-1][3]
        value = start
        if isinstance(node, ast.keyword) and node.arg is not None:
            value = _keyword_value_start(code, start, positions.offset(node.value.lineno, node.value.col_offset))
        arguments.append(Argument(start, value, end, comma))
    if not nodes and gaps[0]:
        return None
    return CallLayout(opened, closing, tuple(arguments), comments)


def _after_comma(gap: list[tuple[int, str, int, int]]) -> list[tuple[int, str, int, int]] | None:
    """The tokens of a gap between two arguments after its one comma."""
    commas = [i for i, t in enumerate(gap) if t[1] == ","]
    return gap[commas[0] + 1:] if len(commas) == 1 else None


def _before_comma(gap: list[tuple[int, str, int, int]]) -> tuple[list | None, int | None]:
    """The tokens of a gap after an argument before its comma, and the comma's offset (None where
    the last argument has none)."""
    commas = [i for i, t in enumerate(gap) if t[1] == ","]
    if len(commas) > 1:
        return None, None
    if not commas:
        return gap, None
    return gap[:commas[0]], gap[commas[0]][2]


def _keyword_value_start(code: list[tuple[int, str, int, int]], keyword: int, value: int) -> int:
    """Where a keyword's value starts with its parentheses: the first token after the ``=``."""
    between = [t for t in code if keyword < t[2] < value]
    equals = next((i for i, t in enumerate(between) if t[1] == "="), None)
    return between[equals + 1][2] if equals is not None and equals + 1 < len(between) else value


def _matching_open(code: list[tuple[int, str, int, int]]) -> int | None:
    """The index of the ``(`` that the last token (the call's ``)``) closes."""
    if not code or code[-1][1] != ")":
        return None
    opened: list[int] = []
    for index, (kind, text, _start, _end) in enumerate(code):
        if kind != tokenize.OP or len(text) != 1:
            continue
        if text in "([{":
            opened.append(index)
        elif text in ")]}":
            if not opened:
                return None
            match = opened.pop()
            if index == len(code) - 1:
                return match
    return None


def _tokens(text: str, base: int) -> list[tuple[int, str, int, int]] | None:
    """The tokens of ``text`` (a balanced piece of code) as (type, string, start, end), offsets in
    characters counted from ``base``; layout tokens left out. None if it does not tokenize."""
    lines = io.StringIO(text, newline="").readlines()  # every line break kept as written
    starts = list(accumulate((len(line) for line in lines), initial=base))
    found = []
    try:
        for token in tokenize.generate_tokens(iter(lines).__next__):
            kind = token.type
            if kind in _LAYOUT:
                continue
            if kind == tokenize.ERRORTOKEN:
                if token.string.isspace():
                    continue  # a lone "\r" ends a line for LibCST and ``ast``, not for ``tokenize``
                return None
            (row, column), (end_row, end_column) = token.start, token.end
            found.append((kind, token.string, starts[row - 1] + column, starts[end_row - 1] + end_column))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return found
