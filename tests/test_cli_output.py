"""The flags users know from Ruff (issue 21): bare ``ddpfix``, ``--help``, ``--statistics``,
``--exit-zero``, ``--extend-select`` and ``--add-noqa``, through the installed console script."""

from __future__ import annotations

import ast
import collections
import json
import re
import shlex
import stat

import pytest
from conftest import FIXTURES
from fixture_cases import copy_without_shared_facts

BUGGY = b'''import torch
from torch.utils.data import DataLoader

g = torch.Generator(device="cuda")
g.manual_seed(0)
loader = DataLoader(range(8), shuffle=True, generator=g)
'''
CLEAN = b"import torch\nx = torch.zeros(3)\n"
# A rank-gated self.log: DDP003, a second rule for the selection tests.
GATED_LOG = (FIXTURES / "rank-gated-log" / "seed_pattern.py").read_bytes()
FINDING = re.compile(r"^(?P<path>[^\s:]+(?::cell \d+)?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) (?P<mark>\[[*~]\] )?", re.M)


def codes(stdout: bytes) -> list[str]:
    return [m["code"] for m in FINDING.finditer(stdout.decode())]


def snapshot(folder):
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def tree(tmp_path):
    copy_without_shared_facts(tmp_path / "fixtures")
    return tmp_path


# --- bare ddpfix -------------------------------------------------------------------------------


def test_bare_ddpfix_checks_the_current_folder(tmp_path, run_cli):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_bytes(BUGGY)
    (tmp_path / "clean.py").write_bytes(CLEAN)
    bare, dot = run_cli("--check", cwd=tmp_path), run_cli("--check", ".", cwd=tmp_path)
    assert bare.returncode == dot.returncode == 1
    assert (bare.stdout, bare.stderr) == (dot.stdout, dot.stderr)
    assert codes(bare.stdout) == ["DDP002"] and bare.stdout.startswith(b"pkg/train.py:4:5: DDP002")
    preview = run_cli("--unsafe-fixes", cwd=tmp_path)  # the preview, which writes nothing without a terminal
    assert preview.returncode == 1 and b"+g = torch.Generator()" in preview.stdout
    assert (tmp_path / "pkg" / "train.py").read_bytes() == BUGGY


def test_bare_ddpfix_with_a_stdin_name_reads_stdin(tmp_path, run_cli):
    (tmp_path / "other.py").write_bytes(BUGGY)  # not read: the source is the one on stdin
    proc = run_cli("--check", "--stdin-filename", "pkg/train.py", input=GATED_LOG, cwd=tmp_path)
    assert proc.returncode == 1
    assert codes(proc.stdout) and set(codes(proc.stdout)) == {"DDP003"}
    assert proc.stdout.decode().startswith("pkg/train.py:")


# --- --help ------------------------------------------------------------------------------------


def help_text(run_cli, monkeypatch, columns: int) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    proc = run_cli("--help")
    assert proc.returncode == 0
    return proc.stdout.decode()


