"""Every fixture pair: exact output, negatives untouched, expected files stable (idempotency)."""

from __future__ import annotations

import pytest
from fixture_cases import FIXTURES, Case, cases, expected_files, is_input

from ddpfix.sources import fix_source
from ddpfix.facts import ProjectFacts, file_facts
from ddpfix.rules import all_rules

RULES = all_rules()


def describe(finding) -> str:
    cell = f"cell {finding.cell}:" if finding.cell is not None else ""
    kind = finding.applicability if finding.fixable else "manual"
    return f"{cell}{finding.line}:{finding.column} {finding.code} {kind}"


def run(case, data: bytes, path, unsafe: bool):
    facts = ProjectFacts.merge((file_facts(str(p), p.read_bytes()) for p in case.group), whole=case.whole)
    return fix_source(str(path), data, RULES, facts, options={"unsafe_fixes": unsafe})


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.id)
def test_fixture(case):
    data = case.input.read_bytes()
    result = run(case, data, case.input, unsafe=False)
    assert not [p for p in result.problems if p.level == "error"], result.problems
    if case.expected is None:
        assert result.fixed is None, "without an expected file the safe fixes must leave the case byte-identical"
    else:
        assert result.output == case.expected.read_bytes()
    found = sorted(describe(f) for f in result.findings)
    if case.findings is not None:
        assert found == case.findings
    elif case.expected is None and case.unsafe is None:
        assert found == [], "a negative case must have no findings"
    else:
        if case.expected is not None:
            assert any(f.safe and f.fixed for f in result.findings)
        if case.unsafe is not None:
            assert any(f.unsafe and not f.fixed for f in result.findings)
    assert not any(f.unsafe and f.fixed for f in result.findings), "an unsafe fix applied by default"


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.id)
def test_fixture_with_unsafe_fixes(case):
    """``--unsafe-fixes`` writes ``<case>.unsafe.py`` where there is one, else what the safe fixes
    write. (Its findings may differ from the default run's: a fix left out can leave another
    rule something to report, as a plain tensor attribute left for DDP006.)"""
    data = case.input.read_bytes()
    safe = run(case, data, case.input, unsafe=False)
    result = run(case, data, case.input, unsafe=True)
    assert not [p for p in result.problems if p.level == "error"], result.problems
    wanted = case.unsafe.read_bytes() if case.unsafe is not None else safe.output
    assert result.output == wanted
    if case.unsafe is not None:
        assert any(f.unsafe and f.fixed for f in result.findings)


@pytest.mark.parametrize("expected", expected_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_expected_output_is_stable(expected):
    """A second run changes nothing: on a safe output no safe fix is left, on an unsafe output (run
    with ``--unsafe-fixes``) no fix at all."""
    unsafe = expected.stem.endswith(".unsafe")
    data = expected.read_bytes()
    inputs = [p for p in expected.parent.iterdir() if is_input(p)]
    group = inputs if expected.parent.parent != FIXTURES else []
    case = Case(expected.with_name(expected.name.replace(".unsafe", "").replace(".expected", "")))
    facts = ProjectFacts.merge((file_facts(str(p), p.read_bytes()) for p in [*group, expected]), whole=case.whole)
    result = fix_source(str(expected), data, RULES, facts, options={"unsafe_fixes": unsafe})
    assert result.fixed is None, "running again changed the fixed output (not idempotent)"
    assert not any(f.fixable and (unsafe or f.safe) for f in result.findings)


def test_every_rule_has_fixtures():
    folders = {p.name for p in FIXTURES.iterdir() if p.is_dir()}
    for rule in RULES:
        assert rule.name in folders, f"{rule.code} {rule.name} has no fixtures/{rule.name}/"
        inputs = [c for c in cases() if rule.name in c.input.relative_to(FIXTURES).parts[:1]]
        negatives = [c for c in inputs if c.expected is None and c.findings is None]
        assert negatives, f"{rule.code} has no negative fixture"
        if rule.fixable:
            assert any(c.fully_fixed for c in inputs), f"{rule.code} has no fixture it rewrites"
        else:
            assert any(c.findings for c in inputs), f"{rule.code} has no fixture with findings"
