"""Source-text questions about CPython's ``ast`` nodes, for the rules' ``check``: where a node
starts and ends, what stands between two places besides layout, whether a comment stands there,
and the code LibCST would quote for a node.

``ast`` keeps no comments, no parentheses around an expression and no whitespace; LibCST keeps
all three in its tree. Each function here reads from the text what LibCST's tree holds (a rule's
edits are carried out on LibCST's tree, so its ``check`` must know what that tree holds). ``view``
is always the file's ``TreeView``.
"""

from __future__ import annotations

import ast
import io
import tokenize

from ddpfix.ast_walk import walk
from ddpfix.lazy_regex import lazy_compile
from ddpfix.analysis.ast_shapes import every_node

#: One line break, as LibCST and ``ast`` count lines.
LINE_BREAK = lazy_compile(r"\r\n?|\n")
#: One line of text with its line break (the last line may have none).
_LINE = lazy_compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")


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
    ``statement``: ``code_between`` over the node's own range."""
    return code_between(view, start(node, view), end(node, view), statement)


def code_between(view, first: int, stop: int, statement: ast.stmt) -> str:
    """The source between two offsets of ``statement`` as LibCST prints the nodes there on their
    own: each further line loses the indentation of the statement's block (LibCST holds it apart,
    as ``ParenthesizedWhitespace.indent``), except a line inside a string or after a backslash
    continuation, which is text and keeps it."""
    text = view.text[first:stop]
    lines = _LINE.findall(text)
    if len(lines) < 2:
        return text
    line_start = view.positions.line_start(statement.lineno)
    first_line = _LINE.match(view.text, line_start).group()
    indent = first_line[:len(first_line) - len(first_line.lstrip(" \t\f"))]
    first_row = len(LINE_BREAK.findall(view.text, line_start, first)) + 1  # in the fragment below
    kept = _rows_kept_as_text(view.text[line_start:stop])
    # A line break of the file's own kind is LibCST's ``Newline()`` with no value of its own, which
    # a node printed on its own writes as "\n"; one of another kind, or in text, is kept.
    default = LINE_BREAK.search(view.text).group()
    printed = []
    for number, line in enumerate(lines):
        row = first_row + number
        if number and row not in kept:
            line = line.removeprefix(indent)
        if row + 1 not in kept and line.endswith(default) and (default != "\r" or not line.endswith("\r\n")):
            line = line[:-len(default)] + "\n"
        printed.append(line)
    return "".join(printed)


_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def statement_of(tree: ast.Module, node: ast.AST) -> ast.stmt:
    """The innermost statement whose own line(s) hold ``node`` (a compound statement's header, not
    its blocks): where ``code_between`` takes the indentation from. A full walk: for the rare
    message that quotes code over several lines."""
    found = None
    for statement in every_node(tree):
        if not isinstance(statement, ast.stmt):
            continue
        first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
        if not first <= node.lineno <= statement.end_lineno:
            continue
        for field, value in ast.iter_fields(statement):
            if field in _BLOCK_FIELDS:
                continue
            for part in value if isinstance(value, list) else [value]:
                if isinstance(part, ast.AST) and any(inner is node for inner in walk(part)):
                    found = statement  # ast.walk goes outside in: the last hit is the innermost
    if found is None:
        raise ValueError("the node is not in the tree")
    return found


def _rows_kept_as_text(fragment: str) -> set[int]:
    """Rows of ``fragment`` (1-based; it starts at a statement's line) whose leading whitespace is
    text: continued lines of a string, and lines after a backslash continuation."""
    kept: set[int] = set()
    layout = (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)
    strings = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    opened_fstrings: list[int] = []
    previous = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(fragment, newline=None).readline):  # rows as ``ast`` counts them
            if token.type in strings and token.end[0] > token.start[0]:
                kept.update(range(token.start[0] + 1, token.end[0] + 1))
            elif token.type == getattr(tokenize, "FSTRING_START", None):
                opened_fstrings.append(token.start[0])
            elif token.type == getattr(tokenize, "FSTRING_END", None) and opened_fstrings:
                kept.update(range(opened_fstrings.pop() + 1, token.end[0] + 1))
            if previous is not None and previous.type not in layout and token.start[0] > previous.end[0]:
                kept.update(range(previous.end[0] + 1, token.start[0] + 1))  # a backslash continuation
            previous = token
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # the fragment ends inside brackets: every token of it has been seen
    return kept
