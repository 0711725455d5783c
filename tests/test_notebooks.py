"""Jupyter notebooks through the real command line: discovery, cell places, exact JSON write-back."""

from __future__ import annotations

import json
import re
import shutil

from conftest import FIXTURES
from fixture_cases import Case

NOTEBOOKS = FIXTURES / "notebook-strategy"


def notebook(cells, indent=1, trailing="\n", as_list=True, ensure_ascii=False, **json_options):
    content = {
        "cells": [
            {"cell_type": "code", "execution_count": 1, "id": f"c{i}", "metadata": {},
             "outputs": [{"output_type": "stream", "name": "stdout", "text": ["done ✓\n"]}],
             "source": source.splitlines(True) if as_list else source}
            for i, source in enumerate(cells)
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}, "zeta": 1, "alpha": [1.5e-05, 2]},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return (json.dumps(content, indent=indent, ensure_ascii=ensure_ascii, **json_options) + trailing).encode()


def either_mark(text: str) -> str:
    """Finding lines with every fix marked ``[*]`` and no unsafe reason: these tests are about cells
    and places, whatever the applicability of the fix."""
    return re.sub(r" \(unsafe fix: [^)]*\)$", "", text.replace(" [~] ", " [*] "), flags=re.M)


BUGGY = ["import lightning as L", 'trainer = L.Trainer(devices=2, strategy="ddp")\ntrainer.fit(model)']


def test_folders_yield_notebooks_but_not_checkpoints(tmp_path, run_cli_unsafe):
    (tmp_path / "nb.ipynb").write_bytes(notebook(BUGGY))
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "nb-checkpoint.ipynb").write_bytes(notebook(BUGGY))
    proc = run_cli_unsafe("--check", ".", cwd=tmp_path)
    assert proc.returncode == 1
    assert either_mark(proc.stdout.decode()).splitlines() == [
        "nb.ipynb:cell 2:1:32: DDP015 [*] Trainer(strategy='ddp') in a notebook: Lightning refuses it in an "
        "interactive environment ('not compatible with an interactive environment'); use 'ddp_notebook'"
    ]


