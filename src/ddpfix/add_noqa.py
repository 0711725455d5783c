"""``--add-noqa``: silence every finding left with a ``# noqa: CODE`` comment, as Ruff's ``--add-noqa``.

The comment goes where ``RuleContext.report`` looks for one (``suppressions``): the finding's own
line, or else the first line of the statement it is in. A comment can only end a line that ends
outside a string and not in a backslash continuation; a finding with neither of its two lines free
is left as it is, with a note. An existing ``# noqa: X`` on the line is merged into; any other
comment is kept, the directive after it. In a notebook the comment goes on the finding's line in
its cell (through the notebook front-end, which writes back only the cells' sources).

A result is kept only if it parses and the same rules, with the same project facts, find nothing
left but the findings noted: so ``--check`` afterwards agrees, and a second run adds nothing.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ddpfix.engine import INTERNAL_ERROR
from ddpfix.facts import ProjectFacts
from ddpfix.findings import NOTE, FileResult, Finding, Problem
from ddpfix.ipython_syntax import lines_of
from ddpfix.rules.base import Rule, TreeView
from ddpfix.sources import fix_source, is_notebook
from ddpfix.suppressions import noqa_comment, with_codes

#: The code of a result that failed its own check (it is never written): an internal error, as the engine's.
NOT_SILENCED = "E001"


@dataclass
class Added:
    """What ``--add-noqa`` made of one file: ``result.fixed`` holds the new bytes (None: unchanged),
    ``result.findings`` the findings still left; ``directives``: the lines that got or extended a
    ``# noqa``; ``problems``: notes on findings left, or why the file is not written."""

    result: FileResult
    directives: int = 0
    problems: list[Problem] = field(default_factory=list)


def add_noqa(result: FileResult, rules: Sequence[type[Rule]], facts: ProjectFacts,
             options: Mapping[str, object]) -> Added:
    """``result``: the file as a report-only run (``--check``) found it."""
    findings = [f for f in result.findings if not f.suppressed]
    unchanged = FileResult(result.path, result.original, None, findings)
    if not findings or any(p.level != NOTE for p in result.problems):
        return Added(unchanged)
    try:
        if is_notebook(result.path):
            return _notebook(result.path, result.original, findings, rules, facts, options)
        return _python(result.path, result.original, findings, rules, facts, options)
    except (SyntaxError, tokenize.TokenError, ValueError, UnicodeError, LookupError, RecursionError, MemoryError) as err:
        why = f"cannot add noqa comments: {type(err).__name__}: {err}"
        return Added(unchanged, problems=[Problem(result.path, NOTE, why, level=NOTE)])


def _python(path, data, findings, rules, facts, options) -> Added:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)  # as the rules read it (TreeView.text): a BOM is the codec's
    if text.encode(encoding) != data:
        return _left(path, data, findings, "the file's bytes do not survive decoding; no noqa added")
    view = TreeView(_parse(data), data)
    new_text, directives, skipped = with_noqa(text, {f: f.line for f in findings}, view.statement_start)
    fixed = new_text.encode(encoding) if directives else None
    return _checked(path, data, fixed, findings, skipped, directives, rules, facts, options)


def _notebook(path, data, findings, rules, facts, options) -> Added:
    from ddpfix import notebook  # loaded for notebooks only

    book = notebook.load(data, options)
    module = book.module()  # IPython lines masked: a comment is never put on one
    view = TreeView(_parse(module.encode("utf-8")), module.encode("utf-8"))
    placed = {f: book.joined_line(module, f.cell, f.line) for f in findings if f.cell is not None}
    # A finding in a ``%time`` statement: its line in the module is a mask, which must come back as
    # it was; the comment goes on the cell's own line instead.
    statements = book.statement_lines(module)
    on_magic_lines = {f: statements[line] for f, line in placed.items() if line in statements}
    placed = {f: line for f, line in placed.items() if line not in statements}
    new_module, directives, skipped = with_noqa(module, placed, view.statement_start)
    skipped += [f for f in findings if f.cell is None]
    fixed = None
    if directives or on_magic_lines:
        sources = book.restore(new_module)
        if sources is None:
            return _left(path, data, findings, "no noqa added: the notebook's cells could not be told apart")
        directives += _noqa_on_magic_lines(sources, on_magic_lines)
        fixed = book.write(data, sources)
        if fixed is None:
            return _left(path, data, findings, "no noqa added: writing this notebook back would change its "
                         "formatting (save it from Jupyter once, then run again)")
    return _checked(path, data, fixed, findings, skipped, directives, rules, facts, options)


