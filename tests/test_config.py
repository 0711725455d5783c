"""[tool.ddpfix] in pyproject.toml, through the real command line."""

from __future__ import annotations

import re
import shutil

BUGGY = b'import torch\nfrom torch.utils.data import DataLoader\nDataLoader(range(3), generator=torch.Generator("cuda"))\n'


def project(tmp_path, config: str):
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'x'\n\n[tool.ddpfix]\n{config}")
    (tmp_path / "pkg").mkdir(exist_ok=True)
    (tmp_path / "pkg" / "train.py").write_bytes(BUGGY)
    (tmp_path / "gen").mkdir(exist_ok=True)
    (tmp_path / "gen" / "made.py").write_bytes(BUGGY)
    return tmp_path


def test_ignore_and_command_line_select_wins(tmp_path, run_cli):
    project(tmp_path, 'ignore = ["DDP002"]\n')
    assert run_cli("--check", "pkg/train.py", cwd=tmp_path).returncode == 0
    proc = run_cli("--check", "--select", "cuda-generator", "pkg/train.py", cwd=tmp_path)
    assert proc.returncode == 1 and b"DDP002" in proc.stdout


def test_found_above_the_path_and_extend_exclude(tmp_path, run_cli):
    project(tmp_path, 'extend-exclude = ["gen/"]\nlog-mode = "sync-dist"\njobs = 1\n')
    proc = run_cli("--check", ".", cwd=tmp_path)
    assert b"pkg/train.py" in proc.stdout and b"gen/made.py" not in proc.stdout
    proc = run_cli("--check", str(tmp_path / "pkg"), cwd="/")
    assert proc.returncode == 1  # the config of the path's project, not of the current directory


def test_stdin_respects_the_config_of_its_file_name(tmp_path, run_cli):
    project(tmp_path, 'ignore = ["DDP002"]\n')
    proc = run_cli("-", "--stdin-filename", str(tmp_path / "pkg" / "train.py"), input=BUGGY)
    assert proc.returncode == 0 and proc.stdout == BUGGY


def test_errors_name_the_key_and_the_file(tmp_path, run_cli):
    for config, words in [
        ('ignor = ["DDP002"]\n', "unknown key 'ignor'"),
        ('select = ["DDP999"]\n', "no rule is called 'DDP999'"),
        ('log-mode = "often"\n', "log-mode must be one of"),
        ("jobs = 0\n", "jobs must be a positive integer"),
    ]:
        project(tmp_path, config)
        proc = run_cli("--check", "pkg", cwd=tmp_path)
        err = proc.stderr.decode()
        assert proc.returncode == 2, config
        assert words in err and "pyproject.toml" in err and "Traceback" not in err


def test_explicit_config_file(tmp_path, run_cli):
    project(tmp_path, "")
    (tmp_path / "other.toml").write_text('[tool.ddpfix]\nignore = ["DDP002"]\n')
    assert run_cli("--check", "--config", "other.toml", "pkg", cwd=tmp_path).returncode == 0


SUPPRESSED = b'''import torch
from torch.utils.data import DataLoader

a = DataLoader(  # noqa: DDP002
    range(3),
    generator=torch.Generator("cuda"),
)
b = DataLoader(range(3), generator=torch.Generator("cuda"))  # ddpfix: ignore
c = DataLoader(range(3), generator=torch.Generator("cuda"))  # noqa: DDP001, DDP003
d = DataLoader(range(3), generator=torch.Generator("cuda"))  # noqa
s = "# noqa"; e = DataLoader(range(3), generator=torch.Generator("cuda"))
'''


def test_suppressions_and_show_suppressed(tmp_path, run_cli):
    (tmp_path / "train.py").write_bytes(SUPPRESSED)
    proc = run_cli("--check", "train.py", cwd=tmp_path)
    lines = proc.stdout.decode().splitlines()
    # Only c (other codes silenced) and e (the "noqa" is in a string) are reported.
    assert [line.split(":")[1] for line in lines] == ["9", "11"]
    shown = run_cli("--check", "--show-suppressed", "train.py", cwd=tmp_path).stdout.decode()
    assert shown.count("[suppressed]") == 3
    assert run_cli("--write", "--unsafe-fixes", "train.py", cwd=tmp_path).returncode == 0
    fixed = (tmp_path / "train.py").read_bytes()
    assert fixed.count(b'torch.Generator("cuda")') == 3  # the suppressed ones are untouched


