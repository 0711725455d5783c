"""A notebook's JSON text edited in place: where each cell's ``source`` value lies, and the text with
new sources put there, every other byte kept.

Re-serialising the whole notebook to write one changed cell cost two passes of the pure-Python
indenting encoder over every output (seconds for a 50 MB notebook) and a second copy of it in
memory; splicing costs one pass of ``json``'s C scanner over the text, one value at a time. A new value is
written the way its old value was: the old value is first encoded in the notebook's style
(``json.dumps`` with its indent, nested at its line's indentation, and its ``ensure_ascii``), and
only where that reproduces the old bytes exactly is the new value spliced in.
"""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Callable, Mapping

_WHITESPACE = re.compile(r"[ \t\n\r]*")
# ``scan(text, position)`` -> (the JSON value there, where it ends): json's own scanner, in C. The
# value is built and dropped at once: at most one cell's outputs at a time.
_scan = json.scanner.make_scanner(json.JSONDecoder())


def source_spans(text: str) -> dict[int, tuple[int, int]]:
    """``(start, end)`` of each cell's ``source`` value in ``text`` by the cell's 1-based position,
    for ``text`` that ``json.loads`` read as an object. Where a key repeats, the last counts (as for
    ``json.loads``). Each byte is scanned once."""
    spans: dict[int, tuple[int, int]] = {}

    def cell(position: int, start: int) -> int | None:
        def member(key: str, value_start: int) -> int | None:
            if key != "source":
                return None
            spans[position] = (value_start, _value_end(text, value_start))
            return spans[position][1]

        return _object(text, start, member) if text[start] == "{" else None

    def top(key: str, start: int) -> int | None:
        if key != "cells" or text[start] != "[":
            return None
        spans.clear()
        return _array(text, start, cell)

    _object(text, _skip_whitespace(text, 0), top)
    return spans


def splice(text: str, values: Mapping[int, tuple[object, object]], indent: int | None, ensure_ascii: bool) -> str | None:
    """``text`` with each cell's ``source`` replaced: ``values`` maps a cell's position to (its old
    value, its new value). None when an old value is not laid out as this writer would write it."""
    spans = source_spans(text)
    pieces, done = [], 0
    for position in sorted(values, key=lambda p: spans.get(p, (-1, -1))):
        if position not in spans:
            return None
        start, end = spans[position]
        old, new = values[position]
        if indent is None and isinstance(new, list) and len(new) > 1 and not (isinstance(old, list) and len(old) > 1):
            return None  # a one-line layout whose item separator (", " or ",") the old value does not show
        line_start = text.rfind("\n", 0, start) + 1
        nesting = _WHITESPACE.match(text, line_start).group().lstrip("\r\n")
        newline = "\r\n" if "\r\n" in text[start:end] else "\n"  # a notebook saved with Windows newlines
        for ascii_only in (ensure_ascii, not ensure_ascii):  # the notebook's style first
            if _encode(old, indent, ascii_only, newline + nesting) == text[start:end]:
                pieces += [text[done:start], _encode(new, indent, ascii_only, newline + nesting)]
                done = end
                break
        else:
            return None
    return "".join(pieces) + text[done:]


def _encode(value: object, indent: int | None, ensure_ascii: bool, line_break: str) -> str:
    encoded = json.dumps(value, indent=indent, ensure_ascii=ensure_ascii)
    # A JSON string holds no raw newline: every newline is the layout's, followed by the value's
    # nesting (``line_break`` is the newline and that indentation).
    return encoded if indent is None else encoded.replace("\n", line_break)


def _skip_whitespace(text: str, position: int) -> int:
    return _WHITESPACE.match(text, position).end()


def _value_end(text: str, position: int) -> int:
    return _scan(text, position)[1]


def _object(text: str, position: int, visit: Callable[[str, int], int | None]) -> int:
    """The end of the object at ``position``; ``visit(key, value start)`` is called for each member
    and returns the value's end (None: skip the value)."""
    position = _skip_whitespace(text, position + 1)
    while text[position] != "}":
        key, key_end = _scan(text, position)
        start = _skip_whitespace(text, _skip_whitespace(text, key_end) + 1)  # past the colon
        end = visit(key, start)
        position = _skip_whitespace(text, _value_end(text, start) if end is None else end)
        if text[position] == ",":
            position = _skip_whitespace(text, position + 1)
    return position + 1


def _array(text: str, position: int, visit: Callable[[int, int], int | None]) -> int:
    """The end of the array at ``position``; ``visit(1-based index, element start)`` as for objects."""
    position = _skip_whitespace(text, position + 1)
    index = 0
    while text[position] != "]":
        index += 1
        end = visit(index, position)
        position = _skip_whitespace(text, _value_end(text, position) if end is None else end)
        if text[position] == ",":
            position = _skip_whitespace(text, position + 1)
    return position + 1
