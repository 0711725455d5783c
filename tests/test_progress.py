"""Progress on a terminal (docs/interrupts.md): the stage a long run is in (Scanning, then Fixing or
Checking), an estimate weighted by bytes, and the name of a file that keeps a run waiting; nothing
when stderr is no terminal, with -q, or with a machine-readable format."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest
from bench_scripts import load_bench
from conftest import ddpfix_executable

from ddpfix.progress import Progress

pexpect = pytest.importorskip("pexpect")
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a pseudo-terminal of Linux")
kill = load_bench("kill")


def spawn(cwd, *args):
    """The console script on a pseudo-terminal (stdout and stderr both), with this checkout's code."""
    return pexpect.spawn(ddpfix_executable(), list(args), cwd=str(cwd), timeout=300, dimensions=(50, 200),
                         env={**os.environ, "NO_COLOR": "1", "TERM": "dumb"})


def finish(child) -> str:
    child.expect(pexpect.EOF)
    child.close()
    return child.before.decode(errors="replace") if child.before else ""


def test_a_long_run_shows_its_stage(tmp_path, run_cli):
    kill.make_tree(tmp_path / "tree", 210, kill.fixable_cases())
    child = spawn(tmp_path, "--unsafe-fixes", "--write", "--jobs", "2", "tree")
    child.expect(r"Scanning \[[#-]+\] +\d+%  \d+/210 files")
    child.expect(r"Fixing \[[#-]+\] +\d+%  \d+/\d+ files")
    child.expect(r"Fixed \d+ issues? in \d+ files?")
    finish(child)
    assert child.exitstatus in (0, 1)
    child = spawn(tmp_path, "--check", "tree")
    child.expect(r"Checking \[[#-]+\]")
    finish(child)
    for args in (["--check", "tree"], ["--check", "--output-format", "json", "tree"]):
        piped = run_cli(*args, cwd=tmp_path)  # stderr is no terminal: no bar
        assert not re.search(rb"Scanning|Checking|Fixing", piped.stderr), piped.stderr[-300:]
    quiet = spawn(tmp_path, "-q", "--check", "tree")
    assert not re.search(r"Scanning|Checking", finish(quiet))


def padded(source: bytes, helpers: int) -> bytes:
    return source + b"\n" + b"".join(
        b"def helper_%d(values, scale=2):\n    total = 0\n    for value in values:\n"
        b"        total += value * scale\n    return {'total': total, 'count': len(values)}\n\n" % i
        for i in range(helpers)
    )


def slow_file(path, source: bytes) -> float:
    """Pads ``source`` until fixing it takes over two seconds here; returns how long it takes."""
    helpers = 600
    while True:
        path.write_bytes(padded(source, helpers))
        began = time.monotonic()
        subprocess.run([ddpfix_executable(), "--diff", "--unsafe-fixes", path.name], cwd=path.parent,
                       capture_output=True, timeout=600)
        took = time.monotonic() - began
        if took > 2.5 or path.stat().st_size > 3 * 2**20:
            return took
        helpers *= 2


def test_a_slow_file_is_named_while_the_run_waits_on_it(tmp_path, run_cli):
    big = tmp_path / "big.py"
    slow_file(big, kill.fixable_cases()[0][0])
    child = spawn(tmp_path, "--diff", "--unsafe-fixes", "big.py")
    child.expect(r"Fixing big\.py \(\d+(\.\d)? [KM]iB\)\.\.\.")
    finish(child)
    assert child.exitstatus == 1  # a fix not applied
    assert "Fixing big.py" not in finish(spawn(tmp_path, "-q", "--diff", "--unsafe-fixes", "big.py"))
    assert "big.py (" not in finish(spawn(tmp_path, "--check", "--output-format", "json", "big.py"))
    assert b"Fixing" not in run_cli("--diff", "--unsafe-fixes", "big.py", cwd=tmp_path).stderr


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_estimate_counts_bytes_not_files():
    """One 1 MB file handed out first, then 99 of 10 kB, at 0.5 MB/s: when the big one is done
    after 2 s, about 2 s are left. Counting files said 198 s (99 files left at 2 s a file)."""
    clock = Clock()
    progress = Progress(None, bar=True, jobs=1, clock=clock)
    progress.start(["big.py", *(f"s{n}.py" for n in range(99))], [1_000_000] + [10_000] * 99)
    clock.now = 0.5
    assert progress.estimate() is None  # too early to say
    clock.now = 1.5
    assert progress.waiting_on() == "big.py (977 KiB)"
    clock.now = 2.0
    progress.finished(0)
    left = progress.estimate()
    assert 0.5 < left / 1.98 < 2, left
    assert progress.waiting_on() is None
    for position in range(1, 100):
        clock.now += 0.02
        progress.finished(position)
    assert progress.estimate() == 0
    assert "100%  100/100 files" in progress.line()
