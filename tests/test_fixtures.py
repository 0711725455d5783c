"""Every fixture pair: exact output, negatives untouched, expected files stable (idempotency)."""

from __future__ import annotations

import pytest
from fixture_cases import FIXTURES, cases, expected_files, is_input

from ddpfix.engine import fix_source
from ddpfix.facts import ProjectFacts, file_facts
from ddpfix.transforms import all_rules

RULES = all_rules()


def describe(finding) -> str:
    cell = f"cell {finding.cell}:" if finding.cell is not None else ""
    return f"{cell}{finding.line}:{finding.column} {finding.code} {'fixable' if finding.fixable else 'manual'}"


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.id)
def test_fixture(case):
    data = case.input.read_bytes()
    facts = ProjectFacts.merge(file_facts(str(p), p.read_bytes()) for p in case.group)
    result = fix_source(str(case.input), data, RULES, facts)
    assert not [p for p in result.problems if p.level == "error"], result.problems
    if case.expected is None:
        assert result.fixed is None, "a negative case must come out byte-identical"
    else:
        assert result.output == case.expected.read_bytes()
    found = sorted(describe(f) for f in result.findings)
    if case.findings is not None:
        assert found == case.findings
    elif case.expected is None:
        assert found == [], "a negative case must have no findings"
    else:
        assert any(f.fixable and f.fixed for f in result.findings)


@pytest.mark.parametrize("expected", expected_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_expected_output_is_stable(expected):
    data = expected.read_bytes()
    inputs = [p for p in expected.parent.iterdir() if is_input(p)]
    group = inputs if expected.parent.parent != FIXTURES else []
    facts = ProjectFacts.merge(file_facts(str(p), p.read_bytes()) for p in [*group, expected])
    result = fix_source(str(expected), data, RULES, facts)
    assert result.fixed is None, "running again changed the fixed output (not idempotent)"
    assert not any(f.fixable for f in result.findings)


def test_every_rule_has_fixtures():
    folders = {p.name for p in FIXTURES.iterdir() if p.is_dir()}
    for rule in RULES:
        assert rule.name in folders, f"{rule.code} {rule.name} has no fixtures/{rule.name}/"
        inputs = [c for c in cases() if rule.name in c.input.relative_to(FIXTURES).parts[:1]]
        negatives = [c for c in inputs if c.expected is None and c.findings is None]
        assert negatives, f"{rule.code} has no negative fixture"
        if rule.fixable:
            assert any(c.expected for c in inputs), f"{rule.code} has no fixture it rewrites"
        else:
            assert any(c.findings for c in inputs), f"{rule.code} has no fixture with findings"
