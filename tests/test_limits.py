"""The limits per file (docs/limits.md), through the command line: a file over its budget of time or
memory, or one LibCST could not parse within it, is reported (E903) and left as it was, its
findings kept, and the run goes on; the size limit for parsing is a setting (E902). Each run has a
hard timeout: these tests prove that nothing hangs, in one process (--jobs 1) as in workers."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from bench_scripts import load_bench

from ddpfix import engine
from ddpfix.rules import all_rules
from ddpfix.sources import fix_source

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SPAWN = FIXTURES / "spawn-without-main-guard" / "ddp_strategy_spawn.py"  # a DDP011 fix on LibCST's tree


def deep_sum(terms: int) -> bytes:
    """bench/bigfiles.py's ``long_sum_file``: one ``self.log`` of a ``terms``-term sum, and a
    module-level Trainer whose DDP011 fix (with --unsafe-fixes) is carried out on LibCST's tree."""
    return load_bench("bigfiles").long_sum_file(terms).encode()


def slow_spawn() -> bytes:
    """SPAWN whose model holds 300 epoch-level logs: about 0.3 s of analysis here, so a budget of
    0.01 s (or a memory budget, read on the timer's 50 ms tick) is spent on any machine, where
    SPAWN alone can be fixed inside 10 ms once the modules are imported. The DDP011 fix is the same."""
    logs = "".join(f'        self.log("m{index}", batch.sum() * {index})\n' for index in range(300))
    model = "    def validation_step(self, batch, batch_idx):\n" + logs
    return SPAWN.read_bytes().replace(b"    pass\n", model.encode())


def output(result) -> str:
    return result.stderr.decode() + result.stdout.decode()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_30000_term_expression_is_reported_quickly_and_left_alone(tmp_path, run_cli, jobs):
    source = tmp_path / "deep.py"
    source.write_bytes(deep_sum(30_000))
    began = time.monotonic()
    result = run_cli("--write", "--unsafe-fixes", "--jobs", jobs, "deep.py", cwd=tmp_path, timeout=120)
    assert time.monotonic() - began < 60
    assert result.returncode == 2, output(result)
    assert "deep.py: E903 too deeply nested" in output(result)
    assert "file left as it was" in output(result)
    assert "Traceback" not in output(result)
    assert source.read_bytes() == deep_sum(30_000)


def test_an_expression_libcst_would_take_minutes_over_is_refused_before_parsing(tmp_path, run_cli):
    """3,000 nested ``+``: CPython and the rules take it, LibCST's native parser (which no signal
    interrupts) would take minutes: predicted from CPython's tree, and refused before it starts.
    The finding whose fix needed LibCST is kept, not fixed."""
    source = tmp_path / "deep.py"
    source.write_bytes(deep_sum(3_000))
    began = time.monotonic()
    result = run_cli("--write", "--unsafe-fixes", "--jobs", "1", "deep.py", cwd=tmp_path, timeout=120)
    assert time.monotonic() - began < 30
    assert result.returncode == 2, output(result)
    text = output(result)
    assert "deep.py: E903 too deeply nested to fix: an expression at line 7 is nested 3,003 levels deep" in text
    assert "deep.py:11:1: DDP011" in text
    assert "[fixed]" not in text
    assert source.read_bytes() == deep_sum(3_000)


@pytest.mark.parametrize("mode", ["--write", "--diff"])
def test_a_tiny_time_budget_leaves_the_file(tmp_path, run_cli, mode):
    """Through the command line, in both modes that fix. Which findings a 0.01 s budget leaves
    depends on the machine's speed (a loaded one may not finish the first rule): the next test
    pins that down."""
    (tmp_path / "train.py").write_bytes(slow_spawn())
    result = run_cli(mode, "--unsafe-fixes", "--fix-time-budget", "0.01", "--jobs", "1", "train.py",
                     cwd=tmp_path, timeout=120)
    text = output(result)
    assert result.returncode == 2, text
    assert "train.py: E903 too slow to fix: " in text
    assert "0.01 s budget per file" in text
    assert "(fix-time-budget); file left as it was" in text
    assert "+++ " not in text and "[fixed]" not in text
    assert (tmp_path / "train.py").read_bytes() == slow_spawn()


