"""``--output-format sarif``: one SARIF 2.1.0 log, for GitHub code scanning and SARIF viewers.

Only the log's dict is built here; the CLI prints it. The shape, and why:

- one run whose ``tool.driver.rules`` holds every selected rule (a result's ``ruleIndex`` points
  into it), each with its page as ``help`` and its online page as ``helpUri``;
- paths are relative to the repository's root (``repo_paths``: the git root above the current
  folder, or the current folder outside any repository) under ``uriBaseId: %SRCROOT%``, which
  ``originalUriBaseIds`` resolves to the root's ``file://`` URI, so code scanning matches them to
  the repository from whatever subfolder ddpfix ran; a path outside it becomes an absolute
  ``file://`` URI;
- each result has ``partialFingerprints.primaryLocationLineHash`` (``hash:n``, ``ci_places``): the
  same from run to run however lines above the finding change, so code scanning tracks an alert
  across commits instead of closing and reopening it;
- columns count code points (``columnKind: unicodeCodePoints``), as LibCST does;
- a fixable finding carries its fix on its own (the edit of the file as it was read), exactly the
  edit of the json format; with ``--write`` a written fix is marked ``properties.fixed: true``, and
  no finding of a rewritten file offers ``fixes``: the file no longer holds the text they replace;
- a finding in a notebook is placed in a cell (``cell 3``, line 2 of that cell). Its region is
  where that cell line's text stands in the ``.ipynb`` file (the line of the JSON string, the
  columns of its characters there: ``ipynb_text``), the region its fix's edit also counts in; the
  cell, the line and column in the cell go in the location's ``message`` and ``properties``. Should
  the place not be found in the file's JSON, the location has no region rather than a wrong one;
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
from ddpfix.ci_places import CIPlaces, Region
from ddpfix.findings import FileResult, Finding, Problem
from ddpfix.repo_paths import repository_path, repository_root
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
    places = CIPlaces(results)
    sarif_results = []
    for result in results:
        # Once a file is rewritten, no edit computed from its old text may be offered.
        stale = written and result.changed
        for finding in result.findings:
            edit = None if stale else edits.get(finding)
            sarif_results.append(_result(finding, index[finding.code], edit, places, fixed=written and finding.fixed))
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
                        "toolExecutionNotifications": [_notification(problem, places) for problem in problems],
                    }
                ],
                "originalUriBaseIds": {SRCROOT: {"uri": repository_root().as_uri().rstrip("/") + "/"}},
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


def _result(finding: Finding, rule_index: int, edit: dict | None, places: CIPlaces, fixed: bool) -> dict:
    where = _artifact(finding.path)
    result: dict = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": "warning",
        "message": {"text": finding.full_message},
        "locations": [_finding_location(finding, where, places.region(finding))],
        "partialFingerprints": {"primaryLocationLineHash": places.fingerprint(finding)},
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


def _finding_location(finding: Finding, where: dict, region: Region | None) -> dict:
    physical: dict = {"artifactLocation": where}
    if region is not None:
        physical["region"] = _region(*region)
    if finding.cell is None:
        return {"physicalLocation": physical}
    in_cell = _region(finding.line, finding.column, finding.end_line, finding.end_column)
    return {
        "physicalLocation": physical,
        "message": {"text": f"cell {finding.cell}, line {finding.line}, column {finding.column}"},
        "properties": {"cell": finding.cell, **in_cell},
    }


def _notification(problem: Problem, places: CIPlaces) -> dict:
    location: dict = {"physicalLocation": {"artifactLocation": _artifact(problem.path)}}
    place = places.problem_place(problem)
    if place is not None:
        location["physicalLocation"]["region"] = {"startLine": place[0], "startColumn": place[1]}
    if problem.cell is not None:
        location["message"] = {"text": f"cell {problem.cell}" + (f", line {problem.line}" if problem.line else "")}
        in_cell = {"cell": problem.cell, "startLine": problem.line, "startColumn": problem.column}
        location["properties"] = {key: value for key, value in in_cell.items() if value is not None}
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
    """A path in the repository as a URI relative to %SRCROOT%, others as an absolute ``file://`` URI."""
    if path == "-":
        return {"uri": "stdin"}
    relative = repository_path(path)
    if relative is None:
        return {"uri": Path(os.path.abspath(path)).as_uri()}
    return {"uri": quote(relative), "uriBaseId": SRCROOT}
