"""Setting and dropping a call's keyword argument on its text: what ``_args.with_keyword`` and
``_args.without_keyword`` do to LibCST's tree, read off the text the way LibCST assigns whitespace.

LibCST's ``Arg`` owns its value (with the value's parentheses), the comma after it and the
whitespace after that comma; the last argument without a comma owns the whitespace before ``)``;
the call owns the whitespace after ``(``. Every function here answers None where the text is not
plain enough to say what LibCST would do (a parenthesized value, a generator argument), and the
caller (``_splice``) then leaves the edit to LibCST. The caller has ruled out comments and
backslashes in the call's text.
"""

from __future__ import annotations

import ast

from ddpfix.edits._splice import Segment, plain_code

_WHITESPACE = " \t\n"


def with_keyword(segment: Segment, name: str, value: str) -> str | None:
    """The call's text with ``name=value`` set: the value replaced where the keyword is present,
    else the argument appended in the call's layout (``_args.with_argument``)."""
    call, text = segment.node, segment.text
    if not isinstance(call, ast.Call) or not plain_code(value) or not text.endswith(")"):
        return None
    existing = next((k for k in call.keywords if k.arg == name), None)
    if existing is not None:
        start, end = _unparenthesized(segment, existing.value)
        return None if start is None else text[:start] + value + text[end:]
    arguments = _in_order(call)
    close = len(text) - 1
    if not arguments:
        if text[_skip_back(text, close) - 1] != "(":
            return None
        return text[:close] + f"{name}={value}" + text[close:]
    if any(isinstance(a, ast.GeneratorExp) for a in call.args):
        return None
    separator = _separator(segment, arguments)
    if separator is None:
        return None
    after_last = _skip_back(text, close)
    if text[after_last - 1] == ",":  # a trailing comma: the new argument takes it over
        comma = after_last - 1
        before_comma = text[_skip_back(text, comma):comma]
        return text[:after_last] + separator + f"{name}={value}" + before_comma + "," + text[after_last:]
    return text[:after_last] + "," + separator + f"{name}={value}" + text[after_last:]


def without_keyword(segment: Segment, name: str) -> str | None:
    """The call's text without the keyword argument ``name``; the new last argument takes over the
    removed one's comma and closing whitespace (``_args.without_keyword``)."""
    call, text = segment.node, segment.text
    if not isinstance(call, ast.Call) or not text.endswith(")"):
        return None
    arguments = _in_order(call)
    removed = next((a for a in arguments if isinstance(a, ast.keyword) and a.arg == name), None)
    if removed is None:
        return text
    value_start, end = _unparenthesized(segment, removed.value)
    if value_start is None:
        return None
    start = segment.start(removed)
    index = arguments.index(removed)
    if index < len(arguments) - 1:  # its comma and the whitespace after it go with it
        comma = _skip_forward(text, end)
        if text[comma:comma + 1] != ",":
            return None
        return text[:start] + text[_skip_forward(text, comma + 1):]
    if index > 0:  # the one before loses its comma to the removed one's closing text
        comma = _skip_back(text, start) - 1
        if text[comma] != ",":
            return None
        return text[:_skip_back(text, comma)] + text[end:]
    return text[:start] + text[len(text) - 1:]  # the only argument: ``f(`` and its whitespace, then ``)``


def _in_order(call: ast.Call) -> list[ast.AST]:
    """The call's arguments as written (LibCST's ``call.args``): positional, starred and keyword
    arguments may interleave."""
    return sorted([*call.args, *call.keywords], key=lambda a: (a.lineno, a.col_offset))


def _unparenthesized(segment: Segment, value: ast.expr) -> tuple[int | None, int | None]:
    """The offsets of a keyword's value, or (None, None) where it may be parenthesized (LibCST's
    value then includes the parentheses): the value must follow its ``=`` on the same line."""
    start = segment.start(value)
    before = start
    while before > 0 and segment.text[before - 1] in " \t":
        before -= 1
    if before == 0 or segment.text[before - 1] != "=":
        return None, None
    return start, segment.end(value)


def _separator(segment: Segment, arguments: list[ast.AST]) -> str | None:
    """What stands between the last two arguments after the comma (or after ``(`` for a single
    argument): the new argument is separated from the last one so; nothing becomes a space."""
    text = segment.text
    start = segment.start(arguments[-1])
    opening = _skip_back(text, start) - 1
    if len(arguments) > 1:
        if text[opening] != ",":
            return None  # the last argument is parenthesized, or the layout is not read here
    else:
        callee_end = segment.end(segment.node.func)
        if text[opening] != "(" or text[callee_end:opening].strip(_WHITESPACE):
            return None
    return text[opening + 1:start] or " "


def _skip_back(text: str, index: int) -> int:
    while index > 0 and text[index - 1] in _WHITESPACE:
        index -= 1
    return index


def _skip_forward(text: str, index: int) -> int:
    while index < len(text) and text[index] in _WHITESPACE:
        index += 1
    return index
