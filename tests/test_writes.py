"""Writing: a file that cannot be written is reported by name, and counted as not fixed."""

from __future__ import annotations

import os

from click.testing import CliRunner

from ddpfix import cli, writer
from ddpfix.findings import FileResult

BUGGY = b'import torch\nfrom torch.utils.data import DataLoader\nDataLoader(range(3), generator=torch.Generator("cuda"))\n'


def test_a_failed_write_is_reported_and_the_exit_code_says_so(tmp_path, monkeypatch):
    (tmp_path / "train.py").write_bytes(BUGGY)

    def refuse(path, data, expected=None):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(writer, "write_atomic", refuse)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli.command, ["--write", "--unsafe-fixes", "--no-color", "train.py"], standalone_mode=False)
    assert result.return_value == cli.EXIT_ERROR
    assert "train.py: E902 cannot write: Permission denied" in result.stderr
    assert "1 fix not applied." in result.stderr and "Fixed" not in result.stderr
    assert "[fixed]" not in result.stdout
    assert (tmp_path / "train.py").read_bytes() == BUGGY


def test_a_file_changed_since_it_was_read_is_not_overwritten(tmp_path):
    path = tmp_path / "train.py"
    path.write_bytes(b"edited meanwhile\n")
    result = FileResult(str(path), BUGGY, b"fixed\n")
    kept, failed = cli.write_results([result])
    assert path.read_bytes() == b"edited meanwhile\n"
    assert "changed on disk since it was read" in failed[0].message and not kept[0].changed


def test_atomic_write_leaves_no_temp_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "train.py"
    path.write_bytes(BUGGY)

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    try:
        writer.write_atomic(str(path), b"new\n")
    except OSError:
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]
    assert path.read_bytes() == BUGGY
