"""Properties over generated and mutated programs: fix_source never raises and never returns code that
does not compile, what it returns is a fixed point (running again changes nothing), and a report-only
run gives the same findings whether the fixable rules read CPython's tree or only LibCST's."""

from __future__ import annotations

import warnings

import hypothesmith
from fixture_cases import cases
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ddpfix.sources import fix_source
from ddpfix.rules import all_rules

ALL = {"unsafe_fixes": True}  # the fix machinery is tested with every fix, safe or not

RULES = all_rules()
FIXTURE_SOURCES = [c.input.read_bytes() for c in cases() if c.input.suffix == ".py"]
SNIPPETS = [
    b'g = torch.Generator(device="cuda")\n',
    b"loader = DataLoader(ds, generator=g)\n",
    b'x = random_split(ds, [1, 1], generator=torch.Generator("cuda").manual_seed(0))\n',
    b"g.manual_seed(3)\n",
    b"    ",
    b"\t",
    b"(",
    b")\n",
    b"# comment\n",
    b"\r\n",
    b"def f(g):\n    return DataLoader(ds, generator=g)\n",
    b"if True:\n",
    b"\xc3\xa9",
]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def compiles(data: bytes) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(data, "<test>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def check(data: bytes) -> None:
    report = fix_source("t.py", data, RULES, fix=False, options=ALL)  # must not raise
    assert not [p for p in report.problems if p.code.startswith("DDP") or p.code == "E001"], report.problems
    result = fix_source("t.py", data, RULES, options=ALL)  # must not raise
    if result.fixed is not None:
        assert compiles(result.fixed), result.fixed.decode(errors="replace")
        again = fix_source("t.py", result.fixed, RULES, options=ALL)
        assert again.fixed is None, "not idempotent"
        assert not again.problems


@SETTINGS
@given(program=hypothesmith.from_grammar(), fixture=st.sampled_from(FIXTURE_SOURCES))
def test_generated_programs_next_to_fixtures(program, fixture):
    data = fixture + b"\n" + program.encode("utf-8")
    assume(compiles(data))
    check(data)


@st.composite
def mutated_fixture(draw):
    lines = draw(st.sampled_from(FIXTURE_SOURCES)).splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.integers(0, len(lines)))
        action = draw(st.sampled_from(["insert", "delete", "duplicate", "indent"]))
        if action == "insert":
            lines.insert(where, draw(st.sampled_from(SNIPPETS)))
        elif lines and action == "delete":
            del lines[min(where, len(lines) - 1)]
        elif lines and action == "duplicate":
            lines.insert(where, lines[min(where, len(lines) - 1)])
        elif lines:
            index = min(where, len(lines) - 1)
            lines[index] = b"    " + lines[index]
    return b"".join(lines)


@SETTINGS
@given(data=mutated_fixture())
def test_mutated_fixtures(data):
    check(data)
