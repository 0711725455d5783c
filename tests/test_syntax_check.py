"""A file named on the command line, and stdin, is always syntax-checked (as Ruff does): ``E999``,
exit 2, whatever words it holds. Files found by walking a folder are parsed only when a rule's
trigger words occur in them (docs/interrupts.md has the measurement behind that choice)."""

from __future__ import annotations

import pytest

UNCLOSED = b"x = (\n"
MESSAGE = "E999 cannot parse: '(' was never closed"
BUGGY = b'import torch\nfrom torch.utils.data import DataLoader\nDataLoader(range(3), generator=torch.Generator("cuda"))\n'


def text(result) -> str:
    return result.stderr.decode() + result.stdout.decode()


@pytest.mark.parametrize("mode", ["--check", "--write", "--diff", "--output-format=json"])
def test_a_named_file_without_trigger_words_is_syntax_checked(tmp_path, run_cli, mode):
    (tmp_path / "bad.py").write_bytes(UNCLOSED)
    args = [mode, "--check"] if mode.startswith("--output") else [mode]
    result = run_cli(*args, "bad.py", cwd=tmp_path)
    assert result.returncode == 2, text(result)
    if mode.startswith("--output"):
        assert '"code": "E999"' in result.stdout.decode() and "was never closed" in result.stdout.decode()
    else:
        assert f"bad.py:1:5: {MESSAGE}" in text(result)
    assert (tmp_path / "bad.py").read_bytes() == UNCLOSED


@pytest.mark.parametrize("mode", [[], ["--check"], ["--diff"]])
def test_stdin_is_syntax_checked(run_cli, mode):
    result = run_cli("-", "--stdin-filename", "a.py", *mode, input=UNCLOSED)
    assert result.returncode == 2, text(result)
    assert f"a.py:1:5: {MESSAGE}" in result.stderr.decode()
    assert "No DDP issues found" not in text(result)
    if not mode:
        assert result.stdout == UNCLOSED  # an editor's buffer comes back whole


def test_a_named_file_that_parses_is_clean(tmp_path, run_cli):
    (tmp_path / "fine.py").write_bytes(b"x = (1,\n     2)\n")
    result = run_cli("--check", "fine.py", cwd=tmp_path)
    assert result.returncode == 0, text(result)
    assert "No DDP issues found in 1 file." in text(result)


def test_a_syntax_error_with_trigger_words_is_reported_once(tmp_path, run_cli):
    (tmp_path / "bad.py").write_bytes(BUGGY + UNCLOSED)
    result = run_cli("--check", "bad.py", cwd=tmp_path)
    assert result.returncode == 2
    assert text(result).count("E999") == 1, text(result)


def test_many_named_files_in_parallel_each_checked(tmp_path, run_cli):
    """More files than a run does in-process: the workers check them, the scan sends them on."""
    names = []
    for number in range(24):
        name = f"m{number:02d}.py"
        (tmp_path / name).write_bytes(UNCLOSED if number in (3, 17) else b"x = 1\n")
        names.append(name)
    (tmp_path / "train.py").write_bytes(BUGGY)
    result = run_cli("--check", "--jobs", "2", *names, "train.py", cwd=tmp_path)
    assert result.returncode == 2, text(result)
    assert f"m03.py:1:5: {MESSAGE}" in text(result) and f"m17.py:1:5: {MESSAGE}" in text(result)
    assert text(result).count("E999") == 2
    assert "train.py:3:" in text(result)  # the findings of the others as ever


def test_a_folder_walk_parses_only_files_with_trigger_words(tmp_path, run_cli):
    """The fast path for trees: a file no rule's words concern is not parsed (checking every file
    would cost four times a whole --check of torch); named, the same file is checked."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "plain.py").write_bytes(UNCLOSED)
    (tmp_path / "pkg" / "train.py").write_bytes(BUGGY + UNCLOSED)
    result = run_cli("--check", "pkg", cwd=tmp_path)
    assert "pkg/train.py:4:5: E999" in text(result) and "plain.py" not in text(result)
    result = run_cli("--check", "pkg", "pkg/plain.py", cwd=tmp_path)
    assert f"pkg/plain.py:1:5: {MESSAGE}" in text(result) and "pkg/train.py:4:5: E999" in text(result)


def test_the_check_of_a_named_file_takes_its_max_file_size(tmp_path, run_cli):
    """A file over the parse limit is not parsed (docs/limits.md); the limit is the file's setting,
    raised by the flag or by ``[tool.ddpfix]``, for named files and stdin alike."""
    big = b"x = 1\n" * (5 * 2**20 // 6 + 1) + UNCLOSED
    lines = big.count(b"\n")
    (tmp_path / "big.py").write_bytes(big)
    result = run_cli("--check", "big.py", cwd=tmp_path, timeout=120)
    assert result.returncode == 0 and "E999" not in text(result), text(result)
    result = run_cli("--check", "--max-file-size", "8MiB", "big.py", cwd=tmp_path, timeout=120)
    assert result.returncode == 2 and f"big.py:{lines}:5: {MESSAGE}" in text(result), text(result)
    result = run_cli("-", "--stdin-filename", "big.py", "--max-file-size", "8MiB", input=big, cwd=tmp_path, timeout=120)
    assert result.returncode == 2 and f"big.py:{lines}:5: {MESSAGE}" in text(result), text(result)
    (tmp_path / "pyproject.toml").write_text('[tool.ddpfix]\nmax-file-size = "8MiB"\n')
    result = run_cli("--check", "big.py", cwd=tmp_path, timeout=120)
    assert result.returncode == 2 and f"big.py:{lines}:5: {MESSAGE}" in text(result), text(result)
    assert (tmp_path / "big.py").read_bytes() == big


def test_a_lowered_max_file_size_reports_the_size_not_the_syntax(tmp_path, run_cli):
    (tmp_path / "bad.py").write_bytes(BUGGY + UNCLOSED)
    result = run_cli("--check", "--max-file-size", "64", "bad.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "bad.py: E902 not analysed: 0.0 MiB is over the 64 bytes limit for parsing (max-file-size)" in text(result)
    assert "E999" not in text(result)
