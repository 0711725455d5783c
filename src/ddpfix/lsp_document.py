"""One open document as the language server sees it: the engine's result and its LSP translation.

A document is a Python file or a Jupyter notebook whose cells the client holds as text documents of
their own. Either is run exactly as ``ddpfix PATH`` runs a file named alone: the ``[tool.ddpfix]``
that applies to its path picks the rules and options (``rules.select_rules``, as the CLI), and
``sources.fix_source`` does the rest, ``# noqa`` and the notebook front-end included (the cells go
in as a notebook, and each finding comes back with its cell). What is left here is arithmetic: the
engine counts 1-based lines and characters (in a cell, lines of that cell); LSP counts 0-based
lines and, in the client's position encoding (UTF-16 code units unless negotiated otherwise),
columns, in the text document the finding is in.

Nothing here touches the event loop: the server runs ``analyse`` and the fixes in worker threads.
"""

from __future__ import annotations

import bisect
import functools
import io
import json
import os
import re
import tokenize
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ddpfix.findings import NOTE, FileResult, Finding, FixKey, Problem
from ddpfix.text_diff import changed_span, line_hunks

if TYPE_CHECKING:  # the engine and the rules load with the first analysis, not at start-up
    from ddpfix.facts import ProjectFacts
    from ddpfix.rules.base import Rule

SOURCE = "ddpfix"
FIX_ALL_KIND = "source.fixAll.ddpfix"
#: What VS Code asks of a notebook as a whole (``notebook.codeActionsOnSave``); edits every cell.
NOTEBOOK_FIX_ALL_KIND = "notebook.source.fixAll.ddpfix"
FIX_ALL_TITLE = "Fix all DDP issues"
CONFIG_ERROR = "config"
NOTEBOOK_SUFFIX = ".ipynb"

#: Counts a string in the client's position units (``lsp_workspace.UNITS``).
Units = Callable[[str], int]
#: LSP's DiagnosticSeverity.
ERROR, WARNING, INFORMATION = 1, 2, 3

# LSP ends lines at \r\n, \r and \n only (Python's str.splitlines also splits at form feeds & co.).
_LINE_END = re.compile(r"\r\n|\r|\n")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")  # a line with its end
# What a quick fix's title widens a replaced span to, so "cuda" -> "cpu" reads as such, not "uda" -> "pu".
_WORD_CHARACTER = re.compile(r"[\w\"'.:]")
_TITLE_LIMIT = 60  # characters of code a title quotes; a longer edit is described by its lines


@dataclass(frozen=True)
class Settings:
    """The rules and rule options for one path, or why the configuration could not be read."""

    rules: tuple[type[Rule], ...] = ()
    options: Mapping[str, object] = field(default_factory=dict)
    error: str | None = None


def settings_for(start: str) -> Settings:
    """What the CLI would use for a file at ``start`` with no command-line flags (``settings``, the
    one place that decides it). Unsafe fixes stay out of the server's "fix all" whatever the table
    says: each is a quick fix of its own (``Snapshot.fix_all``)."""
    from ddpfix.config import ConfigError
    from ddpfix.settings import Flags, Resolver

    try:
        found = Resolver(Flags()).for_path(start)
    except ConfigError as err:
        return Settings(error=str(err))
    return Settings(tuple(found.rules), {**found.options, "show_suppressed": False})


def project_facts(name: str, data: bytes, rules: Sequence[type[Rule]],
                  open_elsewhere: Mapping[str, str | None] | None = None) -> ProjectFacts | None:
    """The facts of the buffer's project with the buffer in its file's place, as the CLI reads them
    for a file named alone (``project.buffer_facts``); None (the buffer alone: partial facts, so
    decisions resting on the rest of the project stay unsafe) for a buffer
    with no file behind it, a project that cannot be read, or one where another open document
    holds edits not saved (``open_elsewhere``: its path -> the editor's text, None where that
    cannot be compared, as a notebook's): the files on disk are then not what the user has."""
    if not os.path.isabs(name) or not any(rule.uses_facts for rule in rules):
        return None
    from ddpfix.config import ConfigError
    from ddpfix.project import buffer_facts
    from ddpfix.model.program import program_root
    from ddpfix.settings import Flags, Resolver

    root = program_root(name)
    for path, text in (open_elsewhere or {}).items():
        if os.path.abspath(path) != os.path.abspath(name) and _inside(path, root) and not _saved(path, text):
            return None
    try:
        return buffer_facts(name, data, Resolver(Flags()))
    except (ConfigError, OSError):
        return None


def _inside(path: str, folder: str) -> bool:
    return os.path.abspath(path).startswith(os.path.join(os.path.abspath(folder), ""))