def subprojects(tmp_path):
    """Two subprojects with their own settings, a buggy file (DDP002) and a rank-gated log (DDP003,
    nothing monitors it) in each."""
    from test_precommit import MODEL

    for name, config in [("a", 'ignore = ["DDP002"]\nextend-exclude = ["gen/"]\n'),
                         ("b", 'unsafe-fixes = true\nlog-mode = "sync-dist"\n')]:
        (tmp_path / name / "gen").mkdir(parents=True)
        (tmp_path / name / "pyproject.toml").write_text(f"[project]\nname = '{name}'\n\n[tool.ddpfix]\n{config}")
        (tmp_path / name / "x.py").write_bytes(BUGGY)
        (tmp_path / name / "gen" / "made.py").write_bytes(BUGGY)
        (tmp_path / name / "model.py").write_bytes(MODEL)
    return tmp_path


def test_each_file_takes_its_nearest_settings_whatever_the_order(tmp_path, run_cli):
    subprojects(tmp_path)
    first = run_cli("--check", "a/x.py", "b/x.py", cwd=tmp_path)
    second = run_cli("--check", "b/x.py", "a/x.py", cwd=tmp_path)
    assert first.stdout == second.stdout and first.returncode == second.returncode == 1
    assert b"b/x.py:3:32: DDP002" in first.stdout and b"a/x.py" not in first.stdout
    as_json = [run_cli("--check", "--output-format", "json", *order, cwd=tmp_path).stdout
               for order in (["a", "b"], ["b", "a"])]
    assert as_json[0] == as_json[1] and b'"b/x.py"' in as_json[0] and b'"a/x.py"' not in as_json[0]
    # Each subproject's own excludes, walking from above them both.
    walked = run_cli("--check", ".", cwd=tmp_path).stdout
    assert b"b/gen/made.py" in walked and b"a/gen/made.py" not in walked and b"a/x.py" not in walked
    # --config decides for every file; a command-line flag wins over the file.
    assert run_cli("--check", "--config", "a/pyproject.toml", "b/x.py", "a/x.py", cwd=tmp_path).returncode == 0
    assert b"a/x.py:3:32: DDP002" in run_cli("--check", "--select", "DDP002", "b/x.py", "a/x.py", cwd=tmp_path).stdout
    # Written in either order, each file as its own settings say (b: unsafe fixes on).
    # Written in either order, each file as its own settings say (b: unsafe fixes on; its log-mode).
    for order in (["a/x.py", "b/x.py", "a/model.py", "b/model.py"], ["b/model.py", "b/x.py", "a/model.py", "a/x.py"]):
        copy = tmp_path.parent / f"copy-{order[0][0]}"
        shutil.copytree(tmp_path, copy)
        run_cli("--write", *order, cwd=copy)
        assert (copy / "a" / "x.py").read_bytes() == BUGGY
        assert b'torch.Generator("cuda")' not in (copy / "b" / "x.py").read_bytes()
        assert b'self.log("val_loss", loss, rank_zero_only=True)' in (copy / "a" / "model.py").read_bytes()
        assert b'        self.log("val_loss", loss, sync_dist=True)' in (copy / "b" / "model.py").read_bytes()


def test_show_settings_says_what_applies_and_where_it_comes_from(tmp_path, run_cli):
    subprojects(tmp_path)
    proc = run_cli("--show-settings", "a/x.py", "b/gen/made.py", "a/gen", cwd=tmp_path)
    assert proc.returncode == 0 and not proc.stderr
    blocks = dict(re.findall(r"^(\S.*):\n((?:  .*\n?)*)", proc.stdout.decode(), re.M))
    assert list(blocks) == ["a/x.py", "b/gen/made.py", "a/gen"]
    a, b, gen = blocks.values()
    assert "settings from: a/pyproject.toml" in a and "DDP002" not in re.search("rules = .*", a).group()
    assert "settings from: b/pyproject.toml" in b and "unsafe-fixes = true" in b and "DDP002" in b
    assert "excluded = no" in a and 'excluded = pattern "gen/" of a/pyproject.toml' in gen
    elsewhere = run_cli("--show-settings", "x.py", cwd=tmp_path / "a" / "gen")
    assert "settings from: ../pyproject.toml" in elsewhere.stdout.decode()
    assert "defaults" in run_cli("--show-settings", ".", cwd=tmp_path).stdout.decode()


