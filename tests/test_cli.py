"""The command line, through the installed console script in a subprocess."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess

import pytest
from conftest import FIXTURES, ROOT
from fixture_cases import Case, copy_without_shared_facts, is_input

from ddpfix.rules import all_rules

BUGGY = b'''import torch
from torch.utils.data import DataLoader

g = torch.Generator(device="cuda")
g.manual_seed(0)
loader = DataLoader(range(8), shuffle=True, generator=g)
'''
FIXED = BUGGY.replace(b'torch.Generator(device="cuda")', b"torch.Generator()")
CLEAN = b"import torch\nx = torch.zeros(3)\n"


@pytest.fixture
def tree(tmp_path):
    """A copy of the fixtures in a scratch folder, less the cases whose facts cross into other cases
    (one run over the tree then gives each case what its own run gives it)."""
    copy_without_shared_facts(tmp_path / "fixtures")
    return tmp_path


def snapshot(folder):
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.rglob("*")) if p.is_file()}


def inputs_and_expected(folder):
    for path in sorted(folder.rglob("*")):
        if not is_input(path):
            continue
        output = Case(path).fully_fixed  # every fix applied: these tests run with --unsafe-fixes
        yield path, output.read_bytes() if output is not None else path.read_bytes()


def test_diff_writes_nothing_and_exits_1(tree, run_cli_unsafe):
    before = snapshot(tree)
    proc = run_cli_unsafe("--diff", "fixtures", cwd=tree)
    assert proc.returncode == 1, proc.stderr
    assert snapshot(tree) == before
    out = proc.stdout.decode()
    assert "--- a/fixtures/cuda-generator/seed_pattern.py" in out
    assert "+++ b/fixtures/cuda-generator/seed_pattern.py" in out
    assert '-g = torch.Generator(device="cuda")' in out and "+g = torch.Generator()" in out
    assert "Run with --write --unsafe-fixes to apply." in proc.stderr.decode()  # what applies all it showed


def test_git_apply_accepts_the_diff(tree, run_cli_unsafe):
    """With --notebook-diff json (notebooks otherwise show per-cell diffs, which are for reading)."""
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    proc = run_cli_unsafe("--diff", "--notebook-diff", "json", "fixtures", cwd=tree)
    patch = tree / "fix.patch"
    patch.write_bytes(proc.stdout)
    subprocess.run(["git", "apply", "--check", "fix.patch"], cwd=tree, check=True)
    subprocess.run(["git", "apply", "fix.patch"], cwd=tree, check=True)
    for path, expected in inputs_and_expected(tree / "fixtures"):
        assert path.read_bytes() == expected, path


def test_write_applies_then_second_run_changes_nothing(tree, run_cli_unsafe):
    proc = run_cli_unsafe("--write", "fixtures", cwd=tree)
    assert proc.returncode == 1  # the refusal fixtures still need a manual fix
    assert re.search(r"Fixed \d+ issues in \d+ files\.", proc.stderr.decode())
    assert "[fixed]" not in proc.stdout.decode()  # what is left only (--show-fixes lists the fixes)
    for path, expected in inputs_and_expected(tree / "fixtures"):
        assert path.read_bytes() == expected, path
    before = snapshot(tree)
    again = run_cli_unsafe("--write", "fixtures", cwd=tree)
    assert snapshot(tree) == before, "a second run touched files"
    assert not re.search(r"\[[*~]\]", again.stdout.decode()) and "Fixed" not in again.stderr.decode()


def test_write_exits_0_when_everything_got_fixed(tmp_path, run_cli_unsafe):
    (tmp_path / "train.py").write_bytes(BUGGY)
    assert run_cli_unsafe("--write", "train.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "train.py").read_bytes() == FIXED
    proc = run_cli_unsafe("train.py", cwd=tmp_path)
    assert proc.returncode == 0
    assert "No DDP issues found in 1 file." in proc.stderr.decode()


def test_unchanged_files_are_never_written(tmp_path, run_cli_unsafe):
    clean, buggy = tmp_path / "clean.py", tmp_path / "buggy.py"
    clean.write_bytes(CLEAN)
    buggy.write_bytes(BUGGY)
    os.utime(clean, ns=(1_000_000_000, 1_000_000_000))
    run_cli_unsafe("--write", ".", cwd=tmp_path)
    assert clean.stat().st_mtime_ns == 1_000_000_000
    assert buggy.read_bytes() == FIXED


def test_default_without_a_terminal_previews_and_writes_nothing(tmp_path, run_cli_unsafe):
    (tmp_path / "train.py").write_bytes(BUGGY)
    proc = run_cli_unsafe("train.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert (tmp_path / "train.py").read_bytes() == BUGGY
    out = proc.stdout.decode()
    mark = re.search(r"train.py:4:5: DDP002 \[([*~])\] CUDA generator", out).group(1)
    assert "+g = torch.Generator()" in out
    # The command that applies what was shown: an unsafe fix needs --unsafe-fixes again.
    command = "--write" if mark == "*" else "--write --unsafe-fixes"
    assert f"Would fix 1 issue in 1 file. Run with {command} to apply." in proc.stderr.decode()


def test_check_lists_findings_only(tmp_path, run_cli_unsafe):
    (tmp_path / "train.py").write_bytes(BUGGY)
    proc = run_cli_unsafe("--check", "train.py", cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 1 and re.match(r"train.py:4:5: DDP002 \[[*~]\] ", lines[0])
    assert (tmp_path / "train.py").read_bytes() == BUGGY


def test_stdin_mode(run_cli_unsafe):
    proc = run_cli_unsafe("-", "--stdin-filename", "pkg/train.py", input=BUGGY)
    assert proc.returncode == 0
    assert proc.stdout == FIXED
    assert "pkg/train.py:4:5: DDP002" in proc.stderr.decode()
    diff = run_cli_unsafe("-", "--diff", input=BUGGY)
    assert diff.returncode == 1 and "+g = torch.Generator()" in diff.stdout.decode()
    # (Only files that could hold a pitfall are parsed at all, so the broken buffer names one.)
    broken = b"from torch.utils.data import DataLoader\ng = torch.Generator(\ndef f(:\n    pass\n"
    proc = run_cli_unsafe("-", input=broken)
    assert proc.returncode == 2
    assert proc.stdout == broken, "the buffer must come back whole on an error"
    assert re.search(r"^-:\d+:\d+: E999 cannot parse", proc.stderr.decode(), re.M)


def test_stdin_keeps_crlf(run_cli_unsafe):
    proc = run_cli_unsafe("-", input=BUGGY.replace(b"\n", b"\r\n"))
    assert proc.stdout == FIXED.replace(b"\n", b"\r\n")


def test_unparsable_file_among_good_ones(tmp_path, run_cli_unsafe):
    (tmp_path / "a_good.py").write_bytes(BUGGY)
    bad = b"import torch\nfrom torch.utils.data import DataLoader\nx = torch.Generator(device='cuda'\nDataLoader(\n"
    (tmp_path / "b_bad.py").write_bytes(bad)
    (tmp_path / "c_good.py").write_bytes(BUGGY)
    proc = run_cli_unsafe("--write", ".", cwd=tmp_path)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert re.search(r"^b_bad\.py:\d+:\d+: E999 cannot parse: ", err, re.M), err
    assert "Traceback" not in err
    assert (tmp_path / "b_bad.py").read_bytes() == bad
    assert (tmp_path / "a_good.py").read_bytes() == FIXED
    assert (tmp_path / "c_good.py").read_bytes() == FIXED


def test_encodings_newlines_and_bom_are_kept(tmp_path, run_cli_unsafe):
    crlf = BUGGY.replace(b"\n", b"\r\n")
    bom = b"\xef\xbb\xbf" + BUGGY.replace(b"import torch\n", "import torch  # données\n".encode())
    latin1 = b"# -*- coding: latin-1 -*-\n" + BUGGY.replace(b"import torch\n", "import torch  # donn\xe9es\n".encode("latin-1"))
    tabs = BUGGY.replace(b"loader = DataLoader", b"if True:\n\tloader = DataLoader")
    files = {"crlf.py": crlf, "bom.py": bom, "latin1.py": latin1, "tabs.py": tabs}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    proc = run_cli_unsafe("--write", ".", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name, data in files.items():
        want = data.replace(b'torch.Generator(device="cuda")', b"torch.Generator()")
        assert (tmp_path / name).read_bytes() == want, name


def test_file_mode_is_kept(tmp_path, run_cli_unsafe):
    script = tmp_path / "train.py"
    script.write_bytes(BUGGY)
    script.chmod(0o751)
    run_cli_unsafe("--write", "train.py", cwd=tmp_path)
    assert script.read_bytes() == FIXED
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"], "a temp file was left behind"


def test_symlinked_file_is_written_through(tmp_path, run_cli_unsafe):
    real = tmp_path / "real.py"
    real.write_bytes(BUGGY)
    (tmp_path / "link.py").symlink_to(real)
    run_cli_unsafe("--write", "link.py", cwd=tmp_path)
    assert (tmp_path / "link.py").is_symlink()
    assert real.read_bytes() == FIXED


def test_select_and_ignore(tmp_path, run_cli):
    (tmp_path / "train.py").write_bytes(BUGGY)
    assert run_cli("--check", "--ignore", "DDP002", "train.py", cwd=tmp_path).returncode == 0
    assert run_cli("--check", "--select", "cuda-generator", "train.py", cwd=tmp_path).returncode == 1
    assert run_cli("--check", "--select", "DDP00", "train.py", cwd=tmp_path).returncode == 1
    bad = run_cli("--check", "--select", "DDP999", "train.py", cwd=tmp_path)
    assert bad.returncode == 2 and "no rule is called 'DDP999'" in bad.stderr.decode()


def test_list_rules_agrees_with_readme(run_cli):
    proc = run_cli("--list-rules")
    assert proc.returncode == 0
    listed = {tuple(line.split(None, 3)) for line in proc.stdout.decode().splitlines()[1:]}
    readme = (ROOT / "README.md").read_text()
    rows = {
        tuple(cell.strip().strip("`") for cell in line.strip("|").split("|"))
        for line in readme.splitlines()
        if re.match(r"^\|\s*`?DDP\d{3}", line)
    }
    assert listed == rows
    assert {code for code, *_ in listed} == {rule.code for rule in all_rules()}


def test_explain(run_cli):
    proc = run_cli("--explain", "cuda-generator")
    assert proc.returncode == 0
    text = proc.stdout.decode()
    for heading in ("## What it does", "## Why it breaks under DDP", "## Before", "## After", "## When it does not fix"):
        assert heading in text
    unknown = run_cli("--explain", "DDP999")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr.decode()


def test_bad_paths_get_one_clear_line(tmp_path, run_cli):
    (tmp_path / "blob.py").write_bytes(b"\x00\x01\x02binary\x00")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("hi")
    proc = run_cli("missing.py", "blob.py", cwd=tmp_path)
    err = proc.stderr.decode()
    assert proc.returncode == 2
    assert "missing.py: E902 no such file or directory" in err
    assert "blob.py: E902 cannot read: binary content" in err
    assert "Traceback" not in err
    empty = run_cli("empty", cwd=tmp_path)
    assert empty.returncode == 0
    assert "empty: no Python files or notebooks found" in empty.stderr.decode()


def test_usage_errors_exit_2(tmp_path, run_cli):
    (tmp_path / "train.py").write_bytes(BUGGY)
    assert run_cli("--diff", "--write", "train.py", cwd=tmp_path).returncode == 2
    proc = run_cli("--interactive", "train.py", cwd=tmp_path)
    assert proc.returncode == 2 and b"needs a terminal" in proc.stderr
    assert (tmp_path / "train.py").read_bytes() == BUGGY


def test_jobs_do_not_change_results(tmp_path, run_cli_unsafe):
    for i in range(40):
        (tmp_path / f"m{i:02d}.py").write_bytes(BUGGY if i % 3 == 0 else CLEAN)
    one = run_cli_unsafe("--diff", "--jobs", "1", ".", cwd=tmp_path)
    two = run_cli_unsafe("--diff", "--jobs", "2", ".", cwd=tmp_path)
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout and one.stderr == two.stderr
    assert one.stdout.decode().count("--- a/") == 14


def test_version(run_cli):
    proc = run_cli("--version")
    assert proc.returncode == 0 and proc.stdout.decode().startswith("ddpfix, version ")


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    command = next(line for line in readme.splitlines() if "pytest" in line and line.startswith("python"))
    assert command in (ROOT / ".ci" / "run").read_text()


def test_git_apply_accepts_bom_and_latin1_hunks_at_line_1(tmp_path, run_cli_unsafe):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    short = b'import torch\nfrom torch.utils.data import DataLoader\nDataLoader(range(3), generator=torch.Generator("cuda"))\n'
    files = {
        "bom.py": b"\xef\xbb\xbf" + short,
        "latin1.py": "# -*- coding: latin-1 -*-\n# donn\xe9es\n".encode("latin-1") + short,
        "crlf_no_eol.py": short.replace(b"\n", b"\r\n").rstrip(b"\r\n"),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    proc = run_cli_unsafe("--diff", ".", cwd=tmp_path)
    assert proc.stdout.count(b"--- a/") == 3
    (tmp_path / "fix.patch").write_bytes(proc.stdout)
    subprocess.run(["git", "apply", "fix.patch"], cwd=tmp_path, check=True)
    for name, data in files.items():
        assert (tmp_path / name).read_bytes() == data.replace(b'torch.Generator("cuda")', b"torch.Generator()"), name


def test_the_same_file_twice_is_fixed_once(tmp_path, run_cli_unsafe):
    (tmp_path / "real.py").write_bytes(BUGGY)
    (tmp_path / "link.py").symlink_to(tmp_path / "real.py")
    proc = run_cli_unsafe("--write", "--show-fixes", "real.py", "link.py", ".", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "real.py").read_bytes() == FIXED
    assert proc.stdout.decode().count("[fixed]") == 1


def test_deeply_nested_code(tmp_path, run_cli_unsafe):
    header = b"import torch\nfrom torch.utils.data import DataLoader\n"
    loader = b'DataLoader(range(3), generator=torch.Generator("cuda"))\n'
    elifs = b"x = 1\nif x == 0:\n    pass\n" + b"".join(b"elif x == %d:\n    pass\n" % i for i in range(1, 800))
    (tmp_path / "elif.py").write_bytes(header + elifs + loader)
    (tmp_path / "sum.py").write_bytes(header + b"x = " + b"+".join([b"1"] * 2000) + b"\n" + loader)
    (tmp_path / "parens.py").write_bytes(header + b"# torch.Generator(device)\nx = " + b"(" * 2000 + b"1" + b")" * 2000 + b"\n")
    proc = run_cli_unsafe("--write", ".", cwd=tmp_path)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in err
    assert re.search(r"^parens\.py:4:\d+: E999 cannot parse: too many nested parentheses", err, re.M)
    for name in ("elif.py", "sum.py"):
        assert b'torch.Generator("cuda")' not in (tmp_path / name).read_bytes()


SEED_LOG = (FIXTURES / "rank-gated-log" / "seed_pattern.py").read_bytes()
MONITORED = (FIXTURES / "rank-gated-log" / "monitored_moved_out.py").read_bytes()


def test_log_mode_sync_dist_moves_even_unmonitored_logs_out(run_cli_unsafe):
    proc = run_cli_unsafe("-", "--select", "DDP003", "--log-mode", "sync-dist", input=SEED_LOG)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert '        if self.trainer.is_global_zero:\n            self.log' not in out
    assert '        self.log("val_mean_loss", mean_loss, sync_dist=True)\n        self.val_outputs.clear()' in out


def test_log_mode_rank_zero_only_refuses_a_monitored_metric(run_cli_unsafe):
    proc = run_cli_unsafe("-", "--select", "DDP003", "--log-mode", "rank-zero-only", "--check", "-v", input=MONITORED)
    assert proc.returncode == 1
    out = proc.stdout.decode()
    assert "val_loss is monitored by EarlyStopping" in out and "use --log-mode sync-dist" in out
    assert "test_acc" in out and re.search(r"\[[*~]\]", out)  # the unmonitored one is still fixed
    bad = run_cli_unsafe("-", "--log-mode", "sometimes", input=MONITORED)
    assert bad.returncode == 2


def test_a_metric_monitored_in_another_file_of_the_run(tmp_path, run_cli_unsafe):
    shutil.copytree(FIXTURES / "rank-gated-log" / "two_files", tmp_path / "proj", ignore=shutil.ignore_patterns("*.expected.py", "*.unsafe.py"))
    # model.py named alone: its folder (no project marker above) is the program, train.py included.
    alone = run_cli_unsafe("--check", "proj/model.py", cwd=tmp_path)
    assert "val_xfile_loss is monitored" in alone.stdout.decode(), alone.stdout
    # stdin without a file name is the one partial view: nobody is seen to monitor val_xfile_loss.
    buffer = run_cli_unsafe("--check", "-", cwd=tmp_path / "proj", input=(tmp_path / "proj" / "model.py").read_bytes())
    assert "monitored" not in buffer.stdout.decode()
    together = run_cli_unsafe("--write", "--show-fixes", "-v", "proj", cwd=tmp_path)
    assert together.returncode == 0, together.stderr
    expected = Case(FIXTURES / "rank-gated-log" / "two_files" / "model.py").fully_fixed.read_bytes()
    assert (tmp_path / "proj" / "model.py").read_bytes() == expected
    assert "monitored by EarlyStopping (proj/train.py:6)" in together.stdout.decode()


def test_check_reports_positions_of_the_file_as_it_is(run_cli_unsafe, tmp_path):
    """--check applies no fix, so a finding that a fix by an earlier rule would move (here DDP001
    removes the ``with`` line above DDP002's generator) is reported where it stands in the file."""
    (tmp_path / "t.py").write_bytes(b'''import torch
import lightning as L
from torch.utils.data import DataLoader

trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp")
with trainer.init_module():
    loader = DataLoader(range(10), batch_size=2)
    dm = DataLoader(range(10), generator=torch.Generator(device="cuda"))
trainer.fit(model, loader)
''')
    proc = run_cli_unsafe("--check", "t.py", cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stdout.decode().splitlines()
    assert [line.split(" ")[0] + " " + line.split(" ")[1] for line in lines] == ["t.py:6:1: DDP001", "t.py:8:42: DDP002"]
    assert "Would fix 2 issues in 1 file." in proc.stderr.decode()
    write = run_cli_unsafe("--write", "t.py", cwd=tmp_path)
    assert write.returncode == 0 and "Fixed 2 issues in 1 file." in write.stderr.decode()


def test_ruffs_spellings_mean_what_they_mean_in_ruff(tmp_path):
    """Through the real executable: ``check`` lists findings and writes nothing, ``check --fix``
    writes, ``--fix`` is ``--write``, ``rule`` explains, ``format`` says in one line that there is no
    such command (not E902), and a path named like a command is still a path."""
    import subprocess

    from conftest import ddpfix_executable

    buggy = b'import torch\nfrom torch.utils.data import DataLoader\nDataLoader(range(3), generator=torch.Generator("cuda"))\n'
    target = tmp_path / "train.py"

    def ddpfix(*args, cwd=tmp_path):
        return subprocess.run([ddpfix_executable(), *args], capture_output=True, text=True, cwd=cwd,
                              env=dict(__import__("os").environ, NO_COLOR="1"))

    target.write_bytes(buggy)
    run = ddpfix("check", "train.py")
    assert run.returncode == 1 and "train.py:3:" in run.stdout and target.read_bytes() == buggy
    run = ddpfix("check", "--fix", "--unsafe-fixes", "train.py")
    assert run.returncode == 0 and target.read_bytes() != buggy
    target.write_bytes(buggy)
    run = ddpfix("--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", "train.py")
    assert run.returncode == 1 and "Fixed 1 issue" in run.stderr and target.read_bytes() != buggy
    assert ddpfix("rule", "DDP002").stdout.startswith("# DDP002 cuda-generator")
    run = ddpfix("format", "train.py")
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "no `format` command" in run.stderr
    assert "E902" not in run.stderr
    (tmp_path / "format").mkdir()  # a folder of that name: the word names it
    assert ddpfix("format").returncode == 0
    run = ddpfix("check", "--show-files", ".")
    assert run.returncode == 0 and run.stdout.split() == ["train.py"]


def test_translate_keeps_what_follows_a_double_dash():
    from ddpfix.spellings import translate

    assert translate(["check", "--fix", "--", "--fix"]) == ["--write", "--", "--fix"]
    assert translate(["check", "src"]) == ["--check", "src"]
    assert translate(["check", "--diff", "src"]) == ["--diff", "src"]
    assert translate(["rule", "--all"]) == ["--list-rules"]
    assert translate(["server"]) == ["lsp"]
    assert translate(["--fix-only", "x.py"]) == ["--write", "--exit-zero", "x.py"]


def test_a_notebooks_diff_is_per_cell_unless_asked_for_its_json(tmp_path, run_cli_unsafe):
    """As Ruff shows them: a header per changed code cell (``path:cell N``, N as findings count
    cells) and that cell's source lines; ``--notebook-diff json`` gives the .ipynb's own diff."""
    import shutil

    from conftest import ROOT

    shutil.copy(ROOT / "fixtures" / "notebook-strategy" / "cell_magics.ipynb", tmp_path / "nb.ipynb")
    cells = run_cli_unsafe("--diff", "nb.ipynb", cwd=tmp_path).stdout.decode()
    assert "--- nb.ipynb:cell 2\n+++ nb.ipynb:cell 2\n@@ " in cells
    assert '-trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp")\n' in cells
    assert '+trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp_notebook")\n' in cells
    assert '"source"' not in cells and "No newline" not in cells
    raw = run_cli_unsafe("--diff", "--notebook-diff", "json", "nb.ipynb", cwd=tmp_path).stdout.decode()
    assert raw.startswith("--- a/nb.ipynb\n+++ b/nb.ipynb\n") and "ddp_notebook" in raw


def test_watch_checks_again_when_a_file_changes(tmp_path):
    """``--watch`` (Ruff's): a check now, another after a file under the path changes; Ctrl-C ends
    it with status 0."""
    import signal
    import time

    from conftest import ddpfix_executable

    (tmp_path / "train.py").write_text("import torch\n")
    from conftest import default_sigint

    proc = subprocess.Popen([ddpfix_executable(), "--watch", "--no-color", "."], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, preexec_fn=default_sigint)
    try:
        lines = []

        def wait_for(text, seconds=60):
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                line = proc.stdout.readline()
                lines.append(line)
                if text in line:
                    return
            raise AssertionError(f"{text!r} not seen in {lines}")

        wait_for("Watching for changes")
        (tmp_path / "train.py").write_bytes(BUGGY)
        wait_for("train.py:4:5: DDP002")
        wait_for("Watching for changes")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()


def test_the_quick_start_demo_shows_its_findings_its_diff_and_one_summary_line(run_cli, tmp_path):
    """README's first command: the findings the diff fixes on stderr (--show-fixes), the patch alone
    on stdout, one summary line; nothing written."""
    demo = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo", demo)
    before = (demo / "train.py").read_bytes()
    proc = run_cli("--diff", "--show-fixes", ".", cwd=demo)
    err, out = proc.stderr.decode(), proc.stdout.decode()
    assert proc.returncode == 1
    assert [line.split()[1] for line in err.splitlines() if ": DDP" in line] == ["DDP004", "DDP003", "DDP002"]
    assert err.strip().splitlines()[-1].startswith("Would fix 3 issues in 1 file.")
    assert out.startswith("--- a/train.py") and "DDP0" not in out
    assert (demo / "train.py").read_bytes() == before
    plain = run_cli("--diff", ".", cwd=demo)
    assert ": DDP" not in plain.stderr.decode()  # without --show-fixes only what the patch leaves
