"""``add_noqa.with_noqa`` on every line of every fixture: the comments never change the program,
each lands where a suppression is read, and a second pass adds nothing. (The command line's
behaviour is in test_cli_output.py; this checks the placement on far more shapes than a CLI test.)"""

from __future__ import annotations

import ast

from conftest import fixture_sources

from ddpfix.add_noqa import with_noqa
from ddpfix.findings import Finding
from ddpfix.rules.base import TreeView
from ddpfix.suppressions import is_suppressed, suppressions


def finding_at(line: int, code: str) -> Finding:
    return Finding("f.py", line, 1, line, 1, code, "name", "message", False)


def test_a_noqa_on_every_line_of_every_fixture():
    placed = skipped = 0
    for source in fixture_sources():
        data = source.encode("utf-8")
        tree = ast.parse(data)
        view = TreeView(tree, data)
        # Two codes on alternate lines, so merged directives occur (a line and its statement's start).
        findings = {finding_at(n, f"DDP{900 + n % 2}"): n for n in range(1, source.count("\n") + 1)}
        text, directives, left = with_noqa(source, findings, view.statement_start)
        assert ast.dump(ast.parse(text)) == ast.dump(tree), "a comment changed the program"
        new_view = TreeView(ast.parse(text.encode("utf-8")), text.encode("utf-8"))
        table = suppressions(text)
        for finding in findings:
            if finding in left:
                continue
            line = finding.line
            assert is_suppressed(table, line, finding.code) or is_suppressed(
                table, new_view.statement_start(line), finding.code), (line, text.splitlines()[line - 1])
        again, more, left_again = with_noqa(text, findings, new_view.statement_start)
        assert (again, more) == (text, 0) and set(left_again) == set(left)
        assert text.count("\n") == source.count("\n")
        placed += len(findings) - len(left)
        skipped += len(left)
    assert placed > 5_000 and skipped > 0  # both paths were taken
