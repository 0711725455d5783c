"""ipynb_text places a cell's (line, column) in the .ipynb file's text: checked on every character
of every code and markdown cell of the shipped notebooks, and on a notebook with escapes."""

from __future__ import annotations

import json

from conftest import FIXTURES

from ddpfix.ipynb_text import NotebookText


def check_every_character(text: str) -> int:
    places = NotebookText(text)
    file_lines = text.split("\n")
    checked = 0
    for number, cell in enumerate(json.loads(text)["cells"], start=1):
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        for line_number, line in enumerate(source.splitlines(), start=1):
            assert places.line_text(number, line_number) == line
            for column, char in enumerate(line, start=1):
                file_line, file_column = places.place(number, line_number, column)
                written = file_lines[file_line - 1][file_column - 1:]
                # The character as the file writes it: itself, or its JSON escape.
                assert written.startswith((char, json.dumps(char)[1:-1])), (number, line_number, column)
                checked += 1
    return checked


def test_every_character_of_the_shipped_notebooks():
    notebooks = sorted(FIXTURES.rglob("*.ipynb"))
    assert len(notebooks) > 10
    assert sum(check_every_character(path.read_text(encoding="utf-8")) for path in notebooks) > 5_000


def test_escapes_surrogate_pairs_one_string_sources_and_odd_layouts():
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": 'a "quoted" title\n\twith a tab'},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["x = 'caf\u00e9' # \U0001F600 \\ end\r\n", "y = 2"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": []},
    ]
    for ascii_only in (True, False):
        for indent in (None, 1):
            text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                              ensure_ascii=ascii_only, indent=indent)
            assert check_every_character(text) > 40
            places = NotebookText(text)
            assert places.place(3, 1, 1) is None and places.place(2, 3, 1) is None  # no such lines


def test_not_a_notebook_has_no_places():
    for text in ("", "[]", '{"cells": 3}', '{"cells": [', "not json"):
        assert NotebookText(text).place(1, 1, 1) is None
