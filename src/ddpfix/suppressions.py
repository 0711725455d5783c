"""Inline suppressions: ``# noqa``, ``# noqa: DDP002,DDP003`` and ``# ddpfix: ignore`` on a line."""

from __future__ import annotations

import io
import re
import tokenize
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence

from ddpfix.lazy_regex import lazy_compile

_NOQA = lazy_compile(r"#\s*noqa(?:\s*:\s*(?P<codes>[A-Za-z]+\d+(?:[\s,]+[A-Za-z]+\d+)*))?", re.IGNORECASE)
_IGNORE = lazy_compile(r"#\s*ddpfix:\s*ignore\b", re.IGNORECASE)

ALL = None  # a bare ``# noqa`` silences every rule on its line


# Whether a text may hold a directive at all: both are matched ignoring case (``# NOQA``).
_DIRECTIVE_WORD = lazy_compile(r"noqa|ddpfix", re.IGNORECASE)
# From a ``#`` to the end of its line: the first ``#`` of a line outside a string starts its comment.
_FROM_HASH = lazy_compile(r"#[^\r\n]*")


def may_hold_directives(text: str | bytes) -> bool:
    """Whether ``text`` may hold a suppression comment (a cheap test before looking for them)."""
    if isinstance(text, bytes):
        return bool(re.search(rb"(?i)noqa|ddpfix", text))
    return bool(_DIRECTIVE_WORD.search(text))


def suppressions(source: str, strings: Callable[[set[int]], Sequence[tuple[int, int]]] | None = None,
                 ) -> dict[int, frozenset[str] | None]:
    """Line number -> the codes silenced there (``ALL`` for every code). Only real comments count,
    not ``# noqa`` inside a string.

    ``strings``: given line numbers, where the string literals that touch those lines stand, as
    sorted, disjoint (start, end) character offsets (``TreeView.string_spans``). With them, a ``#``
    outside every string starts a comment, so the file is tokenized (a tenth of a second on 200 kB,
    once per version a fix makes) only when a directive's ``#`` lies inside a string's span: a
    ``"# noqa"`` string, or a comment between the parts of an implicit concatenation, which the
    string's span covers too."""
    found: dict[int, frozenset[str] | None] = {}
    if not may_hold_directives(source):
        return found
    if strings is None:
        return _tokenized(source)
    candidates: list[tuple[int, int, str]] = []  # (offset of the '#', line, comment)
    line, counted = 1, 0
    for match in _FROM_HASH.finditer(source):
        comment = match.group()
        if _DIRECTIVE_WORD.search(comment):
            line += _newlines(source, counted, match.start())
            counted = match.start()
            candidates.append((match.start(), line, comment))
    if not candidates:
        return found
    spans = strings({line for _offset, line, _comment in candidates})
    starts = [start for start, _end in spans]
    for offset, line, comment in candidates:
        index = bisect_right(starts, offset) - 1
        if index >= 0 and offset < spans[index][1]:
            return _tokenized(source)  # in a string's span: only the tokenizer can tell
        _read(comment, line, found)
    return found


def _newlines(source: str, start: int, end: int) -> int:
    """Line ends between two offsets, as the tokenizer counts them (``\r\n``, ``\r``, ``\n``)."""
    piece = source[start:end]
    return piece.count("\n") + piece.count("\r") - piece.count("\r\n")


def _tokenized(source: str) -> dict[int, frozenset[str] | None]:
    found: dict[int, frozenset[str] | None] = {}
    try:
        # Universal newlines: a lone CR ends a line, as CPython's and LibCST's line numbers count.
        for token in tokenize.generate_tokens(io.StringIO(source, newline=None).readline):
            if token.type == tokenize.COMMENT:
                _read(token.string, token.start[0], found)
    except (tokenize.TokenError, SyntaxError):
        pass  # the engine only hands over parsed code; be safe regardless
    return found


def _read(comment: str, line: int, found: dict[int, frozenset[str] | None]) -> None:
    """The directive of one comment (from its ``#`` to the end of its line), if it holds one."""
    if _IGNORE.search(comment):
        found[line] = ALL
        return
    match = _NOQA.search(comment)
    if match:
        codes = match.group("codes")
        found[line] = ALL if not codes else frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c)


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
