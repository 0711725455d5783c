"""``--output-format gitlab``: a GitLab Code Quality report (``artifacts:reports:codequality``).

GitLab reads a JSON array of issues, a subset of the Code Climate spec, and shows them in the merge
request widget and diff. Each issue has what GitLab requires, and only that:

- ``description``: the rule's code and message (in a notebook, with the cell and the cell's line);
- ``check_name``: the rule's code;
- ``fingerprint``: unique in the report and stable across runs, so GitLab can tell new issues from
  old ones: a hash of the path and the finding's line fingerprint (``ci_places``: rule code, line
  text, rank among equal ones; no line number, so edits above a finding keep it);
- ``severity``: ``major`` for a finding (a DDP pitfall crashes, hangs or skews training), and
  ``critical`` for a file ddpfix could not check (unreadable, unparsable: its findings are unknown);
- ``location.path``: relative to the repository's root, as GitLab wants (``repo_paths``; a file
  outside the repository keeps its absolute path); ``location.lines.begin``/``end``: the lines in
  the file's text (for a notebook, the ``.ipynb`` JSON's lines of the cell line).

Left out: findings silenced in the source (shown only with ``--show-suppressed``, and GitLab has no
way to mark them), findings whose fix ``--write`` wrote (no longer in the code), and notes (a
notebook cell left out), which are no issue of the code.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ddpfix.ci_places import CIPlaces
from ddpfix.findings import FileResult, Problem
from ddpfix.repo_paths import ci_path

FINDING_SEVERITY = "major"
ERROR_SEVERITY = "critical"


def code_quality_report(results: Sequence[FileResult], problems: Sequence[Problem], *, written: bool) -> list[dict]:
    places = CIPlaces(results)
    issues = []
    for problem in problems:
        if problem.level != "error":
            continue
        path = ci_path(problem.path)
        line = (places.problem_place(problem) or (1, 1))[0]
        issues.append(_issue(f"{problem.code} {problem.message}", problem.code, ERROR_SEVERITY, path, line, line,
                             f"{problem.code}\0{problem.message}\0{problem.line}\0{problem.cell}"))
    for result in results:
        for finding in result.findings:
            if finding.suppressed or (written and finding.fixed):
                continue
            path = ci_path(finding.path)
            description = f"{finding.code} {finding.message}"
            if finding.cell is not None:
                description += f" (cell {finding.cell} line {finding.line})"
            region = places.region(finding)
            begin, end = (region[0], region[2]) if region else (1, 1)
            issue = _issue(description, finding.code, FINDING_SEVERITY, path, begin, end, places.fingerprint(finding))
            if finding.detail:  # Code Climate's "content": the explanation, shown when the issue is opened
                issue["content"] = {"body": finding.detail}
            issues.append(issue)
    return issues


def _issue(description: str, check: str, severity: str, path: str, begin: int, end: int, identity: str) -> dict:
    lines = {"begin": begin, "end": end} if end > begin else {"begin": begin}
    return {
        "description": description,
        "check_name": check,
        "fingerprint": hashlib.sha256(f"{path}\0{identity}".encode("utf-8", "surrogatepass")).hexdigest()[:32],
        "severity": severity,
        "location": {"path": path, "lines": lines},
    }

