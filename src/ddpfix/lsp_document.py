"""One open document as the language server sees it: the engine's result and its LSP translation.

The document is run exactly as ``ddpfix PATH`` runs a file named alone: the ``[tool.ddpfix]`` that
applies to its path picks the rules and options (``rules.select_rules``, as the CLI), and
``sources.fix_source`` does the rest, ``# noqa`` included. What is left here is arithmetic: the
engine counts 1-based lines and characters; LSP counts 0-based lines and, in the client's position
encoding (UTF-16 code units unless negotiated otherwise), columns.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import io
import os
import re
import tokenize
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from lsprotocol import types

from ddpfix import report
from ddpfix.config import ConfigError, find_pyproject
from ddpfix.config import load as load_config
from ddpfix.sources import fix_source
from ddpfix.findings import FileResult, Finding, FixKey, Problem
from ddpfix.rules import UnknownRule, all_rules, select_rules
from ddpfix.rules.base import Rule

SOURCE = "ddpfix"
FIX_ALL_KIND = "source.fixAll.ddpfix"
FIX_ALL_TITLE = "Fix all DDP issues"
CONFIG_ERROR = "config"

#: Counts a string in the client's position units (``PositionCodec.client_num_units``).
Units = Callable[[str], int]

# LSP ends lines at \r\n, \r and \n only (Python's str.splitlines also splits at form feeds & co.).
_LINE_END = re.compile(r"\r\n|\r|\n")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")  # a line with its end


@dataclass(frozen=True)
class Settings:
    """The rules and rule options for one path, or why the configuration could not be read."""

    rules: tuple[type[Rule], ...] = ()
    options: Mapping[str, object] = field(default_factory=dict)
    error: str | None = None


def settings_for(start: str) -> Settings:
    """What the CLI would use for a file at ``start`` (no command-line flags)."""
    config = None
    try:
        config = load_config(find_pyproject(start))
        rules = select_rules(config.select, config.ignore, config.extend_select)
    except ConfigError as err:
        return Settings(error=str(err))
    except UnknownRule as err:
        return Settings(error=f"{config.path}: [tool.ddpfix] {err}")
    return Settings(tuple(rules), {"log_mode": config.log_mode or "auto", "show_suppressed": False})


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


@dataclass
class Snapshot:
    """One version of one document, analysed."""

    uri: str
    version: int | None
    text: str
    data: bytes
    encoding: str
    settings: Settings
    result: FileResult
    units: Units
    _starts: list[int] = field(default_factory=list)
    _single_fixes: dict[FixKey, list[types.TextEdit]] = field(default_factory=dict)
    _all_fixes: list[types.TextEdit] | None = None

    def __post_init__(self):
        self._starts = [0] + [match.end() for match in _LINE_END.finditer(self.text)]

    # --- positions ---------------------------------------------------------------------------

    def _line_text(self, index: int) -> str:
        start = self._starts[index]
        end = self._starts[index + 1] if index + 1 < len(self._starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def position(self, line: int, column: int) -> types.Position:
        """The LSP position of a 1-based line and 1-based character column, clamped into the text."""
        index = min(max(line - 1, 0), len(self._starts) - 1)
        line_text = self._line_text(index)
        return types.Position(index, self.units(line_text[: min(max(column - 1, 0), len(line_text))]))

    def line_end(self, line: int) -> types.Position:
        return self.position(line, len(self._line_text(min(max(line - 1, 0), len(self._starts) - 1))) + 1)

    def position_at(self, offset: int) -> types.Position:
        index = bisect.bisect_right(self._starts, offset) - 1
        return types.Position(index, self.units(self.text[self._starts[index]:offset]))

    # --- diagnostics -------------------------------------------------------------------------

    def finding_range(self, finding: Finding) -> types.Range:
        return types.Range(self.position(finding.line, finding.column), self.position(finding.end_line, finding.end_column))

    def diagnostics(self) -> list[types.Diagnostic]:
        found = [self._problem_diagnostic(problem) for problem in self.result.problems]
        if self.settings.error:
            found.append(types.Diagnostic(types.Range(self.position(1, 1), self.line_end(1)), self.settings.error,
                                          severity=types.DiagnosticSeverity.Error, code=CONFIG_ERROR, source=SOURCE))
        found += [self.finding_diagnostic(finding) for finding in self.result.findings if not finding.suppressed]
        return found

    def finding_diagnostic(self, finding: Finding) -> types.Diagnostic:
        rule = rule_for(finding.code)
        return types.Diagnostic(
            range=self.finding_range(finding),
            # The short message first (problem lists show the first line), the explanation under it (hover).
            message=f"{finding.message}\n\n{finding.detail}" if finding.detail else finding.message,
            severity=types.DiagnosticSeverity.Warning,
            code=finding.code,
            code_description=types.CodeDescription(rule.url()) if rule else None,
            source=SOURCE,
            data={"fix": [finding.code, finding.line, finding.column] if finding.fixable else None,
                  "applicability": finding.applicability},
        )

    def _problem_diagnostic(self, problem: Problem) -> types.Diagnostic:
        # A problem with a place (a syntax error) is marked from there to the end of its line.
        if problem.line is not None:
            where = types.Range(self.position(problem.line, problem.column or 1), self.line_end(problem.line))
        else:
            where = types.Range(self.position(1, 1), self.line_end(1))
        return types.Diagnostic(where, problem.message, severity=types.DiagnosticSeverity.Error,
                                code=problem.code, source=SOURCE)

    # --- edits -------------------------------------------------------------------------------

    def fixable_findings(self) -> list[Finding]:
        return [finding for finding in self.result.findings if finding.fixable and not finding.suppressed]

    def single_fix(self, finding: Finding) -> list[types.TextEdit]:
        """The edits of one finding's fix on its own, from the engine re-run with just that fix allowed
        (kept: editors ask again each time the cursor moves within the finding)."""
        if finding.key not in self._single_fixes:
            single = fix_source(self.result.path, self.data, self.settings.rules, only={finding.key}, options=self.settings.options)
            changed = single.changed and not single.problems
            self._single_fixes[finding.key] = self.edits_to(single.fixed) if changed else []
        return self._single_fixes[finding.key]

    def fix_all(self) -> list[types.TextEdit]:
        """The edits of every safe fix, the rules each on the previous one's output as ``--write`` runs
        them (the diagnostics come from the report-only speed, which applies none). Unsafe fixes are
        never part of it, whatever the settings: each is a quick fix of its own, applied knowingly."""
        if self._all_fixes is None:
            self._all_fixes = []
            if any(finding.safe for finding in self.fixable_findings()):
                options = {**self.settings.options, "unsafe_fixes": False}
                fixed = fix_source(self.result.path, self.data, self.settings.rules, options=options)
                if fixed.changed and not fixed.problems:
                    self._all_fixes = self.edits_to(fixed.fixed)
        return self._all_fixes

    def edits_to(self, fixed: bytes) -> list[types.TextEdit]:
        """Edits that turn this document into ``fixed``: one per changed run of lines, each narrowed
        to its changed span (``report.text_edit``), so an editor keeps cursors and folds elsewhere."""
        after = fixed.decode(self.encoding, _errors(self.encoding))
        old, new = _LINE.findall(self.text), _LINE.findall(after)
        offsets = [0]
        for line in old:
            offsets.append(offsets[-1] + len(line))
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        return [
            self._edit(offsets[i1], "".join(old[i1:i2]), "".join(new[j1:j2]))
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
        ]

    def _edit(self, base: int, before: str, after: str) -> types.TextEdit:
        span = report.text_edit(before, after)
        # text_edit counts lines at \n only; back to offsets into the document, then to LSP positions.
        line_starts = [0] + [match.end() for match in re.finditer("\n", before)]
        start = base + line_starts[span["line"] - 1] + span["column"] - 1
        end = base + line_starts[span["end_line"] - 1] + span["end_column"] - 1
        content = span["content"]
        # Never cut a \r\n in two: an editor that holds the pair as one line end would misplace it.
        if 0 < start < len(self.text) and self.text[start - 1 : start + 1] == "\r\n":
            start, content = start - 1, "\r" + content
        if 0 < end < len(self.text) and self.text[end - 1 : end + 1] == "\r\n":
            end, content = end + 1, content + "\n"
        return types.TextEdit(types.Range(self.position_at(start), self.position_at(end)), content)


def analyse(uri: str, version: int | None, text: str, path: str | None, units: Units, workspace_root: str | None) -> Snapshot:
    """Run the engine over one document's text. ``path``: the file behind it (None for an unsaved
    buffer: its settings come from the workspace root, and the URI names it in messages)."""
    encoding = _source_encoding(text)
    data = text.encode(encoding, _errors(encoding))
    settings = settings_for(path or workspace_root or os.getcwd())
    name = path or uri
    if settings.error:
        result = FileResult(name, data)
    else:
        # Report-only: findings where they stand in the buffer; fixes are computed when asked for.
        result = fix_source(name, data, settings.rules, facts=None, options=settings.options, fix=False)
    return Snapshot(uri, version, text, data, encoding, settings, result, units)


@functools.cache
def rule_for(code: str) -> type[Rule] | None:
    return next((rule for rule in all_rules() if rule.code == code), None)
