"""The editor recipes in docs/editors.md match what ddpfix really prints."""

from __future__ import annotations

import json
import re
import shutil

from conftest import FIXTURES, ROOT


RECIPES = ROOT / "docs" / "editors.md"


def recipe_tasks() -> dict:
    text = RECIPES.read_text(encoding="utf-8")
    block = re.search(r"```json\n(\{\n  \"version\": \"2\.0\.0\".*?)\n```", text, re.S).group(1)
    return json.loads(block)


def output_lines(tmp_path, run_cli) -> list[str]:
    shutil.copytree(FIXTURES / "rank-gated-log", tmp_path / "proj")
    (tmp_path / "proj" / "broken.py").write_text(
        "import lightning\nclass M(lightning.LightningModule):\n    def f(:  # self.log( is_global_zero\n"
    )
    proc = run_cli("--check", "--select", "DDP003", "proj", cwd=tmp_path)
    lines = [line for line in (proc.stdout + proc.stderr).decode().splitlines() if re.match(r"^\S+\.py:\d+", line)]
    assert any("DDP003" in line for line in lines) and any("E999" in line for line in lines)
    return lines


def test_vscode_problem_matcher(tmp_path, run_cli):
    pattern = recipe_tasks()["tasks"][0]["problemMatcher"]["pattern"]
    regexp = re.compile(pattern["regexp"])
    for line in output_lines(tmp_path, run_cli):
        match = regexp.match(line)
        assert match, line
        path = match.group(pattern["file"])
        assert (tmp_path / path).exists(), path
        assert int(match.group(pattern["line"])) >= 1 and int(match.group(pattern["column"])) >= 1
        assert re.fullmatch(r"(DDP|E)\d+", match.group(pattern["code"]))


def test_pycharm_output_filter(tmp_path, run_cli):
    # PyCharm's macros, as regular expressions: $FILE_PATH$ a path, $LINE$ and $COLUMN$ numbers.
    recipe = "$FILE_PATH$:$LINE$:$COLUMN$:.*"
    assert recipe in RECIPES.read_text(encoding="utf-8")
    regexp = re.compile(recipe.replace("$FILE_PATH$", r"(?P<file>[^:]+)").replace("$LINE$", r"(?P<line>\d+)").replace("$COLUMN$", r"(?P<column>\d+)"))
    for line in output_lines(tmp_path, run_cli):
        match = regexp.match(line)
        assert match and (tmp_path / match.group("file")).exists(), line


def test_vscode_problem_matcher_reads_notebook_findings(tmp_path, run_cli):
    """``nb.ipynb:cell 3:12:13: DDP015 ...``: the file is the notebook (not ``nb.ipynb:cell 3``), the
    line and column count in the cell, as the recipe says."""
    shutil.copytree(FIXTURES / "notebook-strategy", tmp_path / "proj")
    proc = run_cli("--check", "proj", cwd=tmp_path)
    lines = [line for line in proc.stdout.decode().splitlines() if re.match(r"^\S+\.ipynb:cell \d+:\d+:\d+: [A-Z]+\d+ ", line)]
    assert len(lines) >= 3
    pattern = recipe_tasks()["tasks"][0]["problemMatcher"]["pattern"]
    regexp = re.compile(pattern["regexp"])
    for line in lines:
        match = regexp.match(line)
        assert match, line
        path = tmp_path / match.group(pattern["file"])
        assert path.suffix == ".ipynb" and path.exists(), line
        cell, line_in_cell, column = map(int, re.search(r":cell (\d+):(\d+):(\d+):", line).groups())
        assert (int(match.group(pattern["line"])), int(match.group(pattern["column"]))) == (line_in_cell, column)
        source = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][cell - 1]["source"]).splitlines()
        assert line_in_cell <= len(source) and column <= len(source[line_in_cell - 1]) + 1, line
        assert re.fullmatch(r"DDP\d+", match.group(pattern["code"]))
