"""Writing: a file that cannot be written is reported by name, and counted as not fixed."""

from __future__ import annotations

import os
from pathlib import Path

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


def test_no_file_is_handed_over_for_writing_before_the_fix_pass_reads_it_again(tmp_path, monkeypatch):
    """``--write`` writes each file as its result comes (``check_files``'s ``on_result``), but a file
    whose facts the scan deferred (a file without the word lightning: its project hazards) may be
    read again by the fix pass (``read_later``, here for DDP007's "weight averaging" question):
    it must still hold what the scan read, so it is handed over only after that pass."""
    from ddpfix import facts as facts_module
    from ddpfix.rules import all_rules
    from ddpfix.runner import check_files, discover

    fixtures = Path(__file__).resolve().parent.parent / "fixtures" / "tensor-attribute"
    (tmp_path / "model.py").write_bytes((fixtures / "comments_and_layout_kept.py").read_bytes())
    # the loader imports the model, so the two may run in one process: its hazards bear on the model
    (tmp_path / "loader.py").write_bytes(b"import model\n" + BUGGY)
    handed, read_after_handed, read = [], [], []
    real_read_later = facts_module.read_later

    def read_later(path):
        read.append(path)
        if path in handed:
            read_after_handed.append(path)
        return real_read_later(path)

    monkeypatch.setattr(facts_module, "read_later", read_later)
    files, _, _ = discover([str(tmp_path)], respect_gitignore=False)
    options = {"log_mode": "auto", "show_suppressed": False, "unsafe_fixes": True}
    _, results = check_files(files, list(all_rules()), 1, options, fix=True, whole=True,
                             on_result=lambda result: handed.append(result.path) or result)
    assert any(path.endswith("loader.py") for path in read)  # the case this test is about happened
    assert read_after_handed == []
    assert sorted(handed) == sorted(result.path for result in results)  # each handed over once
    assert all(result.changed for result in results)
