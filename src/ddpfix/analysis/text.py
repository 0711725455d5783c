"""Shapes in a file's bytes, for the rules' ``triggered_by``: a second, still cheap prefilter after
the trigger words and before any parse.

Each test here is a superset of the ``ast`` shape a rule's ``may_apply`` looks for, so a file it
rules out is one that ``may_apply`` would rule out too, and it only ever spares a parse. Code may
put whitespace, comments and backslash continuations between tokens, and split a statement over
lines inside brackets; every pattern allows for that or, where it cannot tell, answers True.
(``tests/test_text_prefilter.py`` holds the tricky spellings; ``bench/prefilter_check.py`` checks
the supersets over whole corpora.)

Why: in a big tree with little Lightning (torch, transformers) the trigger words pass files by the
hundred where one in twenty holds the shape, and parsing them was a third of ``--check``'s time.

Speed: every pattern starts with a literal, which the regex engine finds at ``bytes.find`` speed;
word boundaries before it are checked by hand (a leading ``\\b`` or an optional owner group made
the engine try every position of the file: ten to two hundred times slower).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from ddpfix.lazy_regex import lazy_compile

#: Between two tokens of one expression: spaces, newlines (inside brackets), line continuations.
GAP = rb"(?:\s|\\)*"
_BLANKS = b" \t\r\n\\\x0c"

# A string literal on one line without escapes: removed before counting brackets on a line.
_SHORT_STRING = lazy_compile(rb"\"[^\"\\\n]*\"|'[^'\\\n]*'")
_TRAILING_WORD = lazy_compile(rb"\w+\Z")

# How far a statement header (an ``if`` test, a ``with`` line, a decorator) that spans lines is
# followed: one of more lines than this is not code anyone writes.
HEADER_LINES = 50


def _word_char(byte: int) -> bool:
    # Bytes of non-ASCII identifiers (>= 0x80) count as word characters too.
    return byte >= 0x80 or byte == 0x5F or 0x30 <= byte <= 0x39 or 0x41 <= byte <= 0x5A or 0x61 <= byte <= 0x7A


def starts_a_word(data: bytes, pos: int) -> bool:
    return pos == 0 or not _word_char(data[pos - 1])


def pattern(literal: str, after: bytes = b"") -> re.Pattern[bytes]:
    """``literal`` (a plain word, not a regex) followed by the regex ``after``."""
    return lazy_compile(re.escape(literal.encode()) + after)


def word_match(found: re.Pattern[bytes], data: bytes, start: int = 0, end: int | None = None) -> bool:
    """Some match of ``found`` (made by ``pattern``) starts a word."""
    end = len(data) if end is None else end
    return any(starts_a_word(data, m.start()) for m in found.finditer(data, start, end))


_ALIAS_PATTERNS: dict[str, re.Pattern[bytes]] = {}


def aliased(name: str, data: bytes) -> bool:
    """``name as`` in ``data``: an import that binds ``name`` to another name, which may then be
    called anywhere. (``bytes.find`` first: it rules a name out several times faster than ``re``.)"""
    if name.encode() not in data:
        return False
    if name not in _ALIAS_PATTERNS:
        _ALIAS_PATTERNS[name] = pattern(name, rb"(?:\s|\\)+as\b")
    return _ALIAS_PATTERNS[name].search(data) is not None


_ALIAS_NAMES: dict[str, re.Pattern[bytes]] = {}


def alias_names(name: str, data: bytes) -> set[str]:
    """The names that ``name as <alias>`` binds in ``data`` (``from torch import device as on``:
    ``on``), a superset: the words after ``as`` wherever ``name as`` starts a word."""
    if name.encode() not in data:
        return set()
    if name not in _ALIAS_NAMES:
        _ALIAS_NAMES[name] = pattern(name, rb"(?:\s|\\)+as(?:\s|\\)+([^\s\\,()#;:.=]+)")
    return {
        found.group(1).decode("utf-8", "replace")
        for found in _ALIAS_NAMES[name].finditer(data) if starts_a_word(data, found.start())
    }


def bound_by_as(name: str) -> re.Pattern[bytes]:
    """``as name``: an import alias binding ``name`` (``import torch.distributed as dist``); for ``word_match``."""
    return pattern("as", rb"(?:\s|\\)+" + re.escape(name.encode()) + rb"\b")


def line_start(data: bytes, pos: int) -> int:
    return data.rfind(b"\n", 0, pos) + 1


def keyword_argument(name: str) -> re.Pattern[bytes]:
    """``name=`` as a keyword argument (or an assignment: a superset), not ``name==``; for ``word_match``."""
    return pattern(name, GAP + rb"=(?!=)")


class Call(NamedTuple):
    start: int  # where the called name starts
    name: str
    owner: str | None  # the word before the dot (``dist`` in ``dist.barrier(``); None when bare or not a word
    owner_is_attribute: bool  # a dot stands before the owner too (``torch.cuda.device(``)
    after_a_dot: bool  # the name is an attribute of something (a word or not)
    open_paren: int


def calls(data: bytes, names: Iterable[str], start: int = 0, end: int | None = None) -> Iterator[Call]:
    """Every ``name(`` of ``names`` in ``data[start:end]`` that starts a word, with its owner."""
    end = len(data) if end is None else end
    for name in names:
        if data.find(name.encode(), start, end) < 0:
            continue  # ``bytes.find`` rules a name out several times faster than the regex's own search
        for found in _call_pattern(name).finditer(data, start, end):
            at = found.start()
            if not starts_a_word(data, at) or _in_doctest(data, at):
                continue
            owner, owner_is_attribute = None, False
            before = data[max(0, at - 256):at].rstrip(_BLANKS)
            after_a_dot = before.endswith(b".")
            if after_a_dot:
                before = before[:-1].rstrip(_BLANKS)
                word = _TRAILING_WORD.search(before)
                if word is not None and not (word.start() > 0 and _word_char(before[word.start() - 1])):
                    owner = word.group(0).decode("ascii")
                    owner_is_attribute = before[:word.start()].rstrip(_BLANKS).endswith(b".")
            yield Call(at, name, owner, owner_is_attribute, after_a_dot, found.end() - 1)


def _in_doctest(data: bytes, pos: int) -> bool:
    """On a ``>>>`` line: an example in a docstring. No line of code starts so (``>>`` then ``>``
    is a syntax error, inside brackets too)."""
    return data[line_start(data, pos):pos].lstrip().startswith(b">>>")


_CALL_PATTERNS: dict[str, re.Pattern[bytes]] = {}


def _call_pattern(name: str) -> re.Pattern[bytes]:
    if name not in _CALL_PATTERNS:
        _CALL_PATTERNS[name] = pattern(name, GAP + rb"\(")
    return _CALL_PATTERNS[name]


def call_text(data: bytes, open_paren: int) -> bytes:
    """The text of a call's parentheses, from ``open_paren`` to the bracket that closes it. Where a
    string or a comment may hide a bracket (the count would be wrong), the rest of the file: a
    superset."""
    depth = 0
    for index in range(open_paren, len(data)):
        char = data[index]
        if char in b"([{":
            depth += 1
        elif char in b")]}":
            depth -= 1
            if depth == 0:
                text = data[open_paren:index + 1]
                plain = _SHORT_STRING.sub(b"_", text)
                return data[open_paren:] if b"'" in plain or b'"' in plain or b"#" in plain else text
    return data[open_paren:]


def ends_logical_line(line: bytes) -> bool:
    """Whether a statement that starts on this physical line surely ends on it: no string left
    open, no bracket left open, no continuation. False whenever unsure."""
    code = _SHORT_STRING.sub(b"_", line)
    if b"'" in code or b'"' in code:
        return False  # a triple-quoted or escaped string: cannot tell where it ends
    code = code.split(b"#", 1)[0].rstrip()
    if code.endswith(b"\\"):
        return False
    depth = 0
    for char in code:
        if char in b"([{":
            depth += 1
        elif char in b")]}":
            depth -= 1
    return depth == 0


def headers(data: bytes, keyword: str, prefixes: tuple[bytes, ...] = (b"",)) -> Iterator[tuple[int, int]]:
    """(start, end) of every statement header that starts a line with ``keyword`` (``if``, ``with``,
    ``@``), after one of ``prefixes`` (``el`` for ``elif``, ``async``): the keyword's line, and where
    that line may not end the statement, the ``HEADER_LINES`` lines after it too (a superset)."""
    found = pattern(keyword, rb"\b" if keyword[-1:].isalnum() else b"")
    for match in found.finditer(data):
        at = match.start()
        if data[line_start(data, at):at].strip() not in prefixes:
            continue  # not at a line start: ``x if y else z``, ``modified``
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        if not ends_logical_line(data[at:end]):
            for _ in range(HEADER_LINES):
                following = data.find(b"\n", end + 1)
                if following < 0:
                    end = len(data)
                    break
                end = following
        yield at, end
