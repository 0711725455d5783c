"""Gitignore-style patterns (``.gitignore`` files, ``--exclude``) matched in time linear in the
pattern times the path, whatever the pattern.

Why our own matcher: a pattern is a stranger's text when ddpfix runs on a pull request, and the
usual translation of a glob into a backtracking regular expression takes exponential time on
patterns such as ``*a*a*a*a*a*a*a*a*b`` (one such line in a ``.gitignore`` stalled a walk of 500
files for minutes). Here a segment's ``*`` and a path's ``**`` are matched by the classic
wildcard algorithm, which only ever returns to the last star: O(pattern x text) per segment.

Semantics are git's (``gitignore(5)``): blank lines and ``#`` comments are skipped, trailing spaces
are dropped unless escaped, ``!`` negates, a trailing ``/`` matches directories only, a ``/`` at the
start or in the middle anchors the pattern to its file's folder (otherwise it matches at any depth),
``**`` as a whole segment matches any number of folders, ``*`` and ``?`` never match ``/``,
``[...]`` / ``[!...]`` are character classes, ``\\`` escapes. A path inside an ignored folder is
ignored. The last matching pattern decides.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import NamedTuple



class _Wildcard:
    """``*`` or ``?`` of a pattern: an object no literal character can be mistaken for (``\\*`` is one)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


# One element of a segment's pattern: a literal character, a class (a predicate on a character),
# ``STAR`` (any run of characters) or ``ANY`` (one character).
STAR, ANY = _Wildcard("*"), _Wildcard("?")
Element = object
#: A pattern segment that is ``**``: any number of path segments.
GLOBSTAR = ("**",)


class CheckResult(NamedTuple):
    """The verdict on one path: ``include`` True (ignored/excluded), False (re-included by ``!``),
    None (no pattern matched); ``index`` the deciding pattern's line among the patterns read."""

    include: bool | None
    index: int | None


class _CharClass:
    __slots__ = ("negated", "chars", "ranges")

    def __init__(self, negated: bool, chars: str, ranges: list[tuple[str, str]]):
        self.negated, self.chars, self.ranges = negated, chars, ranges

    def __call__(self, char: str) -> bool:
        inside = char in self.chars or any(low <= char <= high for low, high in self.ranges)
        return inside != self.negated and char != "/"


def _char_class(text: str, start: int) -> tuple[_CharClass, int] | None:
    """The class that opens at ``text[start] == '['`` and the index after it; None when it never closes
    (then ``[`` is a literal, as git reads it)."""
    i = start + 1
    negated = i < len(text) and text[i] in "!^"
    if negated:
        i += 1
    chars, ranges = [], []
    first = True
    while i < len(text):
        char = text[i]
        if char == "]" and not first:
            return _CharClass(negated, "".join(chars), ranges), i + 1
        first = False
        if char == "\\" and i + 1 < len(text):
            i += 1
            char = text[i]
        if i + 2 < len(text) and text[i + 1] == "-" and text[i + 2] != "]":
            high = text[i + 2]
            if high == "\\" and i + 3 < len(text):
                high = text[i + 3]
                i += 1
            ranges.append((char, high))
            i += 3
            continue
        chars.append(char)
        i += 1
    return None


def _segment(text: str) -> list[Element]:
    elements: list[Element] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            elements.append(text[i + 1])
            i += 2
        elif char == "*":
            if not elements or elements[-1] is not STAR:  # ``a**b``: runs of stars are one star
                elements.append(STAR)
            i += 1
        elif char == "?":
            elements.append(ANY)
            i += 1
        elif char == "[" and (found := _char_class(text, i)) is not None:
            elements.append(found[0])
            i = found[1]
        else:
            elements.append(char)
            i += 1
    return elements


def _element_matches(element: Element, char: str) -> bool:
    if element is ANY:
        return char != "/"
    if isinstance(element, str):
        return element == char
    return element(char)  # a class