def test_write_changes_only_the_cell_source(tmp_path, run_cli_unsafe):
    path = tmp_path / "nb.ipynb"
    original = notebook(BUGGY)
    path.write_bytes(original)
    proc = run_cli_unsafe("--write", "nb.ipynb", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert path.read_bytes() == original.replace(b'strategy=\\"ddp\\")', b'strategy=\\"ddp_notebook\\")')
    # and the next run has nothing to do
    assert run_cli_unsafe("--write", "nb.ipynb", cwd=tmp_path).returncode == 0
    assert path.read_bytes() == original.replace(b'strategy=\\"ddp\\")', b'strategy=\\"ddp_notebook\\")')


def test_layouts_are_kept(tmp_path, run_cli_unsafe):
    variants = {
        "indent2.ipynb": notebook(BUGGY, indent=2),
        "no_newline.ipynb": notebook(BUGGY, trailing=""),
        "string_source.ipynb": notebook(BUGGY, as_list=False),
        "ascii.ipynb": notebook(BUGGY, ensure_ascii=True),
    }
    for name, data in variants.items():
        (tmp_path / name).write_bytes(data)
    proc = run_cli_unsafe("--write", ".", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name, data in variants.items():
        assert (tmp_path / name).read_bytes() == data.replace(b'\\"ddp\\"', b'\\"ddp_notebook\\"'), name


def test_a_layout_that_cannot_be_kept_is_not_written(tmp_path, run_cli_unsafe):
    path = tmp_path / "compact.ipynb"
    original = notebook(BUGGY, indent=None, separators=(",", ":"))
    path.write_bytes(original)
    proc = run_cli_unsafe("--write", "compact.ipynb", cwd=tmp_path)
    assert path.read_bytes() == original
    assert proc.returncode == 1
    assert "note: fixes not written: re-saving this notebook would change its formatting" in proc.stderr.decode()


def test_magics_are_masked_and_restored(tmp_path, run_cli_unsafe):
    shutil.copy(NOTEBOOKS / "magics_and_other_rules.ipynb", tmp_path / "nb.ipynb")
    proc = run_cli_unsafe("--write", "nb.ipynb", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.decode()
    assert "nb.ipynb:cell 2:1:1: note: cell skipped: %%bash: the body of this cell magic is not Python" in err
    assert "cell 3" not in err  # ``files = !ls`` is masked: the rest of the cell is linted
    cells = json.loads((tmp_path / "nb.ipynb").read_text())["cells"]
    assert cells[0]["source"][:2] == ["%load_ext autoreload\n", "%autoreload 2\n"]
    assert cells[1]["source"][0] == "%%bash\n" and cells[2]["source"][0] == "files = !ls\n"
    assert (tmp_path / "nb.ipynb").read_bytes() == Case(NOTEBOOKS / "magics_and_other_rules.ipynb").fully_fixed.read_bytes()


def test_findings_name_the_cell_in_every_format(tmp_path, run_cli_unsafe):
    shutil.copy(NOTEBOOKS / "magics_and_other_rules.ipynb", tmp_path / "nb.ipynb")
    text = run_cli_unsafe("--check", "nb.ipynb", cwd=tmp_path).stdout.decode()
    text = either_mark(text)
    assert "nb.ipynb:cell 4:5:13: DDP003 [*]" in text
    # a message that points at another line points into the notebook's cells
    assert "nb.ipynb:cell 5:1:64: DDP002 [*] CUDA generator reaches DataLoader (cell 5 line 1)" in text
    records = json.loads(run_cli_unsafe("--output-format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    findings = [r for r in records if r["code"].startswith("DDP")]
    assert {(r["code"], r["cell"], r["line"]) for r in findings} == {("DDP003", 4, 5), ("DDP002", 5, 1), ("DDP015", 5, 2)}
    notes = [r for r in records if r["name"] == "note"]
    assert [n["cell"] for n in notes] == [2]
    github = run_cli_unsafe("--output-format", "github", "nb.ipynb", cwd=tmp_path).stdout.decode()
    assert "::warning file=nb.ipynb,line=5,col=13,title=DDP003 (cell 4)::" in github


def test_each_json_edit_reproduces_one_fix(tmp_path, run_cli):
    path = tmp_path / "nb.ipynb"
    shutil.copy(NOTEBOOKS / "fabric_spawn.ipynb", path)
    records = json.loads(run_cli("--output-format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    assert len(records) == 2
    original = path.read_text()
    for record in records:
        [edit] = record["fix"]
        lines = original.splitlines(keepends=True)
        start = sum(map(len, lines[: edit["line"] - 1])) + edit["column"] - 1
        end = sum(map(len, lines[: edit["end_line"] - 1])) + edit["end_column"] - 1
        fixed = original[:start] + edit["content"] + original[end:]
        json.loads(fixed)  # still a notebook
        assert fixed != original


def test_a_broken_notebook_is_an_error_and_untouched(tmp_path, run_cli):
    path = tmp_path / "broken.ipynb"
    path.write_bytes(b'{"cells": [')
    proc = run_cli("--write", "broken.ipynb", cwd=tmp_path)
    assert proc.returncode == 2
    assert "broken.ipynb: E902 cannot read notebook: invalid JSON" in proc.stderr.decode()
    assert path.read_bytes() == b'{"cells": ['


def test_a_notebook_of_another_language_is_left_alone(tmp_path, run_cli):
    shutil.copy(NOTEBOOKS / "other_kernel.ipynb", tmp_path / "r.ipynb")
    proc = run_cli("--check", "r.ipynb", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == b""


def test_a_script_keeps_its_ddp_strategy(tmp_path, run_cli):
    (tmp_path / "train.py").write_text('import lightning as L\ntrainer = L.Trainer(devices=2, strategy="ddp")\n')
    assert run_cli("--check", "train.py", cwd=tmp_path).returncode == 0


def test_stdin_buffer_of_a_notebook(tmp_path, run_cli_unsafe):
    data = notebook(BUGGY)
    proc = run_cli_unsafe("-", "--stdin-filename", "nb.ipynb", input=data, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == data.replace(b'\\"ddp\\"', b'\\"ddp_notebook\\"')
