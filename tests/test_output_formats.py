"""--output-format json and github, through the real command line."""

from __future__ import annotations

import json
import shutil

from conftest import FIXTURES
from fixture_cases import Case


def apply_edits(text: str, edits: list[dict]) -> str:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    for edit in sorted(edits, key=lambda e: (e["line"], e["column"]), reverse=True):
        start = offsets[edit["line"] - 1] + edit["column"] - 1
        end = offsets[edit["end_line"] - 1] + edit["end_column"] - 1
        text = text[:start] + edit["content"] + text[end:]
    return text


def test_json_is_one_valid_array_whose_edits_reproduce_the_fix(tmp_path, run_cli):
    shutil.copytree(FIXTURES / "cuda-generator", tmp_path / "cases")
    proc = run_cli("--output-format", "json", "cases", cwd=tmp_path)
    assert proc.returncode == 1
    records = json.loads(proc.stdout)
    keys = {"path", "line", "column", "end_line", "end_column", "code", "name", "message", "detail", "fixable", "applicability",
            "unsafe_reason", "fixed", "suppressed", "cell", "fix"}
    assert records and all(set(r) == keys for r in records)
    assert not any(r["fixed"] for r in records)  # nothing was written
    single = [r for r in records if r["path"] == "cases/seed_pattern.py"]
    assert len(single) == 1 and single[0]["fixable"] and len(single[0]["fix"]) == 1
    assert single[0]["applicability"] in ("safe", "unsafe")
    source = (tmp_path / "cases" / "seed_pattern.py").read_text()
    expected = Case(FIXTURES / "cuda-generator" / "seed_pattern.py").fully_fixed.read_text()
    assert apply_edits(source, single[0]["fix"]) == expected
    manual = [r for r in records if r["path"] == "cases/variable_device.py"]
    assert manual and not manual[0]["fixable"] and manual[0]["fix"] == [] and manual[0]["applicability"] is None


def test_json_edits_count_code_points_of_the_source_as_python_reads_it(tmp_path, run_cli):
    # A BOM and "é" before the fix on line 1: a plain UTF-8 decode would place the edit one column
    # late; the Latin-1 file's "é" is one byte, which UTF-8 would turn into a replacement character.
    source = (
        'import torch; gé = torch.Generator(device="cuda")\n'
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(range(8), shuffle=True, generator=gé)\n"
    )
    expected = source.replace('torch.Generator(device="cuda")', "torch.Generator()")
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + source.encode())
    latin = "# -*- coding: latin-1 -*-\n" + source.replace("gé", "g").replace("(8)", '(8), name="café"', 1)
    (tmp_path / "latin.py").write_bytes(latin.encode("latin-1"))
    records = json.loads(run_cli("--output-format", "json", "bom.py", "latin.py", cwd=tmp_path).stdout)
    by_path = {r["path"]: r for r in records}
    assert apply_edits(source, by_path["bom.py"]["fix"]) == expected
    latin_expected = latin.replace('torch.Generator(device="cuda")', "torch.Generator()")
    assert apply_edits(latin, by_path["latin.py"]["fix"]) == latin_expected


def test_json_for_no_files_and_for_errors(tmp_path, run_cli):
    (tmp_path / "ok.py").write_text("x = 1\n")
    assert json.loads(run_cli("--output-format", "json", "ok.py", cwd=tmp_path).stdout) == []
    (tmp_path / "bad.py").write_text("from torch.utils.data import DataLoader\ng = torch.Generator(\n")
    proc = run_cli("--output-format", "json", "bad.py", cwd=tmp_path)
    [record] = json.loads(proc.stdout)
    assert proc.returncode == 2 and record["code"] == "E999" and record["line"] == 2


def test_github_annotations(tmp_path, run_cli):
    shutil.copy(FIXTURES / "cuda-generator" / "seed_pattern.py", tmp_path / "train.py")
    proc = run_cli("--output-format", "github", "train.py", cwd=tmp_path)
    [line] = proc.stdout.decode().splitlines()
    assert line.startswith("::warning file=train.py,line=7,col=5,title=DDP002::CUDA generator")
    assert run_cli("--output-format", "github", "--diff", "train.py", cwd=tmp_path).returncode == 2
