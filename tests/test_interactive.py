"""--interactive through a real pseudo-terminal: the file ends up with exactly the accepted fixes."""

from __future__ import annotations

import pexpect
from conftest import ddpfix_executable

SOURCE = b'''import torch
from torch.utils.data import DataLoader, random_split

a = DataLoader(range(4), shuffle=True, generator=torch.Generator(device="cuda"))
b = random_split(range(4), [2, 2], generator=torch.Generator("cuda").manual_seed(1))
c = DataLoader(range(4), shuffle=True, generator=torch.Generator(device="cuda:1"))
'''
PROMPT = r"\[y\]es / \[n\]o / \[a\]ll in this file / \[q\]uit"


def spawn(tmp_path, *args):
    return pexpect.spawn(
        ddpfix_executable(), list(args), cwd=str(tmp_path), env={"NO_COLOR": "1", "TERM": "dumb", "PATH": "/usr/bin:/bin"},
        timeout=60, dimensions=(50, 200),
    )


def test_accept_one_reject_another_then_all(tmp_path):
    (tmp_path / "train.py").write_bytes(SOURCE)
    child = spawn(tmp_path, "--unsafe-fixes", "--interactive", "train.py")
    child.expect(r"train\.py:4:\d+: DDP002 \[[*~]\]")
    child.expect(PROMPT)
    child.sendline("n")
    child.expect(r"train\.py:5:\d+: DDP002 \[[*~]\]")
    child.expect(r'\+b = random_split\(range\(4\), \[2, 2\], generator=torch\.Generator\(\)\.manual_seed\(1\)\)')
    child.expect(PROMPT)
    child.sendline("y")
    child.expect(r"train\.py:6:\d+: DDP002 \[[*~]\]")
    child.expect(PROMPT)
    child.sendline("maybe")  # not an answer: asked again
    child.expect("Please answer y, n, a or q.")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1  # two fixes were declined
    expected = SOURCE.replace(b'torch.Generator("cuda")', b"torch.Generator()")
    assert (tmp_path / "train.py").read_bytes() == expected


def test_all_in_this_file_and_quit(tmp_path):
    (tmp_path / "a.py").write_bytes(SOURCE)
    (tmp_path / "b.py").write_bytes(SOURCE)
    child = spawn(tmp_path, "--unsafe-fixes", "-i", ".")
    child.expect(r"a\.py:4:\d+: DDP002")
    child.expect(PROMPT)
    child.sendline("a")
    child.expect(r"b\.py:4:\d+: DDP002")
    child.expect(PROMPT)
    child.sendline("q")
    child.expect(pexpect.EOF)
    child.close()
    fixed = SOURCE.replace(b'(device="cuda")', b"()").replace(b'("cuda")', b"()").replace(b'(device="cuda:1")', b"()")
    assert (tmp_path / "a.py").read_bytes() == fixed
    assert (tmp_path / "b.py").read_bytes() == SOURCE


def test_preview_asks_before_writing(tmp_path):
    (tmp_path / "train.py").write_bytes(SOURCE)
    child = spawn(tmp_path, "--unsafe-fixes", "train.py")
    child.expect(r"Apply 3 fixes to 1 file\? \[y/N\]")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert (tmp_path / "train.py").read_bytes() == SOURCE
    child = spawn(tmp_path, "--unsafe-fixes", "train.py")
    child.expect(r"Apply 3 fixes to 1 file\? \[y/N\]")
    child.sendline("y")
    child.expect("Fixed 3 issues in 1 file.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert b"cuda" not in (tmp_path / "train.py").read_bytes()


def test_progress_bar_only_for_long_runs_on_a_terminal(tmp_path, run_cli):
    for i in range(210):
        (tmp_path / f"m{i:03d}.py").write_text("x = 1\n")
    child = spawn(tmp_path, "--unsafe-fixes", "--check", "--jobs", "1", ".")
    child.expect("Scanning|Checking")  # the scan stage reads every file; no file here needs more
    child.expect("No DDP issues found in 210 files.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    piped = run_cli("--check", ".", cwd=tmp_path)  # not a terminal: no bar
    assert b"Checking" not in piped.stderr and piped.returncode == 0
