"""The hostile-input campaign's CI slice (bench/hostile.py at ``--scale ci``): every case ends
before its hard timeout, prints no traceback, writes nothing outside the root or to a file it must
leave alone, leaves no process behind and stays under the memory budget."""

from __future__ import annotations

import pytest
from bench_scripts import load_bench

hostile = load_bench("hostile")


@pytest.mark.parametrize("case", [c.name for c in hostile.CASES])
def test_hostile_case(case, tmp_path):
    (result,) = hostile.campaign("ci", [case], timeout=120, budget_mb=2048, work=tmp_path)
    try:
        assert not result["failures"], f"{result['failures']}\n{result['output']}"
    finally:
        hostile._restore_permissions(tmp_path)  # pytest must be able to remove a chmod 0 folder


def test_a_hang_is_caught_and_killed(tmp_path):
    # The campaign's own guard: a command that never ends is killed at the timeout, with its group.
    script = tmp_path / "sleeper.py"
    script.write_text("import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\ntime.sleep(60)\n")
    import sys

    result = hostile.run_command([sys.executable, str(script)], tmp_path, timeout=1)
    assert result["timed_out"] and result["wall_s"] < 10
