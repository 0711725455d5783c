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
        "nb.ipynb:cell 2:1:32: DDP015 [*] Trainer(strategy='ddp') in a notebook: use 'ddp_notebook'"
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
    # GitHub places an annotation in the file's text: the .ipynb line where cell 4's line 5 stands
    assert "::warning file=nb.ipynb,line=58,endLine=58,col=18,endColumn=48,title=DDP003 (cell 4 line 5)::" in github


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


# IPython syntax (docs/notebooks.md, "IPython syntax")

DDP = 'L.Trainer(devices=2, strategy="ddp")'


def test_cells_under_a_python_cell_magic_are_linted_in_place(tmp_path, run_cli):
    shutil.copy(NOTEBOOKS / "cell_magics.ipynb", tmp_path / "nb.ipynb")
    proc = run_cli("--check", "nb.ipynb", cwd=tmp_path)
    assert proc.returncode == 1
    places = [line.split(": DDP015")[0] for line in proc.stdout.decode().splitlines()]
    # %%time, %%capture + %%time, %%prun, assignments from the shell / a magic and help lines, an
    # indented escape, a continued shell line, a string holding '%' lines; the %%timeit cell (4),
    # whose body runs many times inside a function, is left out with a note
    assert places == ["nb.ipynb:cell 2:3:51", "nb.ipynb:cell 3:3:22", "nb.ipynb:cell 5:2:22",
                      "nb.ipynb:cell 6:9:32", "nb.ipynb:cell 7:4:29", "nb.ipynb:cell 8:5:5", "nb.ipynb:cell 9:6:22"]
    err = proc.stderr.decode()
    assert "nb.ipynb:cell 4:1:1: note: cell skipped: %%timeit: the body runs many times inside a function" in err, err
    assert err.splitlines()[-1].startswith("Would fix 7 issues"), err


