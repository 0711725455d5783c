"""Where a notebook cell's line stands in the ``.ipynb`` file's own text.

A finding in a notebook counts its line in a cell (``cell 3``, line 2), which is no line of the
``.ipynb`` file. CI formats need a place in the file itself (a SARIF region, a GitHub annotation's
line, a GitLab issue's line), so this module reads the notebook's JSON text keeping positions: the
JSON string of each cell's ``source`` (one string, or a list of them, one a line as Jupyter saves
it), and for each character of the decoded source the offset of its text in the file, escapes
(``\\"``, ``\\n``, ``\\u00e9``, surrogate pairs) included. Places in the file count lines at ``\\n``
and columns in code points, as the fixes' edits do (``report.text_edit``).

Only reading is done here; ``notebook.py`` stays the one place that loads and writes notebooks.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass
from json.decoder import scanstring

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
#: Where Python's tokenizer ends a line: cells count lines as the rules do.
_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass
class _Source:
    """One cell's decoded source and, for each of its characters, its offset in the file's text."""

    text: str
    offsets: list[int]  # len(text) + 1 entries: the last is where the source's final string ends
    line_starts: list[int]

    def offset(self, line: int, column: int) -> int | None:
        """The file offset of a 1-based (line, column) of the cell, None if the cell has no such line."""
        if not 1 <= line <= len(self.line_starts):
            return None
        index = min(self.line_starts[line - 1] + max(column, 1) - 1, len(self.text))
        return self.offsets[index]

    def line_text(self, line: int) -> str:
        if not 1 <= line <= len(self.line_starts):
            return ""
        start = self.line_starts[line - 1]
        end = self.line_starts[line] if line < len(self.line_starts) else len(self.text)
        return _LINE_END.sub("", self.text[start:end])


class NotebookText:
    """Positions in the text of one ``.ipynb`` file (as ``report.source_text`` decodes it)."""

    def __init__(self, text: str):
        self._text = text
        self._newlines = [m.start() for m in re.finditer("\n", text)]
        try:
            self._sources = _cell_sources(text)
        except (ValueError, IndexError, KeyError):  # not the JSON of a notebook: no places
            self._sources = {}

    def place(self, cell: int, line: int, column: int) -> tuple[int, int] | None:
        """The file's 1-based (line, column) of a cell's (line, column); None where it cannot say."""
        source = self._sources.get(cell)
        offset = source.offset(line, column) if source else None
        if offset is None:
            return None
        file_line = bisect_right(self._newlines, offset - 1) + 1
        line_start = self._newlines[file_line - 2] + 1 if file_line > 1 else 0
        return file_line, offset - line_start + 1

    def line_text(self, cell: int, line: int) -> str:
        """The text of a cell's line (empty if there is none)."""
        source = self._sources.get(cell)
        return source.line_text(line) if source else ""


def _cell_sources(text: str) -> dict[int, _Source]:
    """Each cell's source (cells counted from 1, markdown included, as Jupyter and ddpfix count)."""
    top = _skip(text, 0)
    cells = dict((key, start) for key, start, _ in _object(text, top)).get("cells")
    if cells is None or text[cells] != "[":
        return {}
    sources = {}
    for number, (cell_start, _) in enumerate(_array(text, cells), start=1):
        if text[cell_start] != "{":
            continue
        found = {key: (start, end) for key, start, end in _object(text, cell_start)}
        if "source" not in found:
            continue
        start, end = found["source"]
        strings = [(start, end)] if text[start] == '"' else _array(text, start) if text[start] == "[" else []
        if strings and all(text[s] == "\"" for s, _ in strings):
            sources[number] = _decoded(text, strings)
    return sources


def _decoded(text: str, strings: list[tuple[int, int]]) -> _Source:
    decoded: list[str] = []
    offsets: list[int] = []
    for start, end in strings:
        value, _ = scanstring(text, start + 1)
        positions = _char_offsets(text, start + 1, end - 1)
        decoded.append(value)
        offsets.extend(positions[: len(value)])
    offsets.append(strings[-1][1] - 1 if strings else 0)
    source = "".join(decoded)
    starts = [0] + [m.end() for m in _LINE_END.finditer(source) if m.end() < len(source)]
    return _Source(source, offsets, starts)


def _char_offsets(text: str, start: int, end: int) -> list[int]:
    """The offset in ``text`` where each decoded character of the JSON string body text[start:end] begins."""
    offsets = []
    i = start
    while i < end:
        offsets.append(i)
        if text[i] != "\\":
            i += 1
        elif text[i + 1] != "u":
            i += 2
        else:
            code = int(text[i + 2:i + 6], 16)
            i += 6
            # A surrogate pair decodes to one code point (as json.loads makes it).
            if 0xD800 <= code < 0xDC00 and text.startswith("\\u", i) and 0xDC00 <= int(text[i + 2:i + 6], 16) < 0xE000:
                i += 6
    return offsets


def _skip(text: str, i: int) -> int:
    return _SPACE.match(text, i).end()


def _value_end(text: str, i: int) -> int:
    return _DECODER.raw_decode(text, i)[1]


def _object(text: str, i: int) -> list[tuple[str, int, int]]:
    """(key, value start, value end) of each member of the JSON object that starts at text[i]."""
    if text[i] != "{":
        raise ValueError("not an object")
    members = []
    i = _skip(text, i + 1)
    if text[i] == "}":
        return members
    while True:
        key, i = scanstring(text, i + 1)
        i = _skip(text, _skip(text, i) + 1)  # past the colon
        end = _value_end(text, i)
        members.append((key, i, end))
        i = _skip(text, end)
        if text[i] != ",":
            return members
        i = _skip(text, i + 1)


def _array(text: str, i: int) -> list[tuple[int, int]]:
    """(start, end) of each element of the JSON array that starts at text[i]."""
    elements = []
    i = _skip(text, i + 1)
    if text[i] == "]":
        return elements
    while True:
        end = _value_end(text, i)
        elements.append((i, end))
        i = _skip(text, end)
        if text[i] != ",":
            return elements
        i = _skip(text, i + 1)