def test_a_folder_named_that_is_excluded_is_said(tmp_path, run_cli):
    subprojects(tmp_path)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "x.py").write_bytes(BUGGY)
    # Named, so checked (as Ruff), with a note that says it is excluded.
    for folder, reason in [("build", 'default exclude "build"'), ("a/gen", 'pattern "gen/" of a/pyproject.toml')]:
        proc = run_cli("--check", "--select", "DDP002", folder, cwd=tmp_path)
        assert proc.returncode == 1 and f"{folder}/".encode() in proc.stdout, proc.stderr
        assert f"note: {folder}: checked because it was named, although excluded ({reason})" in proc.stderr.decode()
        # --force-exclude: skipped, with a warning (shown even with --quiet).
        proc = run_cli("--check", "--quiet", "--force-exclude", folder, cwd=tmp_path)
        assert proc.returncode == 0 and not proc.stdout
        assert f"warning: {folder}: excluded ({reason}), so not checked" in proc.stderr.decode()
    # A file named: checked, unless --force-exclude (then silently left out, as pre-commit names every staged file).
    assert run_cli("--check", "--select", "DDP002", "a/gen/made.py", cwd=tmp_path).returncode == 1
    proc = run_cli("--check", "--force-exclude", "a/gen/made.py", "b/gen/made.py", cwd=tmp_path)
    assert b"b/gen/made.py" in proc.stdout and b"a/gen/made.py" not in proc.stdout + proc.stderr
    # stdin standing for an excluded file: checked, unless --force-exclude (then echoed as it is).
    named = ["-", "--select", "DDP002", "--stdin-filename", "a/gen/made.py"]
    assert run_cli(*named, cwd=tmp_path, input=BUGGY).stdout != BUGGY
    proc = run_cli(*named, "--force-exclude", cwd=tmp_path, input=BUGGY)
    assert proc.returncode == 0 and proc.stdout == BUGGY


def test_per_file_ignores_skip_rules_for_the_files_a_pattern_matches(tmp_path):
    """Ruff's ``per-file-ignores``: patterns relative to the table's folder, codes, prefixes or
    names; the files it matches are checked without those rules, the others with them; an unknown
    rule is an error naming the key and the file; --show-settings says it."""
    import subprocess

    from conftest import ddpfix_executable

    buggy = b'import torch\nfrom torch.utils.data import DataLoader\nDataLoader(range(3), generator=torch.Generator("cuda"))\n'
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "old.py").write_bytes(buggy)
    (tmp_path / "train.py").write_bytes(buggy)
    (tmp_path / "pyproject.toml").write_text('[tool.ddpfix]\nper-file-ignores = { "scripts/*" = ["DDP002"] }\n')

    def ddpfix(*args):
        return subprocess.run([ddpfix_executable(), "--no-color", *args], cwd=tmp_path, capture_output=True, text=True)

    run = ddpfix("--check", ".")
    assert "train.py:3:" in run.stdout and "scripts/old.py" not in run.stdout, run.stdout
    assert "scripts/old.py" not in ddpfix("--check", "scripts/old.py").stdout  # named alone, the same
    assert "per-file-ignores = {'scripts/*': ['DDP002']}" in ddpfix("--show-settings", "scripts/old.py").stdout
    (tmp_path / "pyproject.toml").write_text('[tool.ddpfix]\nper-file-ignores = { "scripts/*" = ["XYZ9"] }\n')
    run = ddpfix("--check", ".")
    assert run.returncode == 2 and "per-file-ignores 'scripts/*': no rule is called 'XYZ9'" in run.stderr


def test_config_key_value_overrides_every_table_as_ruffs(tmp_path):
    import subprocess

    from conftest import ddpfix_executable

    buggy = b'import torch\nfrom torch.utils.data import DataLoader\nDataLoader(range(3), generator=torch.Generator("cuda"))\n'
    (tmp_path / "train.py").write_bytes(buggy)
    (tmp_path / "pyproject.toml").write_text('[tool.ddpfix]\nselect = ["DDP002", "DDP003"]\n')

    def ddpfix(*args):
        return subprocess.run([ddpfix_executable(), "--no-color", *args], cwd=tmp_path, capture_output=True, text=True)

    assert "DDP002" in ddpfix("--check", "train.py").stdout
    run = ddpfix("--check", "--config", 'ignore = ["DDP002"]', "train.py")
    assert run.returncode == 0 and run.stdout == ""
    shown = ddpfix("--show-settings", "--config", 'ignore = ["DDP002"]', "train.py").stdout
    assert "settings from: pyproject.toml, then --config ignore = [\"DDP002\"]" in shown and "rules = [DDP003]" in shown
    run = ddpfix("--check", "--config", 'ignor = ["DDP002"]', "train.py")
    assert run.returncode == 2 and "--config: unknown key 'ignor'" in run.stderr
    run = ddpfix("--check", "--config", "ignore = [", "train.py")
    assert run.returncode == 2 and "not a TOML `KEY = VALUE`" in run.stderr