def test_cell_magics_whose_body_the_kernel_does_not_run_are_left_out(tmp_path, run_cli):
    shutil.copy(NOTEBOOKS / "cell_magics_not_run_by_the_kernel.ipynb", tmp_path / "nb.ipynb")
    proc = run_cli("--check", "nb.ipynb", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == b""
    notes = [line for line in proc.stderr.decode().splitlines() if "note: cell skipped" in line]
    assert [note.split(": the body")[0].split("skipped: ")[1] for note in notes] == [
        "%%bash", "%%writefile", "%%python3", "%%script", "%%sql", "%%memit", "%%timeit"]  # %%timeit then %%bash


def test_no_finding_in_a_masked_line(tmp_path, run_cli):
    (tmp_path / "nb.ipynb").write_bytes(notebook(["import lightning as L", f"t = %time {DDP}\n%timeit {DDP}\n!echo {DDP}"]))
    proc = run_cli("--check", "nb.ipynb", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"No DDP issues found in 1 file.\n")


IPYTHON_CELLS = [
    "%matplotlib inline\n%config InlineBackend.figure_format = 'retina'",
    "%%time\nx = 1\n",
    "%%prun -l 3 -s cumulative\ny = [0] * 10\nsum(y)\r\n",
    "%%capture captured --no-stderr\n%%time\n!nvidia-smi\n",
    "\n%%prun -s cumulative\nfiles = !ls -la\nsizes = !!du -sh .",
    "%%debug --breakpoint x.py:1\nprint(1)",
    "x = %env HOME\nt = %timeit -o sum(range(3))\nlen?\n?len\nlen??\n%pinfo len\n/print 1 2\n,print a b\n;print a b",
    "for i in range(2):\n    !echo {i}\n    %time print(i)\n    pass",
    "!pip install \\\n    lightning \\\n    torch\nimport os",
    'text = """\n%not a magic\n!nor this\n"""\n%who',
    "values = [\n    1,\n]\n%whos\x0c\nprint('form feed above')",
    "a: list = !ls\nb, c = %sx echo 1\n",
]


def test_cells_with_ipython_syntax_come_back_byte_for_byte(tmp_path, run_cli):
    """Each cell of IPython syntax gets a fixable line: its magics must survive the fix exactly."""
    cells = ["import lightning as L"] + [f"{cell.rstrip()}\n{DDP}" if not cell.startswith("for") else
                                         f"{cell}\n    {DDP}" for cell in IPYTHON_CELLS]
    original = notebook(cells)
    (tmp_path / "nb.ipynb").write_bytes(original)
    proc = run_cli("--write", "nb.ipynb", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.decode().startswith(f"Fixed {len(IPYTHON_CELLS)} issues"), proc.stderr
    assert (tmp_path / "nb.ipynb").read_bytes() == original.replace(b'\\"ddp\\")', b'\\"ddp_notebook\\")')


def test_cells_with_ipython_syntax_and_no_finding_are_not_touched(tmp_path, run_cli):
    original = notebook(["import lightning as L", *IPYTHON_CELLS, DDP], as_list=False)
    (tmp_path / "nb.ipynb").write_bytes(original)
    assert run_cli("--write", "nb.ipynb", cwd=tmp_path).returncode == 0
    fixed = json.loads((tmp_path / "nb.ipynb").read_bytes())
    assert [cell["source"] for cell in fixed["cells"][1:-1]] == IPYTHON_CELLS
    assert fixed["cells"][-1]["source"] == DDP.replace('"ddp"', '"ddp_notebook"')


def ipython_lines(data: bytes) -> list[tuple[int, str]]:
    """The lines of a notebook's code cells that look like IPython syntax, found without ddpfix's
    classifier: a differential check of what a fix did to them."""
    found = []
    for number, cell in enumerate(json.loads(data)["cells"], start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        for line in source.split("\n"):
            bare = line.strip()
            if bare[:1] in ("%", "!", "?", "/", ",", ";") or bare.endswith("?") or re.search(r"=\s*[%!]", bare):
                found.append((number, line))
    return found


def test_fixed_notebooks_keep_their_ipython_lines(tmp_path, run_cli_unsafe):
    """Every notebook fixture, fixed with every fix, keeps each line of IPython syntax in place."""
    inputs = [Case(p) for p in sorted(FIXTURES.rglob("*.ipynb")) if not p.stem.endswith((".expected", ".unsafe"))]
    for case in inputs:
        shutil.copy(case.input, tmp_path / f"{len(list(tmp_path.iterdir()))}.ipynb")
    run_cli_unsafe("--write", ".", cwd=tmp_path)
    for number, case in enumerate(inputs):
        before = ipython_lines(case.input.read_bytes())
        assert ipython_lines((tmp_path / f"{number}.ipynb").read_bytes()) == before, case.id
        if case.fully_fixed is not None:
            assert ipython_lines(case.fully_fixed.read_bytes()) == before, case.id
    assert sum(map(bool, map(ipython_lines, (c.input.read_bytes() for c in inputs)))) >= 4  # the check has lines to check


# Notebooks of unexpected shape (docs/notebooks.md, "Broken and hostile notebooks")

def raw_notebook(cells, metadata=None) -> bytes:
    return (json.dumps({"cells": cells, "metadata": metadata if metadata is not None else {},
                        "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n").encode()


def code_cell(source) -> dict:
    return {"cell_type": "code", "metadata": {}, "outputs": [], "source": source}


BUGGY_CELL = code_cell(["import lightning as L\n", 'L.Trainer(devices=2, strategy="ddp")'])
FINDING = "nb.ipynb:cell {}:2:22: DDP015 [*]"

UNREADABLE = {
    "top level a list": (b"[1, 2]\n", "E902 cannot read notebook: no list of cells"),
    "cells not a list": (b'{"cells": 5}\n', "E902 cannot read notebook: no list of cells"),
    "top level a string": (b'"cells"\n', "E902 cannot read notebook: no list of cells"),
    "empty file": (b"", "E902 cannot read notebook: invalid JSON (Expecting value at line 1 column 1)"),
    "truncated": (b'{"cells": [{"cell_type": "code", "source": "x', "E902 cannot read notebook: invalid JSON"),
    "not UTF-8": (b'{"cells": [], "x": "\xff"}', "E902 cannot read notebook: not UTF-8 (invalid start byte at byte 20)"),
    "nested too deeply": (b'{"cells": [], "metadata": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
                          "E902 cannot read notebook: its JSON is nested too deeply"),
}


def test_an_unreadable_notebook_is_an_error_and_never_written(tmp_path, run_cli):
    for name, (data, message) in UNREADABLE.items():
        path = tmp_path / "nb.ipynb"
        path.write_bytes(data)
        proc = run_cli("--write", "nb.ipynb", cwd=tmp_path)
        err = proc.stderr.decode()
        assert (proc.returncode, proc.stdout) == (2, b""), name
        assert err.startswith("nb.ipynb: " + message), (name, err)
        assert "Traceback" not in err and "internal error" not in err, name
        assert path.read_bytes() == data, name
    stdin = run_cli("-", "--stdin-filename", "nb.ipynb", input=b"[1, 2]\n", cwd=tmp_path)
    assert stdin.returncode == 2 and b"E902 cannot read notebook" in stdin.stderr


ODD_CELLS = {
    "not an object": ([5, None, "x", [], BUGGY_CELL], None),
    "no cell_type": ([{"source": "import os"}, BUGGY_CELL], None),
    "cell_type not a string": ([{"cell_type": ["code"], "source": "x ="}, BUGGY_CELL], None),
    "source a number": ([code_cell(5), BUGGY_CELL], "its source is a number, not text"),
    "source null": ([code_cell(None), BUGGY_CELL], "its source is null, not text"),
    "source an object": ([code_cell({"a": 1}), BUGGY_CELL], "its source is an object, not text"),
    "source with a number": ([code_cell(["x = 1\n", 2]), BUGGY_CELL], "its source is a list that holds more than strings"),
    "no source": ([{"cell_type": "code", "metadata": {}, "outputs": []}, BUGGY_CELL], "it has no source"),
}


def test_cells_of_unexpected_shape_are_left_out_and_the_rest_is_fixed(tmp_path, run_cli):
    for name, (cells, note) in ODD_CELLS.items():
        path = tmp_path / "nb.ipynb"
        original = raw_notebook(cells)
        path.write_bytes(original)
        proc = run_cli("--write", "nb.ipynb", cwd=tmp_path)
        err = proc.stderr.decode()
        assert proc.returncode == 0, (name, err)
        assert "Traceback" not in err and "internal error" not in err, name
        assert path.read_bytes() == original.replace(b'\\"ddp\\")', b'\\"ddp_notebook\\")'), name
        if note is not None:
            assert f"nb.ipynb:cell 1:1:1: note: cell skipped: {note}" in err, (name, err)
        else:
            assert "note" not in err, (name, err)


def test_odd_metadata_reads_as_a_python_notebook(tmp_path, run_cli):
    for metadata in [5, [], {"kernelspec": 5}, {"kernelspec": {"language": 5}, "language_info": []},
                     {"kernelspec": [], "language_info": "python"}, {"kernelspec": {"language": None}},
                     {"language_info": {"name": ""}}]:
        (tmp_path / "nb.ipynb").write_bytes(raw_notebook([BUGGY_CELL], metadata))
        proc = run_cli("--check", "nb.ipynb", cwd=tmp_path)
        assert proc.returncode == 1, (metadata, proc.stderr)
        assert either_mark(proc.stdout.decode()).startswith(FINDING.format(1)), metadata


def big_notebook(megabytes: int) -> bytes:
    """A notebook of ``megabytes`` MB, nearly all training output (progress-bar lines)."""
    line = "Epoch 0:  42%|████▏     | 420/1000 [00:10<00:14, 41.2it/s, loss=0.123, v_num=0]\r"
    cell = dict(BUGGY_CELL, outputs=[{"name": "stderr", "output_type": "stream",
                                      "text": [line] * (megabytes * 2**20 // (len(line.encode()) + 10))}])
    return (json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                       indent=1, ensure_ascii=False) + "\n").encode()


def test_a_50_mb_notebook_of_outputs_is_fixed(tmp_path, run_cli):
    """In bounded time (the timeout proves no hang; bench/notebook_size.py measures time and memory)."""
    original = big_notebook(50)
    (tmp_path / "nb.ipynb").write_bytes(original)
    proc = run_cli("--write", "nb.ipynb", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "nb.ipynb").read_bytes() == original.replace(b'\\"ddp\\")', b'\\"ddp_notebook\\")')


def test_a_notebook_too_costly_to_read_is_reported_unread(tmp_path, run_cli):
    """Tens of millions of tiny JSON values (some 70 MB) would take gigabytes as Python objects."""
    data = raw_notebook([BUGGY_CELL], {"x": "@"}).replace(b'"@"', b"[" + b"0," * 36_000_000 + b"0]")
    (tmp_path / "nb.ipynb").write_bytes(data)
    proc = run_cli("--write", "nb.ipynb", cwd=tmp_path, timeout=300)
    assert proc.returncode == 2
    assert re.match(r"nb\.ipynb: E902 not analysed: reading this notebook's JSON would take about [\d.]+ GiB "
                    r"\(the limit is 2 GiB\)", proc.stderr.decode()), proc.stderr
    assert (tmp_path / "nb.ipynb").read_bytes() == data


def test_a_notebook_of_huge_code_is_reported_unparsed(tmp_path, run_cli):
    cells = [BUGGY_CELL] + [code_cell(f"x{i} = [{', '.join(['1'] * 2000)}]\n") for i in range(800)]
    data = raw_notebook(cells)
    (tmp_path / "nb.ipynb").write_bytes(data)
    proc = run_cli("--write", "nb.ipynb", cwd=tmp_path, timeout=300)
    assert proc.returncode == 2
    assert re.match(r"nb\.ipynb: E902 not analysed: [\d.]+ MiB is over the 4 MiB limit for parsing", proc.stderr.decode())
    assert (tmp_path / "nb.ipynb").read_bytes() == data


def huge_code_notebook() -> bytes:
    """Over 5 MiB of code (the default limit is 4 MiB), with a line magic the cells must be masked for."""
    magic = code_cell(["%matplotlib inline\n", "import lightning as L\n", 'L.Trainer(devices=2, strategy="ddp")'])
    return raw_notebook([magic] + [code_cell(f"x{i} = [{', '.join(['1'] * 2000)}]\n") for i in range(900)])


def test_a_raised_max_file_size_reads_a_notebook_of_huge_code(tmp_path, run_cli):
    """The limit is the file's setting, flag or ``[tool.ddpfix]``: the cells are masked and parsed
    under it (with the default's 4 MiB here, ``%matplotlib`` reached the parser as it is: E999)."""
    data = huge_code_notebook()
    assert 5 * 2**20 < len(data) < 8 * 2**20
    (tmp_path / "nb.ipynb").write_bytes(data)
    proc = run_cli("--check", "nb.ipynb", cwd=tmp_path, timeout=300)
    assert proc.returncode == 2 and "over the 4 MiB limit for parsing (max-file-size)" in proc.stderr.decode()
    proc = run_cli("--check", "--max-file-size", "8MiB", "nb.ipynb", cwd=tmp_path, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.decode().startswith("nb.ipynb:cell 1:3:22: DDP015"), proc.stdout
    assert "E999" not in proc.stderr.decode() and "E902" not in proc.stderr.decode()
    (tmp_path / "pyproject.toml").write_text('[tool.ddpfix]\nmax-file-size = "8MiB"\n')
    proc = run_cli("--check", "nb.ipynb", cwd=tmp_path, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.decode().startswith("nb.ipynb:cell 1:3:22: DDP015"), proc.stdout
    assert (tmp_path / "nb.ipynb").read_bytes() == data


def test_a_lowered_max_file_size_reports_a_notebook_as_it_reports_a_script(tmp_path, run_cli):
    cells = [code_cell(["%matplotlib inline\n", "import torch\n", "from torch.utils.data import DataLoader\n",
                        'DataLoader(range(3), generator=torch.Generator("cuda"))\n']),
             code_cell("x = [" + ", ".join(["1"] * 1000) + "]\n")]
    data = raw_notebook(cells)
    (tmp_path / "nb.ipynb").write_bytes(data)
    (tmp_path / "nb.py").write_text("".join("".join(cell["source"]) for cell in cells).replace("%matplotlib inline\n", ""))
    for setting in (["--max-file-size", "1KiB"], []):
        if not setting:
            (tmp_path / "pyproject.toml").write_text('[tool.ddpfix]\nmax-file-size = "1k"\n')
        proc = run_cli("--write", *setting, "nb.ipynb", "nb.py", cwd=tmp_path, timeout=120)
        assert proc.returncode == 2, proc.stderr
        messages = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in proc.stderr.decode().splitlines()
                    if " E902 " in f" {line}"}
        assert messages == {"nb.ipynb": "E902 not analysed: 0.0 MiB is over the 1 KiB limit for parsing (max-file-size)",
                            "nb.py": "E902 not analysed: 0.0 MiB is over the 1 KiB limit for parsing (max-file-size)"}, proc.stderr
        assert (tmp_path / "nb.ipynb").read_bytes() == data


def test_only_the_fixed_source_changes_whatever_the_rest_looks_like(tmp_path, run_cli_unsafe):
    """The new source is spliced into the text: a byte-order mark, Windows newlines, sorted keys or
    a compact metadata block elsewhere are all kept."""
    plain = notebook(BUGGY)
    fixed = plain.replace(b'\\"ddp\\")', b'\\"ddp_notebook\\")')
    compact_metadata = b'"metadata": {"kernelspec": {"language": "python", "name": "python3"}, "zeta": 1, "alpha": [1.5e-05, 2]}'
    variants = {
        "bom.ipynb": (b"\xef\xbb\xbf" + plain, b"\xef\xbb\xbf" + fixed),
        "crlf.ipynb": (plain.replace(b"\n", b"\r\n"), fixed.replace(b"\n", b"\r\n")),
        "sorted.ipynb": (notebook(BUGGY, sort_keys=True), notebook(BUGGY, sort_keys=True).replace(b'\\"ddp\\")', b'\\"ddp_notebook\\")')),
    }
    folded = re.sub(rb'"metadata": \{\n  "kernelspec".*?\n \},', compact_metadata.replace(b"\\", b"\\\\") + b",", plain, flags=re.S)
    assert folded != plain
    variants["folded.ipynb"] = (folded, folded.replace(b'\\"ddp\\")', b'\\"ddp_notebook\\")'))
    for name, (data, _) in variants.items():
        (tmp_path / name).write_bytes(data)
    proc = run_cli_unsafe("--write", ".", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name, (_, wanted) in variants.items():
        assert (tmp_path / name).read_bytes() == wanted, name


def test_a_notebook_of_large_outputs_gives_its_facts_to_the_run(tmp_path, run_cli):
    """Its code, not its size, decides whether its facts are read: the seed in a 5 MB notebook
    (nearly all outputs) is the run's seed for a script beside it, as in a small one."""
    seeding = code_cell(["import lightning as L\n", "L.seed_everything(42)"])
    script = ("import lightning as L\nfrom torch.utils import data\nfrom project import dataset\n"
              'train, val = data.random_split(dataset, [0.8, 0.2])\nL.Trainer(devices=2, strategy="ddp")\n')
    messages = []
    for outputs in ([], [{"name": "stdout", "output_type": "stream", "text": ["x" * 99 + "\n"] * 50_000}]):
        folder = tmp_path / str(len(outputs))
        folder.mkdir()
        (folder / "nb.ipynb").write_bytes(raw_notebook([dict(seeding, outputs=outputs)]))
        (folder / "train.py").write_text(script)
        proc = run_cli("--check", "-v", ".", cwd=folder)  # -v: the explanation names the seed
        text = proc.stdout.decode()
        messages.append(text[text.index("train.py"):].splitlines())  # its line and the explanation under it
    assert (tmp_path / "1" / "nb.ipynb").stat().st_size > 5 * 2**20
    assert messages[0] == messages[1] and "the run seeds with 42" in "\n".join(messages[0])


def test_a_compact_notebook_is_written_only_where_its_layout_shows(tmp_path, run_cli_unsafe):
    """On one line, a list of two lines shows its item separator (", " or ","), a list of one does
    not: a fix that makes a one-line cell longer (DDP012 adds ``import torch``) is then not written."""
    rest = [["train, val = data.random_split(dataset, [0.8, 0.2])"], ['L.Trainer(devices=2, strategy="ddp")']]
    three_lines = ["import lightning as L\n", "from torch.utils import data\n", "from project import dataset"]
    one_line = ["import lightning as L; from torch.utils import data; from project import dataset"]
    for imports, separators, written in [(three_lines, (", ", ": "), True), (three_lines, (",", ":"), False),
                                         (one_line, (", ", ": "), False), (one_line, (",", ":"), False)]:
        content = {"cells": [code_cell(source) for source in [imports, *rest]], "metadata": {},
                   "nbformat": 4, "nbformat_minor": 5}
        path = tmp_path / "nb.ipynb"
        original = json.dumps(content, separators=separators).encode()
        path.write_bytes(original)
        proc = run_cli_unsafe("--write", "nb.ipynb", cwd=tmp_path)
        if written:
            assert proc.returncode == 0, proc.stderr
            content["cells"][0]["source"] = [*imports[:-1], imports[-1] + "\n", "import torch"]
            content["cells"][1]["source"] = ["train, val = data.random_split(dataset, [0.8, 0.2], "
                                             "generator=torch.Generator().manual_seed(42))"]
            content["cells"][2]["source"] = ['L.Trainer(devices=2, strategy="ddp_notebook")']
            assert path.read_bytes() == json.dumps(content, separators=separators).encode()
        else:
            assert path.read_bytes() == original, (imports, separators)
            assert "note: fixes not written" in proc.stderr.decode()


def test_a_fix_that_would_move_a_magic_is_left_out_and_the_other_fixes_are_kept(tmp_path, run_cli_unsafe):
    """DDP001 moves the statements after a model's construction out of ``init_module()``: where one
    of them is ``%time trainer.fit(...)`` that fix cannot be written back. Only it is left out (a
    note, exit 1): the other cells' fixes, and later rules' findings, are kept."""
    fit_in_init = 'with trainer.init_module():\n    model = Model()\n    dm.setup("fit")\n    {}trainer.fit(model, datamodule=dm)\n'
    cells = ['import lightning as L\nfrom project import DataModule, Model\ndm = DataModule()\n'
             'trainer = L.Trainer(devices=2, strategy="ddp")\n', fit_in_init.format("%time "), fit_in_init.format("")]
    (tmp_path / "nb.ipynb").write_bytes(notebook(cells))
    proc = run_cli_unsafe("--write", "--show-fixes", "nb.ipynb", cwd=tmp_path)
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert proc.returncode == 1 and "internal error" not in out + err, out + err
    assert "nb.ipynb:cell 2:1:1: note: fix not applied: it would move a line of IPython syntax" in err
    assert re.search(r"cell 1:4:\d+: DDP015 \[fixed\]", out) and re.search(r"cell 3:1:1: DDP001 \[fixed\]", out), out
    assert re.search(r"cell 2:1:1: DDP001 \[~\]", out), out
    written = [cell["source"] for cell in json.loads((tmp_path / "nb.ipynb").read_bytes())["cells"]]
    assert "".join(written[0]).endswith('strategy="ddp_notebook")\n')
    assert "".join(written[1]) == cells[1]
    assert "".join(written[2]) == 'with trainer.init_module():\n    model = Model()\ndm.setup("fit")\ntrainer.fit(model, datamodule=dm)\n'
    again = run_cli_unsafe("--write", "nb.ipynb", cwd=tmp_path)
    assert again.returncode == 1 and json.loads((tmp_path / "nb.ipynb").read_bytes())["cells"][1]["source"] == written[1]


TIMED = ["import lightning as L\nfrom project import Model\nmodel = Model()\n",
         '%time trainer = L.Trainer(devices=2, strategy="ddp")\n%time trainer.fit(model)\n']


def test_the_statement_after_time_is_linted_and_never_fixed(tmp_path, run_cli_unsafe):
    """``%time STATEMENT`` runs the statement once as the cell's top-level code: its finding is the
    one the statement gets without ``%time`` (the column counts the magic), with no fix, and a note
    says why on --write; the notebook stays byte-identical."""
    plain = notebook([TIMED[0], TIMED[1].replace("%time ", "")])
    timed = notebook(TIMED)
    (tmp_path / "plain.ipynb").write_bytes(plain)
    (tmp_path / "timed.ipynb").write_bytes(timed)
    proc = run_cli_unsafe("--check", "plain.ipynb", "timed.ipynb", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.decode().splitlines() == [
        "plain.ipynb:cell 2:1:32: DDP015 [*] Trainer(strategy='ddp') in a notebook: use 'ddp_notebook'",
        "timed.ipynb:cell 2:1:38: DDP015 Trainer(strategy='ddp') in a notebook: use 'ddp_notebook'",
    ]
    detail = json.loads(run_cli_unsafe("--check", "--output-format=json", "timed.ipynb", cwd=tmp_path).stdout)
    assert [(f["code"], f["fixable"], f["fix"]) for f in detail] == [("DDP015", False, [])]
    assert detail[0]["detail"].endswith("Not fixed: it would edit a line of IPython syntax (a statement that %time "
                                        "runs); ddpfix keeps such lines as written: change it by hand.")
    proc = run_cli_unsafe("--write", "timed.ipynb", cwd=tmp_path)
    assert proc.returncode == 1
    assert "timed.ipynb:cell 2:1:38: note: fix not applied: it would edit a line of IPython syntax" in proc.stderr.decode()
    assert "timed.ipynb:cell 2:1:38: DDP015 Trainer(strategy='ddp')" in proc.stdout.decode()
    assert (tmp_path / "timed.ipynb").read_bytes() == timed


def test_a_time_line_keeps_its_magic_while_the_rest_is_fixed(tmp_path, run_cli_unsafe):
    """The other cells' fixes are made; ``%timeit`` (many runs, inside a function) and an indented
    ``%time`` stay masked as before: no finding there."""
    cells = [TIMED[0], TIMED[1], '%timeit -n1 L.Trainer(devices=2, strategy="ddp")\n',
             'if True:\n    %time L.Trainer(devices=2, strategy="ddp")\n', 'L.Trainer(devices=2, strategy="ddp")\n']
    (tmp_path / "nb.ipynb").write_bytes(notebook(cells))
    proc = run_cli_unsafe("--write", "--show-fixes", "nb.ipynb", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert [line.split(" DDP015 ")[0] for line in proc.stdout.decode().splitlines() if " DDP015 " in line] == [
        "nb.ipynb:cell 2:1:38:", "nb.ipynb:cell 5:1:22:"], proc.stdout
    assert "cell 5:1:22: DDP015 [fixed]" in proc.stdout.decode()
    written = ["".join(cell["source"]) for cell in json.loads((tmp_path / "nb.ipynb").read_bytes())["cells"]]
    assert written == cells[:4] + ['L.Trainer(devices=2, strategy="ddp_notebook")\n']


def test_add_noqa_puts_the_comment_on_the_time_line(tmp_path, run_cli):
    (tmp_path / "nb.ipynb").write_bytes(notebook(TIMED))
    proc = run_cli("--add-noqa", "nb.ipynb", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    written = ["".join(cell["source"]) for cell in json.loads((tmp_path / "nb.ipynb").read_bytes())["cells"]]
    assert written[1] == TIMED[1].replace('"ddp")\n', '"ddp")  # noqa: DDP015\n', 1)
    assert run_cli("--check", "nb.ipynb", cwd=tmp_path).returncode == 0


def test_an_added_import_goes_after_the_install_line_not_above_it(tmp_path, run_cli_unsafe):
    """A notebook's first lines are often ``!pip install``/``%env``: the ``import torch`` that
    DDP012's fix needs goes after the leading imports, past those lines (above them, it would run
    before the package is installed)."""
    cells = ["!pip install -q torch lightning\n%env CUDA_VISIBLE_DEVICES=0,1\nimport lightning as L\n"
             "from torch.utils.data import random_split\n",
             'train, val = random_split(range(10), [5, 5])\ntrainer = L.Trainer(devices=2, strategy="ddp_notebook")\n']
    (tmp_path / "nb.ipynb").write_bytes(notebook(cells))
    proc = run_cli_unsafe("--write", "nb.ipynb", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    written = ["".join(cell["source"]) for cell in json.loads((tmp_path / "nb.ipynb").read_bytes())["cells"]]
    assert written[0] == cells[0] + "import torch\n"
    assert written[1].startswith("train, val = random_split(range(10), [5, 5], generator=torch.Generator()")


def test_messages_name_ipython_lines_and_places_the_notebook_way(tmp_path, run_cli):
    """-v explains DDP003's unsafe fix by the statement in the guard: a masked line is named by
    its IPython syntax (never ``_ddpfix_..._0()``), and the monitoring callback's place by its cell
    (never the line of the cells joined)."""
    model = ("class M(L.LightningModule):\n    def validation_step(self, batch, batch_idx):\n"
             "        loss = batch.sum()\n        if self.trainer.is_global_zero:\n"
             '            %time print("rank zero")\n            self.log("val_loss", loss)\n        return loss\n')
    fit = "%%time\ntrainer = L.Trainer(devices=2, strategy='ddp_notebook', callbacks=[ModelCheckpoint(monitor='val_loss')])\n"
    setup = "import lightning as L\nfrom lightning.pytorch.callbacks import ModelCheckpoint\n"
    (tmp_path / "nb.ipynb").write_bytes(notebook([setup, model, fit]))
    out = run_cli("--check", "-v", "nb.ipynb", cwd=tmp_path).stdout.decode()
    assert "DDP003" in out, out
    assert "_ddpfix_" not in out, out
    assert 'unsafe fix: `%time print("rank zero")` inside the guard' in out, out
    assert "monitored by ModelCheckpoint (nb.ipynb:cell 3:2)" in out, out


def test_a_git_lfs_pointer_named_ipynb_is_skipped_with_a_note(tmp_path):
    """Real repositories keep notebooks in Git LFS: a pointer file is said once, as a note, and
    does not make the run exit 2 (it was E902 "invalid JSON")."""
    import subprocess

    from conftest import ddpfix_executable

    pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"0" * 64 + b"\nsize 12345\n"
    (tmp_path / "explore.ipynb").write_bytes(pointer)
    run = subprocess.run([ddpfix_executable(), "--check", "--no-color", "."], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("Git LFS pointer") == 1 and "E902" not in run.stderr
    assert (tmp_path / "explore.ipynb").read_bytes() == pointer
