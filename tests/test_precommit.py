"""The pre-commit hooks of .pre-commit-hooks.yaml, run by pre-commit itself from this checkout."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

# A safe fix (DDP006: a literal device in a file whose Trainer is DDP; DDP002: nothing in the
# project, all of it read, makes CUDA the default device) and an unsafe one (DDP003: the logged
# name is not a literal, so no one can tell whether a callback monitors it).
BUGGY = b'''import lightning as L
import torch
from torch.utils.data import DataLoader


class Model(L.LightningModule):
    def __init__(self, name):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)
        self.name = name

    def training_step(self, batch, batch_idx):
        x = batch.to("cuda:0")
        return self.layer(x).sum()

    def validation_step(self, batch, batch_idx):
        loss = self.layer(batch).sum()
        if self.trainer.is_global_zero:
            self.log(self.name, loss)

    def train_dataloader(self):
        return DataLoader(range(3), shuffle=True, generator=torch.Generator("cuda"))


trainer = L.Trainer(devices=2, strategy="ddp")
'''

# The reported case: model.py logs a metric under a rank guard; train.py's EarlyStopping monitors it.
# rank_zero_only=True would leave the other ranks without the metric EarlyStopping reads.
MODEL = b'''import lightning as L
import torch


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def validation_step(self, batch, batch_idx):
        loss = self.layer(batch).sum()
        if self.trainer.is_global_zero:
            self.log("val_loss", loss)
        return loss
'''
TRAIN = b'''import lightning as L
from lightning.pytorch.callbacks import EarlyStopping

from model import Model

trainer = L.Trainer(devices=2, strategy="ddp", callbacks=[EarlyStopping(monitor="val_loss")])
trainer.fit(Model())
'''


def pre_commit() -> str:
    found = Path(sys.executable).parent / "pre-commit"
    if not found.exists():
        pytest.fail("pre-commit is not installed: pip install -e '.[test]'")
    return str(found)


GIT_USER = ["-c", "user.name=ddpfix tests", "-c", "user.email=tests@ddpfix.invalid", "-c", "commit.gpgsign=false"]


def git(*args, cwd):
    return subprocess.run(["git", *GIT_USER, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def needs_a_git_checkout():
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        pytest.skip("the checkout is not a git repository with a commit")


def new_repo(path: Path) -> Path:
    path.mkdir()
    git("init", "-q", cwd=path)
    return path


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """This working tree committed in a repository of its own, and that commit: what a config's
    ``repo:`` and ``rev:`` name (the README's "from a checkout" form), with the hooks as they are
    now, uncommitted edits included. Its hook environment is built once for the module."""
    needs_a_git_checkout()
    where = tmp_path_factory.mktemp("hooks")
    clone = new_repo(where / "ddpfix")
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    git("add", "-A", cwd=clone)
    git("commit", "-q", "-m", "snapshot", cwd=clone)
    return clone, git("rev-parse", "HEAD", cwd=clone).strip(), where / "pre-commit-home"


def configure(repo: Path, checkout, hook: str) -> None:
    clone, sha, _ = checkout
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {clone}\n    rev: {sha}\n    hooks:\n      - id: {hook}\n"
    )
    git("add", ".pre-commit-config.yaml", cwd=repo)


def run_hook(repo: Path, checkout, hook: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PRE_COMMIT_HOME=str(checkout[2]), NO_COLOR="1")
    return subprocess.run([pre_commit(), "run", hook, *args], cwd=repo, capture_output=True, text=True,
                          timeout=600, env=env)


def test_hooks_check_then_fix(tmp_path):
    needs_a_git_checkout()
    repo = new_repo(tmp_path / "repo")
    (repo / "train.py").write_bytes(BUGGY)
    git("add", "train.py", cwd=repo)

    def run(hook):
        return subprocess.run(
            [pre_commit(), "try-repo", str(ROOT), hook, "--files", "train.py"],
            cwd=repo, capture_output=True, text=True, timeout=600,
        )

    check = run("ddpfix-check")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "train.py:13:13: DDP006 [*]" in check.stdout and "train.py:19:13: DDP003 [~]" in check.stdout
    assert (repo / "train.py").read_bytes() == BUGGY

    fix = run("ddpfix")  # the safe fixes only: the hook never applies an unsafe one
    assert fix.returncode == 1 and "files were modified by this hook" in fix.stdout
    assert "train.py:13:13: DDP006 [fixed]" in fix.stdout  # what it changed, at its place
    fixed = (repo / "train.py").read_bytes()
    assert b"x = batch.to(self.device)" in fixed and b"rank_zero_only" not in fixed
    again = run("ddpfix")  # nothing more to write; the unsafe finding is still reported
    assert again.returncode == 1 and "files were modified" not in again.stdout, again.stdout
    assert "DDP003 [~]" in again.stdout and (repo / "train.py").read_bytes() == fixed


def test_staging_one_file_decides_with_the_whole_projects_facts(tmp_path, checkout, run_cli):
    """pre-commit names model.py alone; EarlyStopping in train.py (committed, not staged) monitors
    the metric. The hook must decide as ``ddpfix --write .`` does: log on every rank with
    sync_dist=True, never rank_zero_only=True (the other ranks would crash)."""
    repo = new_repo(tmp_path / "repo")
    (repo / "model.py").write_bytes(MODEL.replace(b'        if self.trainer.is_global_zero:\n    ', b""))
    (repo / "train.py").write_bytes(TRAIN)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "first", cwd=repo)
    (repo / "model.py").write_bytes(MODEL)
    git("add", "model.py", cwd=repo)
    whole = tmp_path / "whole"
    shutil.copytree(repo, whole)
    assert run_cli("--write", ".", cwd=whole).returncode == 0
    expected = (whole / "model.py").read_bytes()
    assert b'self.log("val_loss", loss, sync_dist=True)' in expected and b"rank_zero_only" not in expected

    configure(repo, checkout, "ddpfix")
    staged = git("diff", "--cached", "--name-only", cwd=repo).split()
    assert staged == [".pre-commit-config.yaml", "model.py"]
    proc = run_hook(repo, checkout, "ddpfix")
    assert proc.returncode == 1 and "files were modified by this hook" in proc.stdout, proc.stdout + proc.stderr
    assert (repo / "model.py").read_bytes() == expected
    assert (repo / "train.py").read_bytes() == TRAIN


def notebook(*cells: str) -> bytes:
    return json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
                   "source": source.splitlines(True)} for i, source in enumerate(cells)],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5,
    }, indent=1).encode() + b"\n"


def test_a_staged_notebook_is_checked_and_force_exclude_is_honoured(tmp_path, checkout):
    repo = new_repo(tmp_path / "repo")
    (repo / "pyproject.toml").write_text('[project]\nname = "demo"\n\n[tool.ddpfix]\nextend-exclude = ["gen/"]\n')
    (repo / "explore.ipynb").write_bytes(notebook("import lightning as L", BUGGY.decode()))
    (repo / "gen").mkdir()
    (repo / "gen" / "made.py").write_bytes(BUGGY)
    (repo / "pkg").mkdir()
    (repo / "pkg" / "train.py").write_bytes(BUGGY)
    git("add", "-A", cwd=repo)
    configure(repo, checkout, "ddpfix-check")
    proc = run_hook(repo, checkout, "ddpfix-check")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(r"^explore\.ipynb:cell 2:13:13: DDP006 \[\*\]", proc.stdout, re.M), proc.stdout
    assert "pkg/train.py:13:13: DDP006 [*]" in proc.stdout
    assert "gen/made.py" not in proc.stdout  # named by pre-commit, excluded by the settings


def readme_local_hook() -> str:
    """The README's ``repo: local`` snippet, as a user copies it."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    local = [block for block in blocks if "repo: local" in block]
    assert len(local) == 1, "the README's pre-commit section shows one `repo: local` hook"
    return local[0]


def test_the_readmes_local_hook_runs(tmp_path):
    """The README's local hook runs the ddpfix installed beside pre-commit (``language: system``)."""
    repo = new_repo(tmp_path / "repo")
    (repo / "train.py").write_bytes(BUGGY)
    (repo / ".pre-commit-config.yaml").write_text(readme_local_hook())
    git("add", "-A", cwd=repo)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               PRE_COMMIT_HOME=str(tmp_path / "home"))
    proc = subprocess.run([pre_commit(), "run", "--all-files"], cwd=repo, capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 1 and "files were modified by this hook" in proc.stdout, proc.stdout + proc.stderr
    assert b"x = batch.to(self.device)" in (repo / "train.py").read_bytes()
