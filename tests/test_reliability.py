"""Reliability (docs/reliability.md): bad input gets a clear message and exit 2 with nothing written;
a killed ``--write`` never leaves a torn file, and the next run cleans up after it.

The long versions are ``bench/fuzz.py``, ``bench/kill.py`` and ``bench/sweep.py``.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest
from bench_scripts import load_bench
from click.testing import CliRunner

from ddpfix import cli, runner
from ddpfix.writer import TEMP_SUFFIX

BUGGY = b'import torch\nfrom torch.utils.data import DataLoader\nDataLoader(range(3), generator=torch.Generator("cuda"))\n'
FIXED = b"import torch\nfrom torch.utils.data import DataLoader\nDataLoader(range(3), generator=torch.Generator())\n"


def snapshot(*paths: Path) -> dict:
    return {p: (p.read_bytes(), os.stat(p).st_mtime_ns) for p in paths}


def assert_untouched(before: dict) -> None:
    for path, (data, mtime) in before.items():
        assert path.read_bytes() == data and os.stat(path).st_mtime_ns == mtime, path


def lines(result) -> str:
    return result.stderr.decode() + result.stdout.decode()


# --- bad input: a clear message, exit 2, nothing written ----------------------------------------

BAD_FILES = {
    "binary": (b"\x7fELF\x02\x01\x01\x00\x00\x00generator=torch.Generator('cuda')", "binary.py: E902 cannot read: binary content"),
    "invalid utf-8": (BUGGY + b'name = "caf\xe9"\n', "badutf8.py:4:12: E902 cannot decode: byte(s) e9 are not valid utf-8"),
    "invalid utf-8, no trigger words": (b'name = "caf\xe9"\n', "plain.py:1:12: E902 cannot decode"),
    "unknown codec": (b"# -*- coding: klingon -*-\n" + BUGGY, "cookie.py: E902 cannot decode: unknown encoding: klingon"),
    "cookie that does not match": (b"# coding: ascii\n" + BUGGY + b"# donn\xc3\xa9es\n", "ascii.py:5:7: E902 cannot decode: byte(s) c3 are not valid ascii"),
    "BOM with another cookie": (b"\xef\xbb\xbf# coding: latin-1\n" + BUGGY, "bom.py: E902 cannot decode: the file starts with a UTF-8 BOM but its coding cookie names another encoding"),
}


@pytest.mark.parametrize("case", BAD_FILES)
def test_bad_files_are_reported_with_exit_2_and_not_written(case, tmp_path, run_cli_unsafe):
    data, message = BAD_FILES[case]
    name = message.split(":")[0]
    path = tmp_path / name
    path.write_bytes(data)
    good = tmp_path / "good.py"
    good.write_bytes(BUGGY)
    before = snapshot(path)
    result = run_cli_unsafe("--write", name, "good.py", cwd=tmp_path)
    assert result.returncode == 2, lines(result)
    assert message in lines(result)
    assert "Traceback" not in lines(result)
    assert_untouched(before)
    assert good.read_bytes() == FIXED  # the others are still fixed


def test_a_50_mb_generated_file_finishes(tmp_path, run_cli):
    """Without trigger words it costs a read and a few substring searches; with them it is over the
    parse limit (LibCST would need tens of GB) and is reported, not parsed."""
    chunk = b"".join(b"value_%d = [1, 2, 3]  # generated\n" % i for i in range(20_000))
    plain = tmp_path / "plain.py"
    plain.write_bytes(chunk * (50 * 2**20 // len(chunk) + 1))
    triggered = tmp_path / "triggered.py"
    triggered.write_bytes(BUGGY + plain.read_bytes())
    before = snapshot(plain, triggered)

    began = time.monotonic()
    result = run_cli("--write", "plain.py", cwd=tmp_path, timeout=60)
    assert result.returncode == 0, lines(result)
    result = run_cli("--write", "triggered.py", cwd=tmp_path, timeout=60)
    assert result.returncode == 2
    assert "triggered.py: E902 not analysed: 50.0 MiB is over the 4 MiB limit for parsing" in lines(result)
    assert time.monotonic() - began < 60
    assert_untouched(before)


def test_a_directory_symlink_loop_is_not_followed(tmp_path, run_cli_unsafe):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "up").symlink_to("..", target_is_directory=True)
    (tmp_path / "pkg" / "self").symlink_to(".", target_is_directory=True)
    (tmp_path / "pkg" / "train.py").write_bytes(BUGGY)
    result = run_cli_unsafe("--write", "pkg", cwd=tmp_path, timeout=60)
    assert result.returncode == 0, lines(result)
    assert "Fixed 1 issue in 1 file." in lines(result)  # checked once, not once per way round the loop
    assert (tmp_path / "pkg" / "train.py").read_bytes() == FIXED


def test_symlink_loops_given_or_found_are_errors(tmp_path, run_cli):
    (tmp_path / "a.py").symlink_to("b.py")
    (tmp_path / "b.py").symlink_to("a.py")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "x.py").symlink_to("x.py")
    result = run_cli("--write", "a.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "a.py: E902 cannot read: a symbolic link loop (too many levels of symbolic links)" in lines(result)
    result = run_cli("--write", "pkg", cwd=tmp_path)
    assert result.returncode == 2
    assert "pkg/x.py: E902 cannot read: Too many levels of symbolic links" in lines(result)


def test_a_file_gone_between_discovery_and_reading(tmp_path, run_cli_unsafe):
    """A dangling symlink is what a file removed after the walk looks like to the reader: the walk
    lists it, the read finds nothing. Deterministic, through the real console script."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "gone.py").symlink_to("removed.py")
    (tmp_path / "pkg" / "train.py").write_bytes(BUGGY)
    result = run_cli_unsafe("--write", "pkg", cwd=tmp_path)
    assert result.returncode == 2
    assert "pkg/gone.py: E902 cannot read: No such file or directory" in lines(result)
    assert (tmp_path / "pkg" / "train.py").read_bytes() == FIXED


