"""Suppression comments are read from the comments only, whether the tokenizer reads them or (the
fast way) the string literals' spans in CPython's tree rule the strings out."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ddpfix.rules.base import TreeView
from ddpfix.suppressions import ALL, _tokenized, suppressions

ROOT = Path(__file__).resolve().parent.parent

EDGES = b'''import torch
from torch.utils.data import DataLoader

a = DataLoader(range(3), generator=torch.Generator("cuda"))  # NOQA: ddp002
b = DataLoader(range(3), generator=torch.Generator("cuda")), ("x"  # noqa
    "y")
c = DataLoader(range(3), generator=torch.Generator("cuda")), "#"  # noqa: DDP002
d = DataLoader(range(3), generator=torch.Generator("cuda")), """
# noqa
"""
e = DataLoader(range(3), generator=torch.Generator("cuda")), f"{1}#"  # ddpfix: IGNORE
'''


def test_directives_in_comments_only_whatever_the_case(tmp_path, run_cli):
    (tmp_path / "train.py").write_bytes(EDGES)
    proc = run_cli("--check", "train.py", cwd=tmp_path)
    lines = [line.split(":")[1] for line in proc.stdout.decode().splitlines() if "DDP002" in line]
    # a: upper case counts (as in Ruff and flake8); b: a comment between the parts of an implicit
    # concatenation is a comment; c, e: a "#" in a string before the comment; d: "# noqa" in a string.
    assert lines == ["8"]


def test_fast_reading_matches_the_tokenizer():
    view = TreeView(ast.parse(EDGES), EDGES)
    assert suppressions(view.text, view.string_spans) == _tokenized(view.text) == {
        4: frozenset({"DDP002"}), 5: ALL, 7: frozenset({"DDP002"}), 11: ALL}


@pytest.mark.parametrize("folder", ["fixtures", "tests", "src"])
def test_fast_reading_matches_the_tokenizer_on_the_project(folder):
    compared = 0
    for path in sorted((ROOT / folder).rglob("*.py")):
        data = path.read_bytes()
        try:
            tree = ast.parse(data)
        except SyntaxError:
            continue
        view = TreeView(tree, data)
        assert suppressions(view.text, view.string_spans) == _tokenized(view.text), path
        compared += 1
    assert compared > 10


def test_an_upper_case_directive_alone_in_a_file(tmp_path, run_cli):
    (tmp_path / "train.py").write_bytes(b'import torch\nfrom torch.utils.data import DataLoader\n\n'
                                        b'a = DataLoader(range(3), generator=torch.Generator("cuda"))  # NOQA\n')
    proc = run_cli("--check", "train.py", cwd=tmp_path)
    assert proc.returncode == 0 and b"DDP002" not in proc.stdout


def test_a_lone_cr_ends_a_line_for_directives_as_for_findings(tmp_path, run_cli):
    """A stray CR (pasted old-Mac text) ends a line for CPython and LibCST: the ``# noqa`` of the line
    after it silences that line's finding, whether the tokenizer is asked or not."""
    hook = (b'import lightning as L\n\n\nclass M(L.LightningModule):\n    def on_validation_epoch_end(self):\n'
            b'        """Old Mac text:\rstray carriage return."""\n'
            b'        self.log("a", self.loss)  # noqa: DDP004\n        self.log("b", self.loss)%s\n')
    for tail in (b"", b'; s = "# noqa"'):  # the second: a directive's "#" in a string, so the tokenizer reads
        (tmp_path / "m.py").write_bytes(hook % tail)
        lines = run_cli("--check", "m.py", cwd=tmp_path).stdout.decode().splitlines()
        assert [line.split(":")[1] for line in lines if "DDP004" in line] == ["9"]
    for source in ('"""a\rb"""\nx = 1  # noqa\n', '"""a\rb"""\nx = "#"  # noqa\n'):
        view = TreeView(ast.parse(source), source.encode())
        assert suppressions(view.text, view.string_spans) == _tokenized(view.text) == {3: ALL}
