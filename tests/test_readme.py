"""README's first screen shows real output: each ``console`` block is what the command prints now."""

from __future__ import annotations

import re
import shlex

from conftest import ROOT

CONSOLE_BLOCK = re.compile(r"```console\n\$ (?P<command>[^\n]+)\n(?P<output>.*?)```", re.S)


def test_the_readme_sample_output_is_the_clis_own(run_cli):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = list(CONSOLE_BLOCK.finditer(readme))
    assert len(blocks) >= 2
    for block in blocks:
        program, *args = shlex.split(block["command"])
        assert program == "ddpfix"
        proc = run_cli(*args, cwd=ROOT)
        assert proc.returncode == 1  # a pitfall is shown, not fixed: something is left
        out, err = proc.stdout.decode(), proc.stderr.decode()
        # A block shows stdout, or stdout then the summary that stderr carries.
        assert block["output"] in (out, out + err), (
            f"README's output of `{block['command']}` is out of date; it now prints:\n{out}{err}")


def test_the_readme_example_is_a_fixture_and_its_expected_output():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    fixture = ROOT / "fixtures" / "rank-gated-log" / "monitored_after_print.py"
    shown = readme.split("```python\n", 1)[1].split("```", 1)[0]
    assert shown in fixture.read_text(encoding="utf-8")
    expected = fixture.with_name("monitored_after_print.expected.py").read_text(encoding="utf-8")
    assert '        self.log("val_best_score", score, sync_dist=True)\n' in expected


DOC_BLOCK = re.compile(r"(?:<!-- run in: (?P<folder>\S+)[^\n]*-->\n)?```console\n\$ (?P<command>[^\n]+)\n(?P<output>.*?)```", re.S)


def test_every_console_example_in_the_docs_is_what_the_command_prints(run_cli):
    """docs/*.md hold ddpfix to its word too: each ``console`` block runs (from the repository, or
    the folder its ``<!-- run in: ... -->`` names) and prints exactly what the page shows.
    docs/rehearse.md's example runs a training script: tests/test_rehearse.py checks it."""
    checked = 0
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name == "rehearse.md":
            continue
        for block in DOC_BLOCK.finditer(page.read_text(encoding="utf-8")):
            program, *args = shlex.split(block["command"])
            assert program == "ddpfix", (page.name, block["command"])
            proc = run_cli(*args, cwd=ROOT / block["folder"] if block["folder"] else ROOT)
            out, err = proc.stdout.decode(), proc.stderr.decode()
            assert block["output"] in (out, out + err), (
                f"{page.name}: the output of `{block['command']}` is out of date; it now prints:\n{out}{err}")
            checked += 1
    assert checked >= 2
