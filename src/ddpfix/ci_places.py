"""What the CI formats (sarif, github, gitlab) say about where a finding is, decided once for all three.

- ``region``: the finding's span in the file's own text. For a ``.py`` file that is the finding's
  line and columns; for a notebook, whose findings count lines in a cell, it is where that cell's
  line stands in the ``.ipynb`` JSON (``ipynb_text``), so a viewer opens the file at the right line.
- ``fingerprint``: a finding's identity across runs, as GitHub's ``primaryLocationLineHash`` has
  it: a hash of the rule's code and the finding's line text with its indentation and trailing
  spaces stripped, then ``:n``, the finding's rank among the file's findings with the same hash.
  No line number goes in, so lines inserted or removed above a finding do not change it; editing
  the finding's own line does (it is then another finding). In a notebook the line text is the
  cell's line.

Both read the file's text as it was read (``FileResult.original``), where the findings' places are.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from ddpfix.findings import FileResult, Finding, Problem
from ddpfix.ipynb_text import NotebookText
from ddpfix.report import source_text

_LINE_END = re.compile(r"\r\n|\r|\n")

#: A region as the formats spell it: 1-based start line and column, end line and (exclusive) column.
Region = tuple[int, int, int, int]


class CIPlaces:
    """Regions and fingerprints of one run's findings."""

    def __init__(self, results: Sequence[FileResult]):
        self._results = {result.path: result for result in results}
        self._lines: dict[str, list[str]] = {}
        self._notebooks: dict[str, NotebookText] = {}
        self._fingerprints: dict[Finding, str] = {}
        for result in results:
            seen: dict[str, int] = {}
            for finding in result.findings:
                digest = _line_hash(finding.code, self.line_text(finding))
                seen[digest] = seen.get(digest, 0) + 1
                self._fingerprints[finding] = f"{digest}:{seen[digest]}"

    def fingerprint(self, finding: Finding) -> str:
        """``hash:n`` (see the module's docstring)."""
        return self._fingerprints[finding]

    def region(self, finding: Finding) -> Region | None:
        """The finding's span in the file's text; None for a notebook place that cannot be found."""
        if finding.cell is None:
            return finding.line, finding.column, finding.end_line, finding.end_column
        notebook = self._notebook(finding.path)
        start = notebook.place(finding.cell, finding.line, finding.column) if notebook else None
        if start is None:
            return None
        end = notebook.place(finding.cell, finding.end_line, finding.end_column) or start
        return (*start, *end) if end >= start else (*start, *start)

    def problem_place(self, problem: Problem) -> tuple[int, int] | None:
        """A problem's (line, column) in the file's text, None where it has none."""
        if problem.line is None:
            return None
        if problem.cell is None:
            return problem.line, problem.column or 1
        notebook = self._notebook(problem.path)
        return notebook.place(problem.cell, problem.line, problem.column or 1) if notebook else None

    def line_text(self, finding: Finding) -> str:
        if finding.cell is not None:
            notebook = self._notebook(finding.path)
            return notebook.line_text(finding.cell, finding.line) if notebook else ""
        if finding.path not in self._lines:
            result = self._results.get(finding.path)
            self._lines[finding.path] = _LINE_END.split(source_text(result.original)) if result else []
        lines = self._lines[finding.path]
        return lines[finding.line - 1] if 0 < finding.line <= len(lines) else ""

    def _notebook(self, path: str) -> NotebookText | None:
        if path not in self._notebooks:
            result = self._results.get(path)
            if result is None:
                return None
            self._notebooks[path] = NotebookText(source_text(result.original))
        return self._notebooks[path]


def _line_hash(code: str, line: str) -> str:
    return hashlib.sha256(f"{code}\0{line.strip()}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
