"""A fixable rule's ``check`` (CPython's tree, the report-only runs) reports exactly what its
``apply`` (LibCST's tree) reports with no fix applied: position, end, message, ``fixable``.

Every rule with both paths runs over every fixture input (each with the facts of its run) and
every Python file of ``tests/data``, once as shipped and once with its ``check`` switched off. Where
the tree path raises ``NeedsLibCST`` the engine asks ``apply`` and the two agree trivially; the
last test makes sure each rule's tree path does answer most of its own fixtures, so this cannot
pass by deferring everything.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixture_cases import FIXTURES, cases

import ddpfix.engine as engine
from ddpfix.sources import fix_source
from ddpfix.facts import ProjectFacts, file_facts
from ddpfix.transforms import all_rules
from ddpfix.transforms.base import Rule

TWO_PATHS = [rule for rule in all_rules() if rule.reads_tree and rule.edits]
DATA = sorted((Path(__file__).parent / "data").glob("*.py"))


def findings(path: str, data: bytes, rule: type[Rule], facts: ProjectFacts | None) -> list[tuple]:
    result = fix_source(path, data, [rule], facts, fix=False)
    return sorted((f.line, f.column, f.end_line, f.end_column, f.code, f.message, f.fixable, f.fixed)
                  for f in result.findings) + sorted((p.code, p.message) for p in result.problems)


def _inputs():
    for rule in TWO_PATHS:
        for case in cases():
            yield pytest.param(rule, case.input, case.group, id=f"{rule.code}-{case.id}")
        for path in DATA:
            yield pytest.param(rule, path, [path], id=f"{rule.code}-data/{path.name}")


def test_some_fixable_rules_read_cpythons_tree():
    assert TWO_PATHS, "no fixable rule has a tree check: this file tests nothing"


@pytest.mark.parametrize(("rule", "path", "group"), list(_inputs()))
def test_check_reports_what_apply_reports(rule, path, group):
    data = path.read_bytes()
    facts = ProjectFacts.merge((file_facts(str(p), p.read_bytes()) for p in group), whole=True)
    assert findings(str(path), data, rule, facts) == findings(str(path), data, rule.without_tree_check(), facts)


@pytest.mark.parametrize("rule", TWO_PATHS, ids=lambda r: r.code)
def test_the_comparison_can_fail(rule):
    """A tree check that misses every finding is caught on the rule's own fixtures."""
    blind = type(rule.__name__, (rule,), {"check": lambda self, tree, ctx: None})
    own = [c for c in cases() if c.input.relative_to(FIXTURES).parts[0] == rule.name and c.fully_fixed]
    assert any(findings(str(c.input), c.input.read_bytes(), blind, None)
               != findings(str(c.input), c.input.read_bytes(), rule.without_tree_check(), None) for c in own)


@pytest.mark.parametrize("rule", TWO_PATHS, ids=lambda r: r.code)
def test_each_tree_check_answers_most_of_its_own_fixtures(rule, monkeypatch):
    """At most a quarter of the rule's own fixtures with findings may need LibCST's tree."""
    parsed: list[str] = []
    parse = engine._parse
    monkeypatch.setattr(engine, "_parse", lambda path, data: parsed.append(path) or parse(path, data))
    own = [c for c in cases() if c.input.relative_to(FIXTURES).parts[0] == rule.name]
    reported = {str(c.input) for c in own if fix_source(str(c.input), c.input.read_bytes(), [rule], None, fix=False).findings}
    deferred = reported & set(parsed)
    assert reported and len(deferred) <= len(reported) // 4, sorted(deferred)
