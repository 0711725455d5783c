"""``--output-format sarif``: one SARIF 2.1.0 log, for GitHub code scanning and SARIF viewers.

Only the log's dict is built here; the CLI prints it. The shape, and why:

- one run whose ``tool.driver.rules`` holds every selected rule (a result's ``ruleIndex`` points
  into it), each with its page as ``help`` and its online page as ``helpUri``;
- paths are relative to the current directory under ``uriBaseId: %SRCROOT%``, which
  ``originalUriBaseIds`` resolves to the current directory's ``file://`` URI, so code scanning
  matches them to the repository; a path outside it becomes an absolute ``file://`` URI;
- columns count code points (``columnKind: unicodeCodePoints``), as LibCST does;
- a fixable finding carries its fix on its own (the edit of the file as it was read), exactly the
  edit of the json format; with ``--write`` a written fix is marked ``properties.fixed: true``, and
  no finding of a rewritten file offers ``fixes``: the file no longer holds the text they replace;
- a finding in a notebook is placed in a cell (``cell 3``, line 2 of that cell), which is no
  region of the ``.ipynb`` file: its location has no region, and says the cell, line and column in
  its ``message`` and ``properties``; its fix is still an edit of the ``.ipynb`` file's text;
- files ddpfix could not check are tool execution notifications (level ``error``), not results,
  and make ``executionSuccessful`` false (the exit code says the same: 2); notes (a notebook cell
  left out) are notifications of level ``note`` and fail nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import quote

from ddpfix import __version__
from ddpfix.findings import FileResult, Finding, Problem
from ddpfix.report import display_path
from ddpfix.rules.base import Rule

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/ddpfix/ddpfix"
SRCROOT = "%SRCROOT%"


def sarif_log(
    results: Sequence[FileResult],
    problems: Sequence[Problem],
    rules: Sequence[type[Rule]],
    edits: Mapping[Finding, dict],
    *,
    written: bool,
) -> dict:
    """The whole log. ``edits`` maps a fixable finding to its fix's edit (``report.text_edit``);
    ``written`` says that ``--write`` wrote the changed files."""
    index = {rule.code: position for position, rule in enumerate(rules)}
    sarif_results = []
    for result in results:
        # Once a file is rewritten, no edit computed from its old text may be offered.
        stale = written and result.changed
        for finding in result.findings:
            edit = None if stale else edits.get(finding)
            sarif_results.append(_result(finding, index[finding.code], edit, fixed=written and finding.fixed))
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "ddpfix",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": [_rule(rule) for rule in rules],
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": not any(problem.level == "error" for problem in problems),
                        "toolExecutionNotifications": [_notification(problem) for problem in problems],
                    }
                ],
                "originalUriBaseIds": {SRCROOT: {"uri": Path.cwd().as_uri().rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": sarif_results,
            }
        ],
    }


def _rule(rule: type[Rule]) -> dict:
    page = rule.page()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _what_it_does(page) or rule.summary},
        "help": {"text": page, "markdown": page},
        "helpUri": rule.url(),
        "defaultConfiguration": {"level": "warning"},
        "properties": {"fixable": rule.fixable, "tags": ["ddp", "pytorch-lightning"]},
    }


def _what_it_does(page: str) -> str:
    """The *What it does* section of a rule's page, as one paragraph."""
    lines = page.splitlines()
    try:
        start = lines.index("## What it does") + 1
    except ValueError:
        return ""
    section = []
    for line in lines[start:]:
        if line.startswith("#"):
            break
        section.append(line.strip())
    return " ".join(line for line in section if line)


def _result(finding: Finding, rule_index: int, edit: dict | None, fixed: bool) -> dict:
    where = _artifact(finding.path)
    result: dict = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": "warning",
        "message": {"text": finding.message},
        "locations": [_finding_location(finding, where)],
    }
    if edit is not None:
        result["fixes"] = [
            {
                "description": {"text": f"Apply ddpfix's {finding.code} ({finding.name}) fix"
                                        + ("" if finding.safe else f" (unsafe: {finding.unsafe_reason})")},
                "artifactChanges": [
                    {
                        "artifactLocation": dict(where),
                        "replacements": [
                            {
                                "deletedRegion": _region(edit["line"], edit["column"], edit["end_line"], edit["end_column"]),
                                "insertedContent": {"text": edit["content"]},
                            }
                        ],
                    }
                ],
            }
        ]
    if finding.suppressed:
        result["suppressions"] = [{"kind": "inSource"}]
    result["properties"] = {"fixable": finding.fixable, "applicability": finding.applicability, "fixed": fixed}
    if finding.unsafe:
        result["properties"]["unsafeReason"] = finding.unsafe_reason
    return result


def _finding_location(finding: Finding, where: dict) -> dict:
    span = _region(finding.line, finding.column, finding.end_line, finding.end_column)
    if finding.cell is None:
        return {"physicalLocation": {"artifactLocation": where, "region": span}}
    return {
        "physicalLocation": {"artifactLocation": where},
        "message": {"text": f"cell {finding.cell}, line {finding.line}, column {finding.column}"},
        "properties": {"cell": finding.cell, **span},
    }


def _notification(problem: Problem) -> dict:
    location: dict = {"physicalLocation": {"artifactLocation": _artifact(problem.path)}}
    if problem.line is not None and problem.cell is None:
        location["physicalLocation"]["region"] = {"startLine": problem.line, "startColumn": problem.column or 1}
    elif problem.cell is not None:
        location["message"] = {"text": f"cell {problem.cell}" + (f", line {problem.line}" if problem.line else "")}
        place = {"cell": problem.cell, "startLine": problem.line, "startColumn": problem.column}
        location["properties"] = {key: value for key, value in place.items() if value is not None}
    error = problem.level == "error"
    return {
        "level": "error" if error else "note",
        "message": {"text": f"{problem.code} {problem.message}" if error else problem.message},
        "descriptor": {"id": problem.code},
        "locations": [location],
    }


def _region(line: int, column: int, end_line: int, end_column: int) -> dict:
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _artifact(path: str) -> dict:
    """A path below the current directory as a URI relative to %SRCROOT%, others as ``file://``."""
    if path == "-":
        return {"uri": "stdin"}
    shown = display_path(path)
    if os.path.isabs(shown):
        return {"uri": Path(shown).as_uri()}
    return {"uri": quote(shown), "uriBaseId": SRCROOT}
