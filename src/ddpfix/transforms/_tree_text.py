"""Source-text questions about CPython's ``ast`` nodes, for the rules' ``check``: where a node
starts and ends, what stands between two places besides layout, whether a comment stands there,
and the code LibCST would quote for a node.

``ast`` keeps no comments, no parentheses around an expression and no whitespace; LibCST keeps
all three in its tree. Each function here reads from the text what LibCST's tree holds, and raises
``NeedsLibCST`` where the text alone cannot say. ``view`` is always the file's ``TreeView``.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from ddpfix.transforms.base import NeedsLibCST

#: One line break, as LibCST and ``ast`` count lines.
LINE_BREAK = re.compile(r"\r\n?|\n")
#: One line of text with its line break (the last line may have none).
_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")


def start(node: ast.AST, view) -> int:
    """Where ``node`` starts in ``view.text``, in characters (``ast`` counts UTF-8 bytes)."""
    return view.positions.offset(node.lineno, node.col_offset)


def end(node: ast.AST, view) -> int:
    """Where ``node`` ends in ``view.text``, in characters."""
    return view.positions.offset(node.end_lineno, node.end_col_offset)


def squeezed(view, first: int, stop: int) -> str:
    """The source between two offsets (between arguments, or around a value), whitespace, line
    continuations and comments left out: what stands there besides layout (what LibCST keeps in
    its whitespace nodes). Text with a quote is returned as it is (a ``#`` there may be in a
    string), which no caller takes for plain layout."""
    text = view.text[first:stop]
    if "'" in text or '"' in text:
        return text
    lines = (line.split("#", 1)[0] for line in LINE_BREAK.split(text))
    return "".join("".join(line.rstrip("\\").split()) for line in lines)


def comment_in(view, first: int, stop: int) -> bool:
    """Whether a comment stands in the source between two offsets: LibCST keeps one in the
    whitespace nodes there, which a fix may drop or copy."""
    text = view.text[first:stop]
    if "#" not in text:
        return False
    try:
        return any(t.type == tokenize.COMMENT for t in tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return True  # a fragment the tokenizer cannot follow: assume the worst


def quoted(node: ast.AST, statement: ast.stmt, view) -> str:
    """LibCST's ``Module([]).code_for_node`` of ``node`` (quoted in a message), ``node`` being in
    ``statement``: its source text, where each further line of it loses the indentation of the
    statement's block (LibCST keeps that indentation apart, in ``ParenthesizedWhitespace.indent``).
    Lines inside a string, or after a line continuation, keep theirs: there ``NeedsLibCST``, which
    is rare."""
    text = view.positions.segment(node)
    lines = _LINE.findall(text)
    if len(lines) == 1:
        return text
    if "\"\"\"" in text or "'''" in text or any(line.rstrip("\r\n").endswith("\\") for line in lines[:-1]):
        raise NeedsLibCST("a string or a line continuation over several lines quoted in a message")
    first_line = _LINE.match(view.text, view.positions.line_start(statement.lineno)).group()
    indent = first_line[:len(first_line) - len(first_line.lstrip(" \t\f"))]
    return lines[0] + "".join(line.removeprefix(indent) for line in lines[1:])


def keyword_value(keyword: ast.keyword, view) -> ast.expr:
    """A keyword argument's value, where ``ast``'s range of it is LibCST's ``Arg.value``: not in
    parentheses of its own (``device=("cuda")``: LibCST's code of the value has them, ``ast``'s
    range does not), else ``NeedsLibCST``."""
    if squeezed(view, start(keyword, view) + len(keyword.arg), start(keyword.value, view)) != "=":
        raise NeedsLibCST("a keyword's value in its own parentheses")
    return keyword.value