def _saved(path: str, text: str | None) -> bool:
    """Whether an open document's text is what its file holds (as UTF-8, or in its cookie's encoding)."""
    if text is None:
        return False
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    encoding = _source_encoding(text)
    try:
        return data == text.encode(encoding, _errors(encoding)) or data == b"\xef\xbb\xbf" + text.encode(encoding)
    except UnicodeError:
        return False


def _source_encoding(text: str) -> str:
    """The encoding the file's own coding cookie names (UTF-8 without one), so the bytes the engine
    parses decode to exactly the editor's text and columns agree."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(text.encode("utf-8", "surrogatepass")).readline)
        text.encode(encoding)
    except (SyntaxError, LookupError, UnicodeError):
        return "utf-8"
    return "utf-8" if encoding == "utf-8-sig" else encoding  # a BOM in the text stays a character


def _errors(encoding: str) -> str:
    # Only UTF-8 can carry a lone surrogate an editor may hold mid-edit; the engine then reports
    # the file as undecodable instead of the server failing to encode it.
    return "surrogatepass" if encoding == "utf-8" else "strict"


def position(line: int, character: int) -> dict:
    """An LSP Position (0-based line, character in the client's units), as sent."""
    return {"line": line, "character": character}


def span(start: dict, end: dict) -> dict:
    """An LSP Range, as sent."""
    return {"start": start, "end": end}


@dataclass(frozen=True)
class Change:
    """One replaced span of one text document: ``text[start:end]`` (character offsets) becomes ``new``."""

    uri: str
    start: int
    end: int
    new: str


class TextView:
    """One text document the client holds (a Python file or a notebook cell), and LSP positions in it."""

    def __init__(self, uri: str, version: int | None, text: str, units: Units):
        self.uri = uri
        self.version = version
        self.text = text
        self.units = units
        self._starts = [0] + [match.end() for match in _LINE_END.finditer(text)]
        self._comment_places: tuple[set[int], dict[int, tuple[int, int]]] | None = None

    def _line_text(self, index: int) -> str:
        start = self._starts[index]
        end = self._starts[index + 1] if index + 1 < len(self._starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def position(self, line: int, column: int) -> dict:
        """The LSP position of a 1-based line and 1-based character column, clamped into the text."""
        index = min(max(line - 1, 0), len(self._starts) - 1)
        line_text = self._line_text(index)
        return position(index, self.units(line_text[: min(max(column - 1, 0), len(line_text))]))

    def line_end(self, line: int) -> dict:
        return self.position(line, len(self._line_text(min(max(line - 1, 0), len(self._starts) - 1))) + 1)

    def position_at(self, offset: int) -> dict:
        index = bisect.bisect_right(self._starts, offset) - 1
        return position(index, self.units(self.text[self._starts[index]:offset]))

    def text_edit(self, change: Change) -> dict:
        """An LSP TextEdit, as sent."""
        return {"range": span(self.position_at(change.start), self.position_at(change.end)), "newText": change.new}

    # --- edits -------------------------------------------------------------------------------

    def changes_to(self, after: str) -> list[Change]:
        """Changes that turn this text into ``after``: one per changed run of lines (``text_diff``:
        linear in the text, whatever its size), each narrowed to its changed characters, so an
        editor keeps cursors and folds elsewhere."""
        old, new = _LINE.findall(self.text), _LINE.findall(after)
        offsets = [0]
        for line in old:
            offsets.append(offsets[-1] + len(line))
        found = []
        for i1, i2, j1, j2 in line_hunks(old, new):
            before, replacement = "".join(old[i1:i2]), "".join(new[j1:j2])
            span = changed_span(before, replacement)
            if span is not None:
                found.append(self._change(offsets[i1] + span[0], offsets[i1] + span[1], replacement[span[0]:span[2]]))
        return found

    def _change(self, start: int, end: int, content: str) -> Change:
        # Never cut a \r\n in two: an editor that holds the pair as one line end would misplace it.
        if 0 < start < len(self.text) and self.text[start - 1 : start + 1] == "\r\n":
            start, content = start - 1, "\r" + content
        if 0 < end < len(self.text) and self.text[end - 1 : end + 1] == "\r\n":
            end, content = end + 1, content + "\n"
        return Change(self.uri, start, end, content)

    # --- suppressions ------------------------------------------------------------------------

    def noqa_change(self, line: int, code: str) -> Change | None:
        """The change that silences ``code`` on 1-based ``line`` with ``# noqa: CODE``, merged into
        a ``# noqa: ...`` list already there (as Ruff does); None where no comment can go at that
        line's end (it ends inside a string or with a backslash) or the line silences every code."""
        from ddpfix.suppressions import _NOQA  # the one pattern that decides what a noqa comment is

        ends, comments = self.comment_places()
        if line not in ends:
            return None
        start, end = self._starts[line - 1], self._starts[line - 1] + len(self._line_text(line - 1))
        if line in comments:
            column, length = comments[line]
            comment = self.text[start + column : start + column + length]
            match = _NOQA.search(comment)
            if match and match.group("codes"):
                after_codes = start + column + match.end("codes")
                return Change(self.uri, after_codes, after_codes, f", {code}")
            if match or re.search(r"#\s*ddpfix:\s*ignore\b", comment, re.IGNORECASE):
                return None  # silences the whole line already
        body = self.text[start:end]
        kept = len(body.rstrip())
        return Change(self.uri, start + kept, end, f"  # noqa: {code}")

    def comment_places(self) -> tuple[set[int], dict[int, tuple[int, int]]]:
        """The lines whose end can take a comment, and the comment each holds (column, length)."""
        if self._comment_places is None:
            ends: set[int] = set()
            comments: dict[int, tuple[int, int]] = {}
            try:
                for token in tokenize.generate_tokens(io.StringIO(self.text).readline):
                    if token.type in (tokenize.NEWLINE, tokenize.NL):
                        ends.add(token.start[0])
                    elif token.type == tokenize.COMMENT:
                        comments[token.start[0]] = (token.start[1], len(token.string))
            except (tokenize.TokenError, SyntaxError):
                pass  # an unfinished text: the lines read so far
            self._comment_places = (ends, comments)
        return self._comment_places


@dataclass(frozen=True)
class Cell:
    """A notebook cell as the client holds it: its text document and what kind of cell it is."""

    uri: str
    version: int | None
    kind: str  # nbformat's cell_type: "code" (Python), "markdown", or "raw" (code in another language)
    text: str


def notebook_bytes(cells: Sequence[Cell]) -> bytes:
    """The cells as an nbformat 4 notebook, the file the CLI would read: every cell in order, so
    the cell numbers the engine reports are the client's. Saved the way the notebook front-end
    writes back (one-space indent, a closing newline), so its fixes are kept."""
    content = {
        "cells": [{"cell_type": cell.kind, "metadata": {}, "source": cell.text,
                   **({"execution_count": None, "outputs": []} if cell.kind == "code" else {})} for cell in cells],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return (json.dumps(content, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


@dataclass
class Snapshot:
    """One version of one document (a Python file or a notebook), analysed."""

    uri: str
    version: int | None
    views: dict[int | None, TextView]  # None: the file; a cell's number (1-based, as findings count): that cell
    data: bytes
    encoding: str
    settings: Settings
    result: FileResult
    facts: ProjectFacts | None = None  # the project's, as the CLI reads them (``project_facts``)
    _diagnostics: dict[str, list[dict]] | None = None
    _single_fixes: dict[FixKey, list[Change]] = field(default_factory=dict)
    _all_fixes: list[Change] | None = None

    @property
    def is_notebook(self) -> bool:
        return None not in self.views

    def view(self, cell: int | None) -> TextView:
        """The text a finding or problem of ``cell`` is in (the first cell for a notebook-wide one)."""
        if cell in self.views:
            return self.views[cell]
        return next(iter(self.views.values()))

    def view_for(self, uri: str) -> TextView | None:
        return next((view for view in self.views.values() if view.uri == uri), None)

    # --- diagnostics -------------------------------------------------------------------------

    def finding_range(self, finding: Finding) -> dict:
        view = self.view(finding.cell)
        return span(view.position(finding.line, finding.column), view.position(finding.end_line, finding.end_column))

    def diagnostics(self) -> dict[str, list[dict]]:
        """Every text document's LSP Diagnostics, as sent (an empty list clears a cell's); built once."""
        if self._diagnostics is None:
            self._diagnostics = self._build_diagnostics()
        return self._diagnostics

    def _build_diagnostics(self) -> dict[str, list[dict]]:
        found: dict[str, list[dict]] = {view.uri: [] for view in self.views.values()}
        for problem in self.result.problems:
            found[self.view(problem.cell).uri].append(self._problem_diagnostic(problem))
        if self.settings.error:
            view = self.view(None)
            found[view.uri].append({"range": span(view.position(1, 1), view.line_end(1)), "message": self.settings.error,
                                    "severity": ERROR, "code": CONFIG_ERROR, "source": SOURCE})
        for finding in self.visible_findings():
            found[self.view(finding.cell).uri].append(self.finding_diagnostic(finding))
        return found

    def finding_diagnostic(self, finding: Finding) -> dict:
        rule = rule_for(finding.code)
        diagnostic = {
            "range": self.finding_range(finding),
            # The short message first (problem lists show the first line), the explanation under it (hover).
            "message": f"{finding.message}\n\n{finding.detail}" if finding.detail else finding.message,
            "severity": WARNING,
            "code": finding.code,
            "source": SOURCE,
            "data": {"fix": [finding.code, finding.line, finding.column] if finding.fixable else None,
                     "applicability": finding.applicability},
        }
        if rule:
            diagnostic["codeDescription"] = {"href": rule.url()}
        return diagnostic

    def _problem_diagnostic(self, problem: Problem) -> dict:
        # A problem with a place (a syntax error) is marked from there to the end of its line; a
        # note (a notebook cell left out) is information, not an error.
        view = self.view(problem.cell)
        if problem.line is not None:
            where = span(view.position(problem.line, problem.column or 1), view.line_end(problem.line))
        else:
            where = span(view.position(1, 1), view.line_end(1))
        severity = INFORMATION if problem.level == NOTE else ERROR
        return {"range": where, "message": problem.message, "severity": severity, "code": problem.code, "source": SOURCE}

    # --- findings ----------------------------------------------------------------------------

    def visible_findings(self) -> list[Finding]:
        return [finding for finding in self.result.findings if not finding.suppressed]

    def findings_in(self, uri: str) -> list[Finding]:
        """The findings shown in text document ``uri`` (a cell's, for a notebook)."""
        return [finding for finding in self.visible_findings() if self.view(finding.cell).uri == uri]

    def has_safe_fix(self) -> bool:
        return any(finding.safe for finding in self.visible_findings())

    # --- edits (each runs the engine: the server calls these in a worker thread) --------------

    def single_fix(self, finding: Finding) -> list[Change]:
        """The changes of one finding's fix on its own, from the engine re-run with just that fix
        allowed (kept: editors ask again each time the cursor moves within the finding)."""
        if finding.key not in self._single_fixes:
            from ddpfix.sources import fix_source

            single = fix_source(self.result.path, self.data, self.settings.rules, self.facts, only={finding.key},
                                options=self.settings.options)
            self._single_fixes[finding.key] = self.changes_to(single.fixed) if _fixed_cleanly(single) else []
        return self._single_fixes[finding.key]

    def fix_all(self) -> list[Change]:
        """The changes of every safe fix, the rules each on the previous one's output as ``--write``
        runs them (the diagnostics come from the report-only speed, which applies none). Unsafe fixes
        are never part of it, whatever the settings: each is a quick fix of its own, applied knowingly."""
        if self._all_fixes is None:
            found: list[Change] = []
            if self.has_safe_fix():
                from ddpfix.sources import fix_source

                options = {**self.settings.options, "unsafe_fixes": False}
                fixed = fix_source(self.result.path, self.data, self.settings.rules, self.facts, options=options)
                if _fixed_cleanly(fixed):
                    found = self.changes_to(fixed.fixed)
            self._all_fixes = found
        return self._all_fixes

    def changes_to(self, fixed: bytes) -> list[Change]:
        """The changes that turn the document into the engine's ``fixed`` bytes: the file's text, or
        for a notebook each cell's source in the notebook written back."""
        if not self.is_notebook:
            return self.views[None].changes_to(fixed.decode(self.encoding, _errors(self.encoding)))
        try:
            cells = json.loads(fixed.decode("utf-8"))["cells"]
        except (ValueError, KeyError, TypeError):
            return []
        found = []
        for number, view in self.views.items():
            source = cells[number - 1].get("source", "") if number - 1 < len(cells) else view.text
            found += view.changes_to("".join(source) if isinstance(source, list) else str(source))
        return found

    def text_edits(self, changes: Sequence[Change]) -> dict[str, list[dict]]:
        """The changes as LSP TextEdits, by text document (in the order of the views)."""
        by_uri: dict[str, list[dict]] = {}
        for view in self.views.values():
            edits = [view.text_edit(change) for change in changes if change.uri == view.uri]
            if edits:
                by_uri[view.uri] = edits
        return by_uri

    # --- titles ------------------------------------------------------------------------------

    def fix_title(self, finding: Finding, changes: Sequence[Change]) -> str:
        """What this finding's fix does, from its edit: ``DDP006: use self.device instead of
        "cuda:1"``; an unsafe fix says so (editors apply a preferred fix on one key press, and an
        unsafe one is never preferred)."""
        what = self._describe(changes) or _lines_edited(self, changes) or f"fix {finding.name}"
        return f"{finding.code}: {what}" if finding.safe else f"{finding.code} (unsafe fix, review it): {what}"

    def _describe(self, changes: Sequence[Change]) -> str | None:
        """'use NEW instead of OLD', 'add NEW' or 'remove OLD' for a fix that is one short edit."""
        if len(changes) != 1:
            return None
        change = changes[0]
        text = self.view_for(change.uri).text
        start, end, new = change.start, change.end, change.new
        if start < end and new:  # a replacement: widened to whole words and literals on both sides
            while start > 0 and _WORD_CHARACTER.match(text[start - 1]):
                start, new = start - 1, text[start - 1] + new
            while end < len(text) and _WORD_CHARACTER.match(text[end]):
                end, new = end + 1, new + text[end]
        old = text[start:end]
        if any(len(part) > _TITLE_LIMIT or "\n" in part or "\r" in part for part in (old.strip(), new.strip())):
            return None
        if not old.strip():
            return f"add {new.strip(' ,')}"
        if not new.strip():
            return f"remove {old.strip(' ,')}"
        return f"use {new.strip()} instead of {old.strip()}"


def _fixed_cleanly(result: FileResult) -> bool:
    """Whether a fix run changed the file and nothing went wrong (a note, such as a notebook cell
    left out, is only said)."""
    return result.changed and all(problem.level == NOTE for problem in result.problems)


def _lines_edited(snapshot: Snapshot, changes: Sequence[Change]) -> str | None:
    lines = sorted({snapshot.view_for(c.uri).position_at(c.start)["line"] + 1 for c in changes})
    if not lines:
        return None
    return f"edit line {lines[0]}" if len(lines) == 1 else f"edit lines {lines[0]}-{lines[-1]}"


def unique_titles(titled: Sequence[tuple[str, Finding]]) -> list[str]:
    """The titles, each made unique in its menu by the place of its finding where another has it too."""
    counts: dict[str, int] = {}
    for title, _ in titled:
        counts[title] = counts.get(title, 0) + 1
    return [title if counts[title] == 1 else f"{title} (line {finding.line}, column {finding.column})"
            for title, finding in titled]


def analyse(uri: str, version: int | None, text: str, path: str | None, units: Units, workspace_root: str | None,
            open_elsewhere: Mapping[str, str | None] | None = None) -> Snapshot:
    """Run the engine over one document's text. ``path``: the file behind it (None for an unsaved
    buffer: its settings come from the workspace root, and the URI names it in messages)."""
    encoding = _source_encoding(text)
    data = text.encode(encoding, _errors(encoding))
    name = path or uri
    result, settings, facts = _report(name, data, path or workspace_root or os.getcwd(), open_elsewhere)
    return Snapshot(uri, version, {None: TextView(uri, version, text, units)}, data, encoding, settings, result, facts)


def analyse_notebook(uri: str, version: int | None, cells: Sequence[Cell], path: str | None, units: Units,
                     workspace_root: str | None, open_elsewhere: Mapping[str, str | None] | None = None) -> Snapshot:
    """Run the engine over a notebook's cells, as the CLI runs the ``.ipynb`` file."""
    data = notebook_bytes(cells)
    name = path or uri
    if not name.endswith(NOTEBOOK_SUFFIX):
        name += NOTEBOOK_SUFFIX  # an untitled notebook: still the notebook front-end's
    result, settings, facts = _report(name, data, path or workspace_root or os.getcwd(), open_elsewhere)
    views = {number: TextView(cell.uri, cell.version, cell.text, units)
             for number, cell in enumerate(cells, start=1) if cell.kind == "code"}
    if not views:
        views = {number: TextView(cell.uri, cell.version, cell.text, units) for number, cell in enumerate(cells[:1], start=1)}
    return Snapshot(uri, version, views, data, "utf-8", settings, result, facts)


def _report(name: str, data: bytes, settings_path: str, open_elsewhere: Mapping[str, str | None] | None = None,
            ) -> tuple[FileResult, Settings, ProjectFacts | None]:
    settings = settings_for(settings_path)
    if settings.error:
        return FileResult(name, data), settings, None
    from ddpfix.sources import fix_source  # the engine: loaded on the first analysis, not at start-up

    facts = project_facts(name, data, settings.rules, open_elsewhere)
    # Report-only: findings where they stand in the buffer; fixes are computed when asked for.
    return fix_source(name, data, settings.rules, facts=facts, options=settings.options, fix=False), settings, facts


@functools.cache
def rule_for(code: str) -> type[Rule] | None:
    from ddpfix.rules import all_rules

    return next((rule for rule in all_rules() if rule.code == code), None)
