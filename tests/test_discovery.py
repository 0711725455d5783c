"""Which files a run takes: explicit files always; folders walked with gitignore and excludes."""

from __future__ import annotations

import os

from ddpfix.runner import discover


def make(root, *names):
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")


def test_walk_skips_default_excludes_virtualenvs_and_gitignored(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n*_pb2.py\n")
    (tmp_path / "src" / "sub").mkdir(parents=True)
    (tmp_path / "src" / "sub" / ".gitignore").write_text("local.py\n")
    make(tmp_path, "src/a.py", "src/sub/b.py", "src/sub/local.py", "src/msg_pb2.py", "generated/g.py",
         "build/b.py", "node_modules/n.py", "src/__pycache__/c.py", "env/lib.py", "notes.txt")
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    files, problems, empty = discover(["."])
    assert files == ["src/a.py", "src/sub/b.py"]
    assert not problems and not empty
    # Walking a subfolder still honours the .gitignore above it.
    assert discover(["src"])[0] == ["src/a.py", "src/sub/b.py"]
    # Explicit files are always taken.
    assert discover(["generated/g.py", "src/sub/local.py"])[0] == ["generated/g.py", "src/sub/local.py"]
    assert "src/msg_pb2.py" in discover(["."], respect_gitignore=False)[0]


def test_exclude_patterns(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make(tmp_path, "a.py", "tests/test_a.py", "pkg/migrations/0001.py", "pkg/models.py")
    files, _, _ = discover(["."], exclude=["tests/", "migrations"])
    assert files == ["a.py", "pkg/models.py"]


def test_missing_paths_and_empty_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    files, problems, empty = discover(["nope.py", "docs"])
    assert files == [] and empty == ["docs"]
    assert [(p.path, p.code, p.message) for p in problems] == [("nope.py", "E902", "no such file or directory")]


def test_symlink_loops_terminate(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make(tmp_path, "pkg/a.py")
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "loop")
    assert discover(["."])[0] == ["pkg/a.py"]


def test_a_nested_gitignore_can_re_include(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("gen*.py\n")
    make(tmp_path, "sub/gen_a.py", "sub/gen_keep.py")
    (tmp_path / "sub" / ".gitignore").write_text("!gen_keep.py\n")
    assert discover(["."])[0] == ["sub/gen_keep.py"]


def test_a_folder_named_inside_a_gitignored_virtualenv_is_checked_and_says_so(tmp_path, monkeypatch):
    """"Files named explicitly are always checked" held for files, not for a folder named inside a
    gitignored, excluded one (a package in .venv/.../site-packages): exit 0 and "0 files". It is
    now checked, with a note saying why it would not be, and --force-exclude skips it."""
    import subprocess

    from conftest import ddpfix_executable

    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("env/\n")
    package = tmp_path / "env" / "lib" / "site-packages" / "pkg"
    package.mkdir(parents=True)
    (package / "train.py").write_bytes(
        b'import torch\nfrom torch.utils.data import DataLoader\nDataLoader(range(3), generator=torch.Generator("cuda"))\n')

    def ddpfix(*args):
        return subprocess.run([ddpfix_executable(), "--check", "--no-color", *args], cwd=tmp_path, capture_output=True, text=True)

    run = ddpfix("env/lib/site-packages/pkg")
    assert run.returncode == 1 and "env/lib/site-packages/pkg/train.py:3:" in run.stdout
    assert "checked because it was named" in run.stderr and "ignored by .gitignore" in run.stderr
    run = ddpfix("--force-exclude", "env/lib/site-packages/pkg")
    assert run.returncode == 0 and "not checked (--force-exclude)" in run.stderr and run.stdout == ""
