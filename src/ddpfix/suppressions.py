"""Inline suppressions: ``# noqa``, ``# noqa: DDP002,DDP003`` and ``# ddpfix: ignore`` on a line."""

from __future__ import annotations

import io
import re
import tokenize

from ddpfix.lazy_regex import lazy_compile

_NOQA = lazy_compile(r"#\s*noqa(?:\s*:\s*(?P<codes>[A-Za-z]+\d+(?:[\s,]+[A-Za-z]+\d+)*))?", re.IGNORECASE)
_IGNORE = lazy_compile(r"#\s*ddpfix:\s*ignore\b", re.IGNORECASE)

ALL = None  # a bare ``# noqa`` silences every rule on its line


def suppressions(source: str) -> dict[int, frozenset[str] | None]:
    """Line number -> the codes silenced there (``ALL`` for every code). Only real comments count,
    not ``# noqa`` inside a string."""
    found: dict[int, frozenset[str] | None] = {}
    if "noqa" not in source and "ddpfix" not in source:
        return found
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type != tokenize.COMMENT:
                continue
            line = token.start[0]
            if _IGNORE.search(token.string):
                found[line] = ALL
                continue
            match = _NOQA.search(token.string)
            if match:
                codes = match.group("codes")
                found[line] = ALL if not codes else frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c)
    except (tokenize.TokenError, SyntaxError):
        pass  # the engine only hands over parsed code; be safe regardless
    return found


def is_suppressed(table: dict[int, frozenset[str] | None], line: int, code: str) -> bool:
    if line not in table:
        return False
    codes = table[line]
    return codes is ALL or code in codes
