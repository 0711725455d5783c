"""The pre-commit hooks of .pre-commit-hooks.yaml, run by pre-commit itself from this checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

BUGGY = b'import torch\nfrom torch.utils.data import DataLoader\nDataLoader(range(3), generator=torch.Generator("cuda"))\n'


def pre_commit() -> str:
    found = Path(sys.executable).parent / "pre-commit"
    if not found.exists():
        pytest.fail("pre-commit is not installed: pip install -e '.[test]'")
    return str(found)


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_hooks_check_then_fix(tmp_path):
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        pytest.skip("the checkout is not a git repository with a commit")
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    (repo / "train.py").write_bytes(BUGGY)
    git("add", "train.py", cwd=repo)

    def run(hook):
        return subprocess.run(
            [pre_commit(), "try-repo", str(ROOT), hook, "--files", "train.py"],
            cwd=repo, capture_output=True, text=True, timeout=600,
        )

    check = run("ddpfix-check")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "train.py:3:32: DDP002 [*]" in check.stdout
    assert (repo / "train.py").read_bytes() == BUGGY

    fix = run("ddpfix")
    assert fix.returncode == 1 and "files were modified by this hook" in fix.stdout
    assert b"torch.Generator()" in (repo / "train.py").read_bytes()
    again = run("ddpfix")
    assert again.returncode == 0, again.stdout