def _noqa_on_magic_lines(sources: dict[int, str], findings: Mapping[Finding, int]) -> int:
    """Put the ``# noqa`` of each finding in a ``%time`` statement on its line of ``sources`` (by
    cell), after the statement (``findings``: where it starts in the line); the lines changed."""
    changed = 0
    for (cell, line), group in _by_line(findings).items():
        rows = lines_of(sources[cell])
        row = rows[line - 1]
        body = row.rstrip("\r\n")
        start = findings[group[0]]
        statement, count, _ = with_noqa(body[start:] + "\n", dict.fromkeys(group, 1), lambda number: number)
        if count:
            rows[line - 1] = body[:start] + statement.rstrip("\n") + row[len(body):]
            sources[cell] = "".join(rows)
            changed += 1
    return changed


def _by_line(findings: Mapping[Finding, int]) -> dict[tuple[int, int], list[Finding]]:
    lines: dict[tuple[int, int], list[Finding]] = {}
    for finding in findings:
        lines.setdefault((finding.cell, finding.line), []).append(finding)
    return lines


def with_noqa(text: str, lines: Mapping[Finding, int], statement_start: Callable[[int], int]
              ) -> tuple[str, int, list[Finding]]:
    """``text`` with a ``# noqa`` for each finding (``lines``: the line it is checked at), the number
    of lines that got or extended one, and the findings that no line could take."""
    if re.search(r"\r(?!\n)", text):
        return text, 0, list(lines)  # lone CR line ends: tokenize and CPython count lines differently
    ends, comments = _line_ends(text)
    codes: dict[int, set[str]] = {}
    skipped = []
    for finding, line in lines.items():
        target = next((n for n in dict.fromkeys((line, statement_start(line))) if n in ends), None)
        if target is None:
            skipped.append(finding)
        else:
            codes.setdefault(target, set()).add(finding.code)
    rows = text.split("\n")
    directives = 0
    for number, wanted in codes.items():
        row = rows[number - 1]
        body, cr = (row[:-1], "\r") if row.endswith("\r") else (row, "")
        comment = comments.get(number)
        if comment is not None:
            start = comment.start[1]
            new = body[:start] + with_codes(body[start:], wanted)
        else:
            new = body.rstrip(" \t") + "  " + noqa_comment(wanted)
        if new != body:
            rows[number - 1] = new + cr
            directives += 1
    return "\n".join(rows), directives, skipped


def _line_ends(text: str) -> tuple[set[int], dict[int, tokenize.TokenInfo]]:
    """The lines a comment may end (their newline is a token: outside strings and continuations),
    and the comment each already has."""
    ends: set[int] = set()
    comments: dict[int, tokenize.TokenInfo] = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in (tokenize.NEWLINE, tokenize.NL):
            ends.add(token.start[0])
        elif token.type == tokenize.COMMENT:
            comments[token.start[0]] = token
    return ends, comments


def _parse(source: bytes) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the user's SyntaxWarnings are not ours to print
        return ast.parse(source)


def _checked(path, data, fixed, findings, skipped, directives, rules, facts, options) -> Added:
    """The new bytes, if they parse and the rules find only the skipped findings left in them."""
    problems = [_note(f, "left: no line of its statement can take a # noqa comment (it ends inside a "
                      "string or a backslash continuation)") for f in skipped]
    if fixed is None:
        return Added(FileResult(path, data, None, skipped), 0, problems)
    after = fix_source(path, fixed, rules, facts, options={**options, "show_suppressed": False}, fix=False)
    left = {(f.code, f.cell, f.line, f.column) for f in after.findings if not f.suppressed}
    expected = {(f.code, f.cell, f.line, f.column) for f in skipped}
    if any(p.level != NOTE for p in after.problems) or left != expected:
        why = f"{INTERNAL_ERROR}: the noqa comments would not silence exactly the findings; file left as it was"
        return Added(FileResult(path, data, None, findings), 0, [Problem(path, NOT_SILENCED, why)])
    return Added(FileResult(path, data, fixed, skipped), directives, problems)


def _left(path, data, findings, why) -> Added:
    return Added(FileResult(path, data, None, findings), 0, [Problem(path, NOTE, why, level=NOTE)])


def _note(finding: Finding, why: str) -> Problem:
    return Problem(finding.path, NOTE, f"{finding.code} {why}", finding.line, finding.column, finding.cell, level=NOTE)
