"""DDP015 for real: a notebook's strategy="ddp" is refused in an interactive interpreter; after the
CLI's rewrite to "ddp_notebook" the same cells train on two CPU processes."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from conftest import ddpfix_executable

from .ddp import SCRIPTS, require_lightning, run_script

pytestmark = pytest.mark.e2e


def cells_as_script(notebook, script):
    cells = json.loads(notebook.read_text())["cells"]
    script.write_text("\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code") + "\n")
    return script


def test_notebook_ddp_is_refused_and_the_rewrite_trains(tmp_path):
    require_lightning()
    notebook = tmp_path / "train.ipynb"
    shutil.copy(SCRIPTS / "notebook_ddp.ipynb", notebook)

    before = run_script(cells_as_script(notebook, tmp_path / "before.py"), timeout=90, interactive=True)
    assert "is not compatible with an interactive environment" in before.stderr, before.stderr[-3000:]
    assert "finished" not in before.results()

    proc = subprocess.run([ddpfix_executable(), "--write", "--show-fixes", str(notebook)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "train.ipynb:cell 3:1:" in proc.stdout and "DDP015 [fixed]" in proc.stdout

    after = run_script(cells_as_script(notebook, tmp_path / "after.py"), timeout=90, interactive=True)
    assert after.returncode == 0, after.stderr[-3000:]
    assert after.results()["finished"] == "True"