def wildcard_match(pattern: list, text: list, matches: Callable[[object, object], bool], star: object) -> bool:
    """Whether ``pattern`` matches all of ``text``: ``star`` matches any run of items, any other item
    one item that ``matches`` it. Greedy, returning only to the last star: O(len(pattern) *
    len(text)), never exponential (a later star makes every earlier choice final)."""
    p = t = 0
    star_p, star_t = -1, 0
    while t < len(text):
        if p < len(pattern) and pattern[p] is star:
            star_p, star_t = p, t
            p += 1
        elif p < len(pattern) and matches(pattern[p], text[t]):
            p += 1
            t += 1
        elif star_p >= 0:
            p = star_p + 1
            star_t += 1
            t = star_t
        else:
            return False
    while p < len(pattern) and pattern[p] is star:
        p += 1
    return p == len(pattern)


class Segment:
    """A pattern segment (between slashes) as the literal runs between its stars: the first run must
    start the name, the last end it, and each run between is taken at its leftmost place, which is
    the best choice (a later place leaves less room for the runs after it). Runs of plain
    characters are found with ``str.find``; O(len(name) * len(pattern)) at worst."""

    __slots__ = ("runs", "starred", "plain", "elements")

    def __init__(self, elements: list[Element]):
        self.elements = elements
        runs: list[list[Element]] = [[]]
        for element in elements:
            if element is STAR:
                runs.append([])
            else:
                runs[-1].append(element)
        self.runs = runs
        self.starred = len(runs) > 1
        # A run of literal characters only, as one string (None: it holds ``?`` or a class).
        self.plain = ["".join(run) if all(isinstance(e, str) for e in run) else None for run in runs]

    def __call__(self, name: str) -> bool:
        runs, plain = self.runs, self.plain
        if not self.starred:
            return len(name) == len(runs[0]) and self._at(0, name, 0)
        first, last = runs[0], runs[-1]
        if len(first) + len(last) > len(name) or not self._at(0, name, 0):
            return False
        end = len(name) - len(last)
        if not self._at(len(runs) - 1, name, end):
            return False
        position = len(first)
        for index in range(1, len(runs) - 1):
            found = self._find(index, name, position, end)
            if found < 0:
                return False
            position = found + len(runs[index])
        return True

    def _at(self, index: int, name: str, start: int) -> bool:
        text = self.plain[index]
        if text is not None:
            return name.startswith(text, start)
        return all(_element_matches(e, name[start + i]) for i, e in enumerate(self.runs[index]))

    def _find(self, index: int, name: str, start: int, end: int) -> int:
        """The leftmost place at or after ``start`` where run ``index`` matches, ending by ``end``."""
        run, text = self.runs[index], self.plain[index]
        if text is not None:
            return name.find(text, start, end)
        for position in range(start, end - len(run) + 1):
            if self._at(index, name, position):
                return position
        return -1


#: A segment matching any one name (the empty one too).
ANY_NAME = Segment([STAR])


def _segment_matches(segment: Segment, name: str) -> bool:
    return segment(name)


def _element_regex(element: Element) -> str:
    if element is STAR:
        return "[^/]*"
    if element is ANY:
        return "[^/]"
    if isinstance(element, str):
        return re.escape(element)
    ranges = "".join(f"{re.escape(low)}-{re.escape(high)}" for low, high in element.ranges)
    inside = re.escape(element.chars) + ranges
    return f"(?!/)[{'^' if element.negated else ''}{inside}]" if inside else ("(?!/)." if element.negated else "(?!)")


def _fast_regex(segments: list, dir_only: bool) -> tuple[re.Pattern, re.Pattern | None] | None:
    """The pattern as regular expressions over the whole path (``inside``: the path or a path within
    it; ``exactly``: the path itself, for a folder-only pattern) where that is safe: a ``**`` only in
    front, at most one ``*`` per segment. Each ``*`` then stays inside its segment and the leading
    ``**`` can only end at a slash, so a match costs O(slashes x length) at worst; other patterns
    (several stars in a segment, ``**`` in the middle or at the end) take the wildcard algorithm."""
    body_segments = segments[1:] if segments and segments[0] is GLOBSTAR else segments
    if not body_segments or any(s is GLOBSTAR for s in body_segments):
        return None
    if any(sum(e is STAR for e in s.elements) > 1 for s in body_segments):
        return None
    body = "/".join("".join(_element_regex(e) for e in s.elements) for s in body_segments)
    prefix = "(?:.*/)?" if segments[0] is GLOBSTAR else ""
    if dir_only:  # a folder itself (the path ends in "/"), or what is inside one
        return re.compile(f"{prefix}{body}/.*", re.DOTALL), re.compile(f"{prefix}{body}", re.DOTALL)
    return re.compile(f"{prefix}{body}(?:/.*)?", re.DOTALL), None


