"""[tool.ddpfix] in pyproject.toml, through the real command line."""

from __future__ import annotations

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
