"""Inline suppressions: ``# noqa``, ``# noqa: DDP002,DDP003`` and ``# ddpfix: ignore`` on a line."""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable

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


def with_codes(comment: str, codes: Iterable[str]) -> str:
    """``comment`` (a line's comment, from its ``#``) that also silences ``codes``, as Ruff's
    ``--add-noqa`` writes it: merged into the comment's ``# noqa: X`` where it has one (its codes
    kept as written), else ``# noqa: CODES`` after it. What counts as a directive is decided here only."""
    wanted = sorted(set(codes))
    match = _NOQA.search(comment)
    if match and match.group("codes"):
        present = {c.upper() for c in re.split(r"[\s,]+", match.group("codes")) if c}
        missing = [code for code in wanted if code not in present]
        if not missing:
            return comment
        end = match.end("codes")
        return f"{comment[:end]}, {', '.join(missing)}{comment[end:]}"
    if match or _IGNORE.search(comment):
        return comment  # already silences every code
    return f"{comment.rstrip()}  {noqa_comment(wanted)}"


def noqa_comment(codes: Iterable[str]) -> str:
    return f"# noqa: {', '.join(sorted(set(codes)))}"
