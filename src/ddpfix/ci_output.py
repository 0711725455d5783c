"""The lines the CLI prints for ``--output-format github`` and ``gitlab`` (CI services read them).

Both name files relative to the repository's root (``repo_paths``) and place notebook findings in
the ``.ipynb`` file's text (``ci_places``), as ``sarif`` does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from ddpfix import report
from ddpfix.ci_places import CIPlaces
from ddpfix.findings import FileResult, Problem
from ddpfix.gitlab import code_quality_report
from ddpfix.repo_paths import ci_path


def lines(output_format: str, results: Sequence[FileResult], problems: Sequence[Problem], *,
          written: bool) -> Iterator[str]:
    if output_format == "gitlab":
        yield json.dumps(code_quality_report(results, problems, written=written), indent=2, ensure_ascii=False)
        return
    places = CIPlaces(results)
    for problem in problems:
        place = places.problem_place(problem)
        yield report.github_line(problem=problem, path=ci_path(problem.path),
                                 region=(*place, *place) if place else None)
    for result in results:
        for finding in result.findings:
            yield report.github_line(finding, path=ci_path(finding.path), region=places.region(finding))