def test_a_budget_spent_while_fixing_keeps_the_findings_computed_before(monkeypatch):
    """The timer interrupts the fix (here LibCST's parse, made slow: interruptible Python in place
    of the native parser) long after the rules decided: the finding is reported, not fixed, and the
    file keeps its bytes. The margins are wide (2 s for the analysis of a 20-line file; a parse
    that would take a minute), so no machine's speed decides the outcome."""
    def slow_parse(path, data):
        time.sleep(60)
        raise AssertionError("the budget should have interrupted the parse")

    monkeypatch.setattr(engine, "_parse", slow_parse)
    data = SPAWN.read_bytes()
    began = time.monotonic()
    result = fix_source("train.py", data, all_rules(), options={"unsafe_fixes": True, "fix_time_budget": 2.0})
    assert time.monotonic() - began < 30
    assert result.fixed is None
    [problem] = result.problems
    assert problem.code == "E903" and problem.message.startswith("too slow to fix: still working after ")
    assert problem.message.endswith("over the 2 s budget per file (fix-time-budget); file left as it was")
    assert [(finding.code, finding.line) for finding in result.findings] == [("DDP011", 13)]
    assert not any(finding.fixed for finding in result.findings)


def test_the_budget_costs_its_file_only_and_the_run_goes_on_in_workers(tmp_path, run_cli):
    """Twenty files (a process pool): each is over its budget on its own; a clean file is no problem."""
    for index in range(20):
        (tmp_path / f"train_{index:02d}.py").write_bytes(slow_spawn())
    (tmp_path / "clean.py").write_text("print('hello')\n")
    result = run_cli("--write", "--unsafe-fixes", "--fix-time-budget", "0.01", "--jobs", "2", ".",
                     cwd=tmp_path, timeout=300)
    text = output(result)
    assert result.returncode == 2, text
    assert text.count(": E903 too slow to fix") == 20
    assert "clean.py" not in text
    for index in range(20):
        assert (tmp_path / f"train_{index:02d}.py").read_bytes() == slow_spawn()


def test_budgets_and_size_limit_come_from_pyproject(tmp_path, run_cli):
    (tmp_path / "train.py").write_bytes(slow_spawn())
    (tmp_path / "pyproject.toml").write_text('[tool.ddpfix]\nfix-time-budget = 0.01\nfix-memory-budget = "4GiB"\n')
    result = run_cli("--diff", "--unsafe-fixes", "--jobs", "1", "train.py", cwd=tmp_path, timeout=120)
    assert result.returncode == 2
    assert "E903 too slow to fix: " in output(result) and "0.01 s budget per file" in output(result)
    # The flag wins over the file: a generous budget fixes the file.
    result = run_cli("--diff", "--unsafe-fixes", "--jobs", "1", "--fix-time-budget", "100", "train.py",
                     cwd=tmp_path, timeout=120)
    assert result.returncode == 1, output(result)
    assert "E903" not in output(result)
    assert "+if __name__ == \"__main__\":" in output(result)


def test_a_tiny_memory_budget_leaves_the_file(tmp_path, run_cli):
    (tmp_path / "train.py").write_bytes(slow_spawn())
    result = run_cli("--write", "--unsafe-fixes", "--fix-memory-budget", "1KiB", "--jobs", "1", "train.py",
                     cwd=tmp_path, timeout=120)
    assert result.returncode == 2, output(result)
    assert "train.py: E903 too large to fix:" in output(result)
    assert "budget per file (fix-memory-budget); file left as it was" in output(result)
    assert (tmp_path / "train.py").read_bytes() == slow_spawn()