class Pattern:
    """One line of a gitignore file."""

    __slots__ = ("negated", "dir_only", "segments", "fast")

    def __init__(self, negated: bool, dir_only: bool, segments: list):
        self.negated, self.dir_only, self.segments = negated, dir_only, segments
        self.fast = _fast_regex(segments, dir_only)

    @classmethod
    def parse(cls, line: str) -> Pattern | None:
        line = line.rstrip("\r\n")
        line = _strip_trailing_spaces(line)
        if not line or line.startswith("#"):
            return None
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        elif line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/") and not line.endswith("\\/")
        line = line.rstrip("/") if dir_only else line
        if not line:
            return None  # "/" or "!/": git matches nothing with them
        anchored = "/" in line
        parts = [part for part in line.split("/")]
        if parts and parts[0] == "":
            parts = parts[1:]  # a leading "/" only anchors
        segments: list = [] if anchored else [GLOBSTAR]
        for part in parts:
            # A segment of stars alone (``**``, and ``***``...: git's wildmatch reads them alike,
            # ``a/***/f`` matches ``a/f``) is any number of folders.
            if len(part) >= 2 and not part.strip("*"):
                if not segments or segments[-1] is not GLOBSTAR:
                    segments.append(GLOBSTAR)
            elif part:
                segments.append(Segment(_segment(part)))
        return cls(negated, dir_only, segments)

    def matches(self, names: list[str], is_dir: bool, path: str) -> bool:
        """Whether this pattern matches the path of ``names`` (its segments; ``path``, the same
        joined by "/"), or one of the folders it is in (a path inside an ignored folder is ignored)."""
        if self.fast is not None:
            inside, exactly = self.fast
            return inside.fullmatch(path) is not None or (
                exactly is not None and is_dir and exactly.fullmatch(path) is not None)
        for end in range(1, len(names) + 1):
            folder = end < len(names) or is_dir
            if self.dir_only and not folder:
                break
            if self._matches_exactly(names[:end], folder):
                return True
        return False

    def _matches_exactly(self, names: list[str], folder: bool) -> bool:
        segments = self.segments
        last = segments[-1]
        if last is not GLOBSTAR and not last(names[-1]):
            return False  # the common verdict, decided by the last name alone
        if len(segments) > 1 and segments[-1] is GLOBSTAR:
            # ``dir/**`` is what is inside dir: at least one more segment, which a folder has (its
            # contents) and a file named dir has not.
            if not folder:
                segments = [*segments[:-1], ANY_NAME, GLOBSTAR]
            else:
                names = [*names, ""]
                segments = [*segments[:-1], ANY_NAME, GLOBSTAR]
        return wildcard_match(segments, names, _segment_matches, GLOBSTAR)


def _strip_trailing_spaces(line: str) -> str:
    """Git drops trailing spaces unless one is escaped (``foo\\ `` keeps its last space)."""
    end = len(line)
    while end and line[end - 1] == " " and not (end >= 2 and line[end - 2] == "\\"):
        end -= 1
    return line[:end]


class GitIgnore:
    """The patterns of one file (or of ``--exclude``), with pathspec's two questions."""

    def __init__(self, patterns: list[tuple[int, Pattern]]):
        self.patterns = patterns

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> GitIgnore:
        patterns = []
        for index, line in enumerate(lines):
            pattern = Pattern.parse(line)
            if pattern is not None:
                patterns.append((index, pattern))
        return cls(patterns)

    def check_file(self, path: str) -> CheckResult:
        """``path`` relative to the patterns' folder, ``/``-separated; a trailing ``/`` says it is a folder."""
        is_dir = path.endswith("/")
        names = [name for name in path.split("/") if name and name != "."]
        if not names:
            return CheckResult(None, None)
        joined = "/".join(names)
        for index, pattern in reversed(self.patterns):
            if pattern.matches(names, is_dir, joined):
                return CheckResult(not pattern.negated, index)
        return CheckResult(None, None)

    def match_file(self, path: str) -> bool:
        return bool(self.check_file(path).include)
