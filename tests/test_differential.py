"""Proof by running: every differential case (tests/differential/cases/<rule>/<case>.py) rewritten by
the real CLI, then — for ``safe`` cases — original and rewrite trained on CPU in one process and
under ``devices=2, strategy="ddp"`` (gloo), comparing weights, buffers, every rank's metrics and
splits, and loading each one's state into the other with ``strict=True``. ``unchanged`` and
``unsafe`` cases only run ddpfix (no torch needed). See tests/differential/harness.py.

``python bench/differential.py`` runs the same cases from the command line, with a table of times.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "differential"))
import harness  # noqa: E402

pytestmark = pytest.mark.e2e

CASES = harness.discover()


def test_the_cases_are_there():
    """The suite is never empty by accident (a bad header raises in discover; a missing folder would
    leave nothing to parametrize over)."""
    by_rule: dict[str, dict[str, int]] = {}
    for case in CASES:
        by_rule.setdefault(case.rule, {}).setdefault(case.expectation, 0)
        by_rule[case.rule][case.expectation] += 1
    for rule in ("unseeded-random-split", "epoch-log-sync", "rank-gated-log"):
        counts = by_rule.get(rule, {})
        assert sum(counts.values()) >= 8, (rule, counts)
        assert counts.get("safe", 0) >= 4, (rule, counts)
        assert counts.get("unchanged", 0) + counts.get("unsafe", 0) >= 4, (rule, counts)


def test_every_rule_folder_is_a_rule():
    fixtures = harness.ROOT / "fixtures"
    for case in CASES:
        assert (fixtures / case.rule).is_dir(), f"{case.id}: no rule named {case.rule!r} (see fixtures/)"
        assert harness.rule_code(case.rule) != "?", case.id


def test_references_belong_to_a_case():
    for reference in harness.CASES.glob("*/*.reference.py"):
        case = reference.with_name(reference.name.replace(".reference.py", ".py"))
        assert case.exists(), f"{reference} has no case beside it"
        expectation, _ = harness.parse_header(case.read_text(encoding="utf-8"))
        assert expectation == "safe", f"{reference}: only safe cases are compared with a reference"


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_case(case: harness.Case, tmp_path):
    if case.trains:
        for module in ("torch", "lightning"):
            if importlib.util.find_spec(module) is None:
                pytest.skip(f"{module} is not installed (pip install torch==2.13.0, then -e '.[e2e]')")
    outcome = harness.check_case(case, tmp_path)
    if outcome.result == harness.NEEDS_UNSAFE:
        pytest.fail(f"{case.id}: {harness.NEEDS_UNSAFE} (this ddpfix has no such flag)\n{outcome.report()}", pytrace=False)
    assert outcome.passed, outcome.report()