def test_a_file_deleted_after_discovery(tmp_path, monkeypatch):
    """The same with a real file, deleted right after the real discovery (in-process)."""
    (tmp_path / "gone.py").write_bytes(BUGGY)
    (tmp_path / "train.py").write_bytes(BUGGY)
    real_discover = cli.find_files

    def discover_then_delete(*args, **kwargs):
        found = real_discover(*args, **kwargs)
        (tmp_path / "gone.py").unlink()
        return found

    monkeypatch.setattr(cli, "find_files", discover_then_delete)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli.command, ["--write", "--unsafe-fixes", "--no-color", "--jobs", "1", "."], standalone_mode=False)
    assert result.return_value == cli.EXIT_ERROR, result.output
    assert "gone.py: E902 cannot read: No such file or directory" in result.stderr
    assert not (tmp_path / "gone.py").exists()
    assert (tmp_path / "train.py").read_bytes() == FIXED


def test_a_fifo_named_py_does_not_block_the_run(tmp_path, run_cli):
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "train.py").write_bytes(BUGGY)
    result = run_cli("--write", ".", cwd=tmp_path, timeout=30)
    assert result.returncode == 2
    assert "pipe.py: E902 cannot read: not a regular file" in lines(result)
    assert isinstance(runner.read_source(str(tmp_path / "pipe.py")), runner.Problem)


def test_a_read_only_file_with_fixes_is_reported_and_the_others_written(tmp_path, run_cli_unsafe):
    locked, other = tmp_path / "locked.py", tmp_path / "other.py"
    locked.write_bytes(BUGGY)
    other.write_bytes(BUGGY)
    locked.chmod(0o444)
    before = snapshot(locked)
    result = run_cli_unsafe("--write", "locked.py", "other.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "locked.py: E902 cannot write: the file is read-only" in lines(result)
    assert "1 fix not applied" in lines(result)
    assert_untouched(before)
    assert os.stat(locked).st_mode & 0o777 == 0o444
    assert other.read_bytes() == FIXED


# --- kill test and the cleanup after it ----------------------------------------------------------


def test_stale_temp_files_of_a_killed_run_are_removed_and_nothing_else(tmp_path, run_cli_unsafe):
    (tmp_path / "train.py").write_bytes(BUGGY)
    old = time.time() - 3600
    stale = tmp_path / f".train.py.a1b2c3d4{TEMP_SUFFIX}"
    keep = {
        "fresh": tmp_path / f".train.py.e5f6g7h8{TEMP_SUFFIX}",  # a concurrent run's (newer than this run)
        "orphan": tmp_path / f".other.py.a1b2c3d4{TEMP_SUFFIX}",  # no other.py beside it
        "other shape": tmp_path / ".train.py.a1b2.tmp",
        "user's": tmp_path / f"notes{TEMP_SUFFIX}",
    }
    stale.write_bytes(b"half a fi")
    os.utime(stale, (old, old))
    for path in keep.values():
        path.write_bytes(b"keep")
        os.utime(path, (old, old))
    os.utime(keep["fresh"], (time.time() + 60, time.time() + 60))
    result = run_cli_unsafe("--write", "train.py", cwd=tmp_path)
    assert result.returncode == 0, lines(result)
    assert not stale.exists()
    assert all(path.exists() for path in keep.values())
    assert (tmp_path / "train.py").read_bytes() == FIXED


def test_sigkill_during_write_never_tears_a_file(tmp_path):
    """bench/kill.py with 200 files and 3 trials: after each kill every file is its original or its
    fixed bytes; a second run completes the fixes and leaves no temp file."""
    kill = load_bench("kill")
    cases = kill.fixable_cases()
    fixed, duration, writes, exit_code, off_expected = kill.reference(200, cases, 2, tmp_path)
    assert off_expected == 0
    rng = random.Random(1)
    for number in (0, 1, 3):  # odd numbers kill once writing has begun
        outcome = kill.trial(number, rng, 200, cases, 2, fixed, duration, writes, exit_code, tmp_path)
        assert outcome["ok"], outcome


# --- the fuzz properties, a few examples in CI (bench/fuzz.py runs 100,000) ----------------------

try:
    import hypothesmith
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - the test extra has them
    hypothesmith = None

if hypothesmith is not None:
    fuzz = load_bench("fuzz")
    FIXTURE_INPUTS = [p.read_bytes() for p in fuzz.FIXTURE_INPUTS]

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(program=hypothesmith.from_grammar(), number=st.integers(0, 2**32), kind=st.sampled_from(fuzz.KINDS))
    def test_fuzz_properties(program, number, kind):
        """Generated Lightning programs, hypothesmith programs spliced with pitfall pieces, mutated
        fixtures: no exception, output compiles, fix(fix(x)) == fix(x), no change without triggers,
        and the prefilters hide no finding (the same findings with them switched off)."""
        data = fuzz.make_program(random.Random(number), kind, [program], FIXTURE_INPUTS)
        failed, detail = fuzz.check(data, timeout=60)
        assert failed is None, f"{failed}: {detail}\n--- input ---\n{data.decode('utf-8', 'replace')}"
