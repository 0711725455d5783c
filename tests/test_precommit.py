"""The pre-commit hooks of .pre-commit-hooks.yaml, run by pre-commit itself from this checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

# A safe fix (DDP006: a literal device in a file whose Trainer is DDP, decided from this file alone)
# and an unsafe one (DDP002: pre-commit names the staged files only, so another file may switch the
# default device to CUDA).
BUGGY = b'''import lightning as L
import torch
from torch.utils.data import DataLoader


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x = batch.to("cuda")
        return self.layer(x).sum()

    def train_dataloader(self):
        return DataLoader(range(3), shuffle=True, generator=torch.Generator("cuda"))


trainer = L.Trainer(devices=2, strategy="ddp")
'''


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
    assert "train.py:12:13: DDP006 [*]" in check.stdout and "train.py:16:61: DDP002 [~]" in check.stdout
    assert (repo / "train.py").read_bytes() == BUGGY

    fix = run("ddpfix")  # the safe fix only: the hook never applies an unsafe one
    assert fix.returncode == 1 and "files were modified by this hook" in fix.stdout
    fixed = (repo / "train.py").read_bytes()
    assert b"x = batch.to(self.device)" in fixed and b'torch.Generator("cuda")' in fixed
    again = run("ddpfix")  # nothing more to write; the unsafe finding is still reported
    assert again.returncode == 1 and "files were modified" not in again.stdout, again.stdout
    assert "DDP002 [~]" in again.stdout and (repo / "train.py").read_bytes() == fixed