def test_max_file_size_is_a_setting(tmp_path, run_cli):
    shutil.copy(SPAWN, tmp_path / "train.py")
    size = (tmp_path / "train.py").stat().st_size
    result = run_cli("--check", "--max-file-size", "100", "train.py", cwd=tmp_path, timeout=120)
    assert result.returncode == 2
    assert f"train.py: E902 not analysed: {size / 2**20:.1f} MiB is over the 100 bytes limit for parsing (max-file-size)" \
        in output(result)
    assert "DDP011" not in output(result)
    (tmp_path / "pyproject.toml").write_text('[tool.ddpfix]\nmax-file-size = "0.25k"\n')
    result = run_cli("--check", "train.py", cwd=tmp_path, timeout=120)
    assert "over the 256 bytes limit for parsing (max-file-size)" in output(result)
    result = run_cli("--check", "--max-file-size", "8MiB", "train.py", cwd=tmp_path, timeout=120)
    assert result.returncode == 1, output(result)
    assert "train.py:13:1: DDP011" in output(result)


@pytest.mark.parametrize(("args", "config", "message"), [
    (["--max-file-size", "lots"], "", "--max-file-size must be a size such as 4MiB or 8000000, not 'lots'"),
    (["--fix-memory-budget", "-1"], "", "--fix-memory-budget must be a positive size"),
    (["--fix-time-budget", "0"], "", "--fix-time-budget"),
    ([], "fix-time-budget = \"soon\"\n", "[tool.ddpfix] fix-time-budget must be a positive number of seconds"),
    ([], "max-file-size = true\n", "[tool.ddpfix] max-file-size must be a size"),
])
def test_bad_limit_values_are_usage_errors(tmp_path, run_cli, args, config, message):
    (tmp_path / "train.py").write_text("print('hello')\n")
    if config:
        (tmp_path / "pyproject.toml").write_text("[tool.ddpfix]\n" + config)
    result = run_cli("--check", *args, "train.py", cwd=tmp_path, timeout=60)
    assert result.returncode == 2
    assert message in output(result)


def test_the_default_limits_never_trigger_on_the_fixtures(tmp_path, run_cli):
    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    for mode in ("--check", "--diff"):
        result = run_cli(mode, "--unsafe-fixes", "--jobs", "2", "fixtures", cwd=tmp_path, timeout=600)
        assert "E903" not in output(result)
        assert "E902 not analysed" not in output(result)


def test_a_budget_run_out_inside_code_that_wraps_errors_is_still_the_budget(monkeypatch):
    """The timer raises wherever Python runs; an import's class body turns what it gets into a
    RuntimeError (``__set_name__``). The file is over its budget (E903), not a rule's bug (E001):
    seen as "DDP011 internal error: RuntimeError: Error calling __set_name__" on workers' first
    files, whose LibCST import the tick interrupted."""
    from ddpfix import budget
    from ddpfix.rules import all_rules
    from ddpfix.sources import fix_source

    [rule] = [r for r in all_rules() if r.code == "DDP011"]

    def check(self, tree, ctx):
        try:
            raise budget.OverBudget("too slow to fix: still working after 0.02 s, over the 0.01 s budget per file")
        except budget.OverBudget as over:
            raise RuntimeError("Error calling __set_name__ on 'Field' instance") from over

    monkeypatch.setattr(rule, "check", check)
    result = fix_source("train.py", SPAWN.read_bytes(), [rule])
    assert [p.code for p in result.problems] == ["E903"] and result.fixed is None
    assert "over the 0.01 s budget" in result.problems[0].message


@pytest.mark.parametrize("fix", [True, False])
def test_a_ctrl_c_inside_code_that_wraps_errors_stops_the_run(monkeypatch, fix):
    """A Ctrl-C that lands in an import's class body arrives as a RuntimeError (``__set_name__``):
    it must still stop the run, not become one file's internal error while the run goes on (seen
    in a Ctrl-C test: "DDP002 internal error: RuntimeError: Error calling __set_name__ ...", then
    "Fixed 6 issues in 5 files")."""
    from ddpfix.rules import all_rules
    from ddpfix.sources import fix_source

    [rule] = [r for r in all_rules() if r.code == "DDP011"]

    def check(self, tree, ctx):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as key:
            raise RuntimeError("Error calling __set_name__ on 'Field' instance 'whitespace_after'") from key

    monkeypatch.setattr(rule, "check", check)
    with pytest.raises(KeyboardInterrupt):
        fix_source("train.py", SPAWN.read_bytes(), [rule], fix=fix)
