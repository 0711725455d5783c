"""The prefilter never hides a finding: a rule's trigger words and its ``may_apply`` only ever rule
out files where its ``apply`` would report nothing.

Each rule runs over every fixture twice, report-only: as shipped, and with both cheap checks
switched off (always True). The findings must be the same. A ``may_apply`` made tighter than its
``apply`` (the point of tightening it is speed on big trees) fails here on the fixture that shows it.
"""

from __future__ import annotations

import pytest
from fixture_cases import cases

from ddpfix.sources import fix_source
from ddpfix.facts import ProjectFacts, file_facts
from ddpfix.rules import all_rules

RULES = all_rules()


def findings(path: str, data: bytes, rule, facts: ProjectFacts) -> list[tuple]:
    result = fix_source(path, data, [rule], facts, fix=False)
    return sorted((f.cell, f.line, f.column, f.code, f.message, f.fixable) for f in result.findings)


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.id)
def test_the_prefilter_hides_no_finding(case):
    data = case.input.read_bytes()
    facts = ProjectFacts.merge((file_facts(str(p), p.read_bytes()) for p in case.group), whole=case.whole)
    for rule in RULES:
        shipped = findings(str(case.input), data, rule, facts)
        assert shipped == findings(str(case.input), data, rule.without_prefilters(), facts), rule.code


def test_the_check_can_fail():
    """A ``may_apply`` that rules everything out is caught on any fixture with a finding."""
    rule = next(r for r in RULES if r.code == "DDP005")
    broken = type("Broken", (rule,), {"may_apply": classmethod(lambda cls, tree: False)})
    case = next(c for c in cases() if c.findings and any("DDP005" in line for line in c.findings))
    data = case.input.read_bytes()
    assert findings(str(case.input), data, broken, ProjectFacts()) != findings(str(case.input), data, rule.without_prefilters(), ProjectFacts())