def help_block(text: str, title: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(f"  {title}:") + 1
    block = []
    for line in lines[start:]:
        if not line.strip():
            break
        block.append(line.strip())
    return block


def test_help_fits_100_columns_and_says_the_exit_codes_keys_and_lsp(run_cli, monkeypatch):
    text = help_text(run_cli, monkeypatch, 200)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert text.startswith("Usage: ddpfix [OPTIONS] [PATH]...")
    exits = {line.split()[0] for line in help_block(text, "Exit codes")}
    assert exits == {"0", "1", "2", "130"}
    keys = " ".join(help_block(text, "Keys of -i (--interactive)"))
    for key in ("y", "n", "a", "q"):
        assert re.search(rf"(^|\s){key}  \w", keys), key
    assert help_block(text, "Language server")[0].startswith("ddpfix lsp ")
    for flag in ("--statistics", "--exit-zero", "--extend-select", "--add-noqa"):
        assert flag in text
    narrow = help_text(run_cli, monkeypatch, 80)
    assert help_block(narrow, "Examples") == help_block(text, "Examples"), "click must not re-wrap the examples"


def test_every_help_example_runs(tmp_path, run_cli, monkeypatch):
    """Each example of --help is a command line that works (-i aside: it needs a terminal)."""
    examples = help_block(help_text(run_cli, monkeypatch, 200), "Examples")
    assert len(examples) >= 8
    ran = 0
    for example in examples:
        command = example.split("  ")[0]
        words = shlex.split(command)
        assert words[0] == "ddpfix", example
        # Redirections: "> file" drops the file, "< file" feeds a buggy source on stdin.
        cleaned, stdin, redirect = [], b"", None
        for word in words[1:]:
            if word in (">", "<"):
                redirect = word
            elif redirect:
                stdin, redirect = (BUGGY if redirect == "<" else stdin), None
            else:
                cleaned.append(word)
        if "-i" in cleaned:
            continue
        project = tmp_path / f"example{ran}"
        (project / "src").mkdir(parents=True)
        (project / "src" / "train.py").write_bytes(BUGGY)
        proc = run_cli(*cleaned, cwd=project, input=stdin)
        assert proc.returncode in (0, 1), (example, proc.stderr.decode())
        assert b"Usage:" not in proc.stderr and b"Traceback" not in proc.stderr, example
        ran += 1
    assert ran == len(examples) - 1


# --- --statistics ------------------------------------------------------------------------------


STATS_ROW = re.compile(r"^ *(?P<count>\d+)\t(?P<code>DDP\d{3})\t(?P<mark>\[[*~ -]\]) (?P<name>[a-z-]+) +(?P<detail>.*)$")


def test_statistics_count_what_check_lists(tree, run_cli):
    check = run_cli("--check", "fixtures", cwd=tree)
    stats = run_cli("--statistics", "fixtures", cwd=tree)
    assert stats.returncode == check.returncode == 1
    assert stats.stderr.splitlines()[-1] == check.stderr.splitlines()[-1], "the same summary"
    listed = collections.Counter(codes(check.stdout))
    marks = collections.defaultdict(collections.Counter)
    for m in FINDING.finditer(check.stdout.decode()):
        marks[m["code"]][(m["mark"] or "").strip()] += 1
    rows = [STATS_ROW.match(line) for line in stats.stdout.decode().splitlines()]
    assert all(rows), stats.stdout.decode()
    assert {row["code"]: int(row["count"]) for row in rows} == listed
    counts = [int(row["count"]) for row in rows]
    assert counts == sorted(counts, reverse=True), "most frequent first"
    for row in rows:
        safe, unsafe = marks[row["code"]]["[*]"], marks[row["code"]]["[~]"]
        manual = int(row["count"]) - safe - unsafe
        want = [f"{safe} safe fix" + ("es" if safe != 1 else "")] if safe else []
        want += [f"{unsafe} unsafe fix" + ("es" if unsafe != 1 else "")] if unsafe else []
        want += [f"{manual} without a fix"] if manual else []
        assert row["detail"] == ", ".join(want), row.group(0)
        mark = "[*]" if safe == int(row["count"]) else "[~]" if not manual else "[-]" if safe + unsafe else "[ ]"
        assert row["mark"] == mark, row.group(0)
    assert {row["mark"] for row in rows} >= {"[-]", "[ ]"}


def test_statistics_json_quiet_and_after_write(tmp_path, run_cli):
    (tmp_path / "a.py").write_bytes(BUGGY)
    (tmp_path / "b.py").write_bytes(BUGGY)
    (tmp_path / "log.py").write_bytes(GATED_LOG)
    quiet = run_cli("--statistics", "-q", cwd=tmp_path)
    assert quiet.returncode == 1 and quiet.stderr == b""
    table = {m["code"]: int(m["count"]) for m in map(STATS_ROW.match, quiet.stdout.decode().splitlines())}
    assert table["DDP002"] == 2 and table["DDP003"] >= 1
    records = json.loads(run_cli("--statistics", "--output-format", "json", cwd=tmp_path).stdout)
    assert {r["code"]: r["count"] for r in records} == table
    assert all(r["fixable"] == r["safe"] + r["unsafe"] <= r["count"] for r in records)
    written = run_cli("--statistics", "--write", "--unsafe-fixes", cwd=tmp_path)
    assert (tmp_path / "a.py").read_bytes() != BUGGY
    assert b"DDP002" not in written.stdout, "what --write fixed is not left"
    assert run_cli("--statistics", cwd=tmp_path).stdout == written.stdout
    for bad in (["--diff"], ["-i"], ["--output-format", "sarif"]):
        proc = run_cli("--statistics", *bad, cwd=tmp_path)
        assert proc.returncode == 2 and b"--statistics" in proc.stderr, bad


def test_statistics_of_nothing_is_only_the_summary(tmp_path, run_cli):
    (tmp_path / "clean.py").write_bytes(CLEAN)
    proc = run_cli("--statistics", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == b""
    assert b"No DDP issues found in 1 file." in proc.stderr


# --- --exit-zero -------------------------------------------------------------------------------


def test_exit_zero_passes_findings_but_not_errors(tmp_path, run_cli):
    (tmp_path / "train.py").write_bytes(BUGGY)
    for args in (["--check"], ["--diff"], [], ["--statistics"], ["--output-format", "json"]):
        plain, zero = run_cli(*args, cwd=tmp_path), run_cli(*args, "--exit-zero", cwd=tmp_path)
        assert (plain.returncode, zero.returncode) == (1, 0), args
        assert plain.stdout == zero.stdout, args
    assert run_cli("-", "--check", "--exit-zero", input=BUGGY).returncode == 0
    # (only files that could hold a pitfall are parsed: this one names a generator)
    (tmp_path / "broken.py").write_bytes(b"from torch.utils.data import DataLoader\nx = torch.Generator(device='cuda'\n")
    assert run_cli("--check", "--exit-zero", cwd=tmp_path).returncode == 2, "a file that cannot be parsed is an error"
    assert run_cli("--check", "--exit-zero", "--select", "DDP999", cwd=tmp_path).returncode == 2


# --- --extend-select ---------------------------------------------------------------------------


def test_extend_select_adds_to_the_selection(tmp_path, run_cli):
    (tmp_path / "gen.py").write_bytes(BUGGY)
    (tmp_path / "log.py").write_bytes(GATED_LOG)
    assert set(codes(run_cli("--check", "--select", "DDP002", cwd=tmp_path).stdout)) == {"DDP002"}
    both = run_cli("--check", "--select", "DDP002", "--extend-select", "rank-gated-log", cwd=tmp_path)
    assert set(codes(both.stdout)) == {"DDP002", "DDP003"}
    assert set(codes(run_cli("--check", "--extend-select", "DDP003", cwd=tmp_path).stdout)) == {"DDP002", "DDP003"}
    (tmp_path / "pyproject.toml").write_text('[tool.ddpfix]\nselect = ["DDP002"]\nextend-select = ["DDP003"]\n')
    assert set(codes(run_cli("--check", cwd=tmp_path).stdout)) == {"DDP002", "DDP003"}
    # A --select on the command line replaces the file's selection, its extend-select included.
    assert set(codes(run_cli("--check", "--select", "DDP002", cwd=tmp_path).stdout)) == {"DDP002"}
    assert set(codes(run_cli("--check", "--ignore", "DDP003", cwd=tmp_path).stdout)) == {"DDP002"}
    bad = run_cli("--check", "--extend-select", "DDP999", cwd=tmp_path)
    assert bad.returncode == 2 and b"--extend-select" in bad.stderr and b"DDP999" in bad.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.ddpfix]\nextend-select = ["DDP999"]\n')
    bad = run_cli("--check", cwd=tmp_path)
    assert bad.returncode == 2 and b"pyproject.toml" in bad.stderr and b"DDP999" in bad.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.ddpfix]\nextend-select = "DDP003"\n')
    assert run_cli("--check", cwd=tmp_path).returncode == 1


