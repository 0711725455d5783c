"""The editor recipes in README.md match what ddpfix really prints."""

from __future__ import annotations

import json
import re
import shutil

from conftest import FIXTURES, ROOT


def readme_tasks() -> dict:
    text = (ROOT / "README.md").read_text()
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
    pattern = readme_tasks()["tasks"][0]["problemMatcher"]["pattern"]
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
    assert recipe in (ROOT / "README.md").read_text()
    regexp = re.compile(recipe.replace("$FILE_PATH$", r"(?P<file>[^:]+)").replace("$LINE$", r"(?P<line>\d+)").replace("$COLUMN$", r"(?P<column>\d+)"))
    for line in output_lines(tmp_path, run_cli):
        match = regexp.match(line)
        assert match and (tmp_path / match.group("file")).exists(), line
