"""``text_diff``: the linear diff behind the language server's edits and the CLI's JSON/SARIF fixes.
Whatever the alignment, the hunks must rebuild the new text exactly, in order, without overlap."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ddpfix.text_diff import changed_span, common_prefix, common_suffix, line_hunks

LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "def f():\n", "\n", "x"]), max_size=30)


def rebuilt(old: list[str], new: list[str], hunks) -> list[str]:
    out, at = [], 0
    for i1, i2, j1, j2 in hunks:
        out += old[at:i1] + new[j1:j2]
        at = i2
    return out + old[at:]


@settings(max_examples=400, deadline=None)
@given(LINES, LINES)
def test_hunks_rebuild_the_new_lines(old, new):
    hunks = line_hunks(old, new)
    assert rebuilt(old, new, hunks) == new
    assert all(i1 <= i2 and j1 <= j2 and (i1, j1) != (i2, j2) for i1, i2, j1, j2 in hunks)
    assert all(a[1] <= b[0] and a[3] <= b[2] for a, b in zip(hunks, hunks[1:]))
    assert (hunks == []) == (old == new)


@settings(max_examples=400, deadline=None)
@given(st.text("ab\n", max_size=40), st.text("ab\n", max_size=40))
def test_changed_span_is_the_largest_shared_prefix_and_suffix(before, after):
    span = changed_span(before, after)
    if span is None:
        assert before == after
        return
    start, end_before, end_after = span
    assert before[:start] + after[start:end_after] + before[end_before:] == after
    assert start == common_prefix(before, after)
    assert len(before) - end_before == common_suffix(before, after, min(len(before), len(after)) - start)
    naive = 0
    while naive < min(len(before), len(after)) and before[naive] == after[naive]:
        naive += 1
    assert start == naive


def test_a_large_file_diffs_in_linear_time():
    """4,500 lines with 600 changed ones spread over 150 repeated blocks: hunks, one per changed run."""
    block = [f"    line {k}\n" for k in range(30)]
    old = [line for n in range(150) for line in [f"class M{n}:\n", *block]]
    new = [line.replace("line 9", "line nine") for line in old]
    hunks = line_hunks(old, new)
    assert rebuilt(old, new, hunks) == new and len(hunks) == 150