def test_the_language_server_honours_extend_select(tmp_path):
    from lsp_client import LspClient

    (tmp_path / "pyproject.toml").write_text('[tool.ddpfix]\nselect = ["DDP002"]\nextend-select = ["DDP003"]\n')
    path = tmp_path / "log.py"
    path.write_bytes(GATED_LOG + BUGGY)
    client = LspClient(tmp_path, tmp_path / "server.log")
    try:
        client.initialize(tmp_path)
        published = client.open(path, path.read_text())
    finally:
        client.close()
    assert {d["code"] for d in published["diagnostics"]} == {"DDP002", "DDP003"}


# --- --add-noqa --------------------------------------------------------------------------------


def test_add_noqa_silences_every_finding_once(tmp_path, run_cli):
    (tmp_path / "train.py").write_bytes(BUGGY)
    (tmp_path / "log.py").write_bytes(GATED_LOG)
    (tmp_path / "clean.py").write_bytes(CLEAN)
    (tmp_path / "train.py").chmod(0o751)
    before = run_cli("--check", cwd=tmp_path)
    clean_mtime = (tmp_path / "clean.py").stat().st_mtime_ns
    proc = run_cli("--add-noqa", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = {m.group(0).split(":")[0] for m in FINDING.finditer(before.stdout.decode())}
    assert re.search(rb"Added \d+ noqa directives? to 2 files", proc.stderr)
    assert (tmp_path / "train.py").read_bytes() == BUGGY.replace(
        b'g = torch.Generator(device="cuda")\n', b'g = torch.Generator(device="cuda")  # noqa: DDP002\n')
    assert stat.S_IMODE((tmp_path / "train.py").stat().st_mode) == 0o751
    assert (tmp_path / "clean.py").stat().st_mtime_ns == clean_mtime
    assert lines == {"train.py", "log.py"}
    after = run_cli("--check", cwd=tmp_path)
    assert after.returncode == 0 and after.stdout == b""
    state = snapshot(tmp_path)
    again = run_cli("--add-noqa", cwd=tmp_path)
    assert again.returncode == 0 and snapshot(tmp_path) == state, "a second --add-noqa changed files"
    shown = run_cli("--check", "--show-suppressed", cwd=tmp_path).stdout.decode()
    assert shown.count("[suppressed]") == len(FINDING.findall(before.stdout.decode()))


def test_add_noqa_merges_and_keeps_comments_encodings_and_newlines(tmp_path, run_cli):
    merged = BUGGY.replace(b'g = torch.Generator(device="cuda")\n', b'g = torch.Generator(device="cuda")  # noqa:E501 (long)\n')
    commented = BUGGY.replace(b'g = torch.Generator(device="cuda")\n', b'g = torch.Generator(device="cuda")  # seeded below\n')
    files = {
        "merged.py": merged,
        "commented.py": commented,
        "crlf.py": BUGGY.replace(b"\n", b"\r\n"),
        "bom.py": b"\xef\xbb\xbf" + BUGGY.replace(b"import torch\n", "import torch  # données\n".encode()),
        "latin1.py": b"# -*- coding: latin-1 -*-\n" + BUGGY.replace(b"import torch\n", "import torch  # donn\xe9es\n".encode("latin-1")),
        "no_eol.py": BUGGY.rstrip(b"\n").replace(b"generator=g)", b'generator=torch.Generator(device="cuda"))'),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    proc = run_cli("--add-noqa", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    line = b'g = torch.Generator(device="cuda")'
    assert (tmp_path / "merged.py").read_bytes() == merged.replace(b"# noqa:E501 (long)", b"# noqa:E501, DDP002 (long)")
    assert (tmp_path / "commented.py").read_bytes() == commented.replace(b"# seeded below", b"# seeded below  # noqa: DDP002")
    assert (tmp_path / "crlf.py").read_bytes() == files["crlf.py"].replace(line + b"\r\n", line + b"  # noqa: DDP002\r\n")
    for name in ("bom.py", "latin1.py"):
        assert (tmp_path / name).read_bytes() == files[name].replace(line + b"\n", line + b"  # noqa: DDP002\n"), name
    assert (tmp_path / "no_eol.py").read_bytes() == files["no_eol.py"] + b"  # noqa: DDP002"
    assert run_cli("--check", cwd=tmp_path).stdout == b""


MULTILINE = b'''import torch
from torch.utils.data import DataLoader

loader = DataLoader(  # the loader
    range(8), generator=torch.Generator(device="cuda"), doc="""first
second""")
other = DataLoader(
    range(8),
    generator=torch.Generator(device="cuda"),
)
'''


def test_add_noqa_puts_the_comment_where_a_suppression_is_read(tmp_path, run_cli):
    """A finding whose line ends inside a string gets it on its statement's first line; one whose
    statement has no line to take it is left, with a note, and exits 1."""
    (tmp_path / "multi.py").write_bytes(MULTILINE)
    cornered = b'''import torch
from torch.utils.data import DataLoader
loader = DataLoader(range(8), generator=torch.Generator(device="cuda"), doc="""a
b""")
other = DataLoader(range(8), generator=torch.Generator(device="cuda"), n=1 + \\
    2)
'''
    (tmp_path / "cornered.py").write_bytes(cornered)
    proc = run_cli("--add-noqa", cwd=tmp_path)
    assert (tmp_path / "multi.py").read_bytes() == MULTILINE.replace(
        b"(  # the loader\n", b"(  # the loader  # noqa: DDP002\n").replace(
        b'device="cuda"),\n)', b'device="cuda"),  # noqa: DDP002\n)')
    assert (tmp_path / "cornered.py").read_bytes() == cornered
    err = proc.stderr.decode()
    assert proc.returncode == 1
    assert re.search(r"^cornered\.py:3:\d+: note: DDP002 left: no line of its statement can take a # noqa", err, re.M)
    assert re.search(r"^cornered\.py:5:\d+: note: DDP002 left", err, re.M)
    assert "2 findings could not be silenced" in err
    check = run_cli("--check", cwd=tmp_path)
    assert [m.group(0).split(":")[0] for m in FINDING.finditer(check.stdout.decode())] == ["cornered.py", "cornered.py"]
    assert run_cli("--add-noqa", "--exit-zero", cwd=tmp_path).returncode == 0


def notebook(cells: list[str]) -> bytes:
    """A notebook as Jupyter saves it (one-space indent, sources as lists of lines)."""
    content = {
        "cells": [{"cell_type": "code", "execution_count": 1, "id": f"c{i}", "metadata": {},
                   "outputs": [{"output_type": "stream", "name": "stdout", "text": ["done ✓\n"]}],
                   "source": source.splitlines(True)} for i, source in enumerate(cells)],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return (json.dumps(content, indent=1, ensure_ascii=False) + "\n").encode()


def test_add_noqa_in_a_notebook_cell(tmp_path, run_cli):
    cells = ["import lightning as L\n%matplotlib inline", 'trainer = L.Trainer(devices=2, strategy="ddp")\ntrainer.fit(model)']
    (tmp_path / "nb.ipynb").write_bytes(notebook(cells))
    before = run_cli("--check", cwd=tmp_path)
    assert re.search(rb"^nb\.ipynb:cell 2:1:\d+: DDP015", before.stdout, re.M)
    proc = run_cli("--add-noqa", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    cells[1] = cells[1].replace('strategy="ddp")\n', 'strategy="ddp")  # noqa: DDP015\n')
    assert (tmp_path / "nb.ipynb").read_bytes() == notebook(cells)
    assert run_cli("--check", cwd=tmp_path).stdout == b""
    state = snapshot(tmp_path)
    assert run_cli("--add-noqa", cwd=tmp_path).returncode == 0 and snapshot(tmp_path) == state
    # A notebook that would not be written back byte for byte is left, with a note.
    odd = notebook(["import lightning as L", 'L.Trainer(devices=2, strategy="ddp").fit(model)']).replace(b"\n", b"\n ", 1)
    (tmp_path / "odd.ipynb").write_bytes(odd)
    proc = run_cli("--add-noqa", "odd.ipynb", cwd=tmp_path)
    assert proc.returncode == 1 and b"odd.ipynb: note: no noqa added: writing this notebook back would change" in proc.stderr
    assert (tmp_path / "odd.ipynb").read_bytes() == odd


def test_add_noqa_over_every_fixture(tree, run_cli):
    """Every finding of every fixture is silenced; each file still parses; a second run and
    --check find nothing to do."""
    proc = run_cli("--add-noqa", "fixtures", cwd=tree, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    for path in (tree / "fixtures").rglob("*.py"):
        ast.parse(path.read_bytes())
    check = run_cli("--check", "fixtures", cwd=tree, timeout=300)
    assert check.returncode == 0 and check.stdout == b""
    state = snapshot(tree)
    run_cli("--add-noqa", "fixtures", cwd=tree, timeout=300)
    assert snapshot(tree) == state


def test_add_noqa_usage(tmp_path, run_cli):
    (tmp_path / "train.py").write_bytes(BUGGY)
    for args in (["--write"], ["--diff"], ["--check"], ["--statistics"], ["--output-format", "json"]):
        proc = run_cli("--add-noqa", *args, cwd=tmp_path)
        assert proc.returncode == 2 and b"--add-noqa" in proc.stderr, args
    assert run_cli("--add-noqa", "-", input=BUGGY).returncode == 2
    assert (tmp_path / "train.py").read_bytes() == BUGGY


def test_the_summary_names_the_command_that_applies_what_was_shown(tmp_path):
    """After --diff --unsafe-fixes (or --check --unsafe-fixes) the unsafe fixes counted are applied
    only by --write --unsafe-fixes: the summary says that command, not --write alone."""
    import shutil
    import subprocess

    from conftest import ROOT, ddpfix_executable

    # A copy of a project with safe and unsafe fixes, alone: inside this repository (or beside the
    # other fixtures, one of which loads modules named at run time) its files may run with every
    # other fixture's default-device switch.
    fixtures = tmp_path / "whole_project"
    shutil.copytree(ROOT / "fixtures" / "cuda-generator" / "whole_project", fixtures)

    def last_line(*flags):
        run = subprocess.run([ddpfix_executable(), *flags, "--no-color", str(fixtures)], capture_output=True, text=True)
        return run.stderr.strip().splitlines()[-1]

    assert "Run with --write --unsafe-fixes to apply." in last_line("--diff", "--unsafe-fixes")
    assert "Run with --write --unsafe-fixes to apply." in last_line("--check", "--unsafe-fixes")
    plain = last_line("--diff")
    assert "Run with --write to apply." in plain and "available with --unsafe-fixes" in plain
