"""--interactive through a real pseudo-terminal: the file ends up with exactly the accepted fixes."""

from __future__ import annotations

import os

import pexpect
from conftest import ddpfix_executable

SOURCE = b'''import torch
from torch.utils.data import DataLoader, random_split

a = DataLoader(range(4), shuffle=True, generator=torch.Generator(device="cuda"))
b = random_split(range(4), [2, 2], generator=torch.Generator("cuda").manual_seed(1))
c = DataLoader(range(4), shuffle=True, generator=torch.Generator(device="cuda:1"))
'''
PROMPT = r"\[y\]es / \[n\]o / \[a\]ll in this file / \[q\]uit"


def spawn(tmp_path, *args, **env):
    # PYTHONPATH passes on, so the console script runs the code under test (a checkout's src/).
    inherited = {name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ}
    return pexpect.spawn(
        ddpfix_executable(), list(args), cwd=str(tmp_path),
        env={"NO_COLOR": "1", "TERM": "dumb", "PATH": "/usr/bin:/bin", **inherited, **env},
        timeout=60, dimensions=(50, 200),
    )


def test_accept_one_reject_another_then_all(tmp_path):
    (tmp_path / "train.py").write_bytes(SOURCE)
    child = spawn(tmp_path, "--unsafe-fixes", "--interactive", "train.py")
    child.expect(r"train\.py:4:\d+: DDP002 \[[*~]\]")
    child.expect(PROMPT)
    child.send("n")  # one key, no Enter
    child.expect(r"train\.py:5:\d+: DDP002 \[[*~]\]")
    child.expect(r'\+b = random_split\(range\(4\), \[2, 2\], generator=torch\.Generator\(\)\.manual_seed\(1\)\)')
    child.expect(PROMPT)
    child.send("y")
    child.expect(r"train\.py:6:\d+: DDP002 \[[*~]\]")
    child.expect(PROMPT)
    child.send("m")  # not an answer: asked again
    child.expect("Please answer y, n, a or q.")
    child.expect(PROMPT)
    child.send("n")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1  # two fixes were declined
    expected = SOURCE.replace(b'torch.Generator("cuda")', b"torch.Generator()")
    assert (tmp_path / "train.py").read_bytes() == expected


def test_all_in_this_file_and_quit(tmp_path):
    (tmp_path / "a.py").write_bytes(SOURCE)
    (tmp_path / "b.py").write_bytes(SOURCE)
    child = spawn(tmp_path, "--unsafe-fixes", "-i", ".")
    child.expect(r"a\.py:4:\d+: DDP002")
    child.expect(PROMPT)
    child.send("a")
    child.expect(r"b\.py:4:\d+: DDP002")
    child.expect(PROMPT)
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    fixed = SOURCE.replace(b'(device="cuda")', b"()").replace(b'("cuda")', b"()").replace(b'(device="cuda:1")', b"()")
    assert (tmp_path / "a.py").read_bytes() == fixed
    assert (tmp_path / "b.py").read_bytes() == SOURCE


# Two rules' findings interleaved: DDP002 on lines 5 and 7, DDP012 (a later rule) on line 6.
MIXED = b'''import torch
import lightning as L
from torch.utils.data import DataLoader, random_split

a = DataLoader(range(4), shuffle=True, generator=torch.Generator(device="cuda"))
train, val = random_split(range(4), [2, 2])
c = DataLoader(range(4), shuffle=True, generator=torch.Generator(device="cuda:1"))
trainer = L.Trainer(devices=2, strategy="ddp")
'''


def test_fixes_are_offered_in_line_order_across_rules(tmp_path):
    (tmp_path / "train.py").write_bytes(MIXED)
    child = spawn(tmp_path, "--unsafe-fixes", "-i", "train.py")
    child.expect(r"train\.py:5:\d+: DDP002 ")
    child.expect(PROMPT)
    child.send("n")
    child.expect(r"train\.py:6:\d+: DDP012 \[~\]")  # rule by rule, line 7 came first
    child.expect(r"Apply this unsafe fix \(review it\)\? " + PROMPT)
    child.send("y")
    child.expect(r"train\.py:7:\d+: DDP002 ")
    child.expect(PROMPT)
    child.send("n")
    child.expect("Fixed 1 issue in 1 file. 2 fixes not applied.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    written = (tmp_path / "train.py").read_bytes()
    assert written.count(b'device="cuda') == 2 and b"random_split(range(4), [2, 2], generator=" in written


def test_quit_counts_every_fix_not_taken(tmp_path):
    (tmp_path / "a.py").write_bytes(SOURCE)
    (tmp_path / "b.py").write_bytes(SOURCE)
    child = spawn(tmp_path, "--unsafe-fixes", "-i", ".")
    child.expect(r"a\.py:4:\d+: DDP002")
    child.expect(PROMPT)
    child.send("y")
    child.expect(r"a\.py:5:\d+: DDP002")
    child.expect(PROMPT)
    child.send("q")
    # a.py's lines 5 and 6 and b.py's three: five fixes left, none of them lost from the count
    child.expect("Fixed 1 issue in 1 file. 5 fixes not applied.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert (tmp_path / "a.py").read_bytes() == SOURCE.replace(b'(device="cuda")', b"()", 1)
    assert (tmp_path / "b.py").read_bytes() == SOURCE


PAGER = "cat > paged.txt; echo PAGER-DONE"


def test_preview_pages_findings_and_diff_then_asks_with_its_summary(tmp_path):
    (tmp_path / "train.py").write_bytes(MIXED)
    child = spawn(tmp_path, ".", DDPFIX_PAGER=PAGER)
    child.expect("PAGER-DONE")
    child.expect(r"Would fix 2 issues in 1 file \(1 more with --unsafe-fixes\)\. Apply 2 fixes to 1 file\? \[y/N\]")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    paged = (tmp_path / "paged.txt").read_text()
    assert "train.py:6:14: DDP012 [~]" in paged and '-a = DataLoader(range(4), shuffle=True, generator=torch.Generator(device="cuda"))' in paged
    assert (tmp_path / "train.py").read_bytes() == MIXED


def test_no_pager_and_no_terminal_mean_no_pager(tmp_path, run_cli, monkeypatch):
    (tmp_path / "train.py").write_bytes(MIXED)
    child = spawn(tmp_path, "--no-pager", ".", DDPFIX_PAGER=PAGER)
    child.expect(r"\+a = DataLoader\(range\(4\), shuffle=True, generator=torch\.Generator\(\)\)")
    child.expect(r"Apply 2 fixes to 1 file\? \[y/N\]")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    monkeypatch.setenv("DDPFIX_PAGER", PAGER)
    piped = run_cli(".", cwd=tmp_path)
    assert b"+a = DataLoader(" in piped.stdout and b"PAGER-DONE" not in piped.stdout
    assert not (tmp_path / "paged.txt").exists()


def test_preview_asks_before_writing(tmp_path):
    (tmp_path / "train.py").write_bytes(SOURCE)
    child = spawn(tmp_path, "--unsafe-fixes", "train.py")
    child.expect(r"Apply 3 fixes to 1 file\? \[y/N\]")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert (tmp_path / "train.py").read_bytes() == SOURCE
    child = spawn(tmp_path, "--unsafe-fixes", "train.py")
    child.expect(r"Apply 3 fixes to 1 file\? \[y/N\]")
    child.sendline("y")
    child.expect("Fixed 3 issues in 1 file.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert b"cuda" not in (tmp_path / "train.py").read_bytes()


def test_progress_bar_only_for_long_runs_on_a_terminal(tmp_path, run_cli):
    for i in range(210):
        (tmp_path / f"m{i:03d}.py").write_text("x = 1\n")
    child = spawn(tmp_path, "--unsafe-fixes", "--check", "--jobs", "1", ".")
    child.expect("Scanning|Checking")  # the scan stage reads every file; no file here needs more
    child.expect("No DDP issues found in 210 files.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    piped = run_cli("--check", ".", cwd=tmp_path)  # not a terminal: no bar
    assert b"Checking" not in piped.stderr and piped.returncode == 0


def test_keys_typed_ahead_answer_the_next_questions(tmp_path):
    """Three answers typed at once (while a fix is worked out, or held down) answer three questions,
    in order: a read that brings several keys loses none of them."""
    (tmp_path / "train.py").write_bytes(SOURCE)
    child = spawn(tmp_path, "--unsafe-fixes", "-i", "train.py")
    child.expect(r"train\.py:4:\d+: DDP002")
    child.expect(PROMPT)
    child.send("nyn")
    child.expect("Fixed 1 issue in 1 file. 2 fixes not applied.")
    child.expect(pexpect.EOF)
    child.close()
    assert (tmp_path / "train.py").read_bytes() == SOURCE.replace(b'torch.Generator("cuda")', b"torch.Generator()")


def test_an_arrow_key_is_one_wrong_answer(tmp_path):
    (tmp_path / "train.py").write_bytes(SOURCE)
    child = spawn(tmp_path, "--unsafe-fixes", "-i", "train.py")
    child.expect(PROMPT)
    child.send("\x1b[A")  # the up arrow: one key, asked again once
    child.expect("Please answer y, n, a or q.")
    child.expect(PROMPT)
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.before.count(b"Please answer") == 0  # no second complaint for the rest of the sequence
    assert (tmp_path / "train.py").read_bytes() == SOURCE


def test_a_notebook_fix_that_would_move_a_magic_is_not_offered_and_the_review_goes_on(tmp_path):
    """DDP001's fix in cell 2 would move ``%time trainer.fit(...)`` out of ``init_module()``: it is
    listed, not offered, and the review goes on to cell 3's fix (it used to stop the review)."""
    import json

    # (a data module set up inside the block: DDP001 reports a block with known data work; the masked
    # magic alone is a line it cannot read)
    fit_in_init = 'with trainer.init_module():\n    model = Model()\n    dm.setup("fit")\n    {}trainer.fit(model)\n'
    cells = ['import lightning as L\nfrom project import DataModule, Model\ndm = DataModule()\n'
             'trainer = L.Trainer(devices=2, strategy="ddp")\n', fit_in_init.format("%time "), fit_in_init.format("")]
    content = {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
                          "source": source.splitlines(True)} for i, source in enumerate(cells)],
               "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(content, indent=1) + "\n")
    child = spawn(tmp_path, "--unsafe-fixes", "-i", "nb.ipynb")
    child.expect(r"nb\.ipynb:cell 1:4:\d+: DDP015")
    child.expect(PROMPT)
    child.send("y")
    child.expect(r"nb\.ipynb:cell 2:1:1: DDP001")
    child.expect(r"nb\.ipynb:cell 3:1:1: DDP001")
    child.expect(PROMPT)
    child.send("y")
    child.expect("Fixed 2 issues in 1 file.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1  # cell 2's finding is left
    written = ["".join(cell["source"]) for cell in json.loads((tmp_path / "nb.ipynb").read_text())["cells"]]
    assert written == [cells[0].replace('"ddp"', '"ddp_notebook"'), cells[1],
                       'with trainer.init_module():\n    model = Model()\ndm.setup("fit")\ntrainer.fit(model)\n']


# Two DDP006 findings at one place (the call ``.cuda()`` starts where ``torch.ones(...)`` does): they
# share a key and so one fix, which takes both.
SHARED = b'''import torch
import lightning as L


class Model(L.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum() + torch.ones(1, device="cuda:0").cuda(0)
'''


def test_findings_at_one_place_are_one_question(tmp_path):
    (tmp_path / "train.py").write_bytes(SHARED)
    child = spawn(tmp_path, "-i", "train.py")
    child.expect(r"train\.py:7:30: DDP006 \[~\] ")
    child.expect(r"train\.py:7:30: DDP006 \[~\] ")
    child.expect(PROMPT)
    child.send("n")
    assert child.expect([PROMPT, pexpect.EOF]) == 1  # not asked again about the same fix
    child.close()
    assert child.exitstatus == 1 and (tmp_path / "train.py").read_bytes() == SHARED
    child = spawn(tmp_path, "-i", "train.py")
    child.expect(PROMPT)
    child.send("y")
    child.expect("Fixed 2 issues in 1 file.")  # both findings, as --write counts them
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (tmp_path / "train.py").read_bytes() == SHARED.replace(b'torch.ones(1, device="cuda:0").cuda(0)',
                                                                  b"torch.ones(1, device=self.device).to(self.device)")


def test_all_never_applies_an_unsafe_fix_unseen_and_question_mark_explains(tmp_path):
    """``a`` takes the rest of the file's safe fixes; the unsafe one between them is still shown,
    with why it is unsafe (no -v needed), and asked about; ``?`` explains the keys."""
    (tmp_path / "train.py").write_bytes(MIXED)
    child = spawn(tmp_path, "--unsafe-fixes", "-i", "train.py")
    child.expect(r"train\.py:5:\d+: DDP002 \[\*\]")
    child.expect(PROMPT)
    child.send("a")
    child.expect(r"train\.py:6:\d+: DDP012 \[~\]")
    child.expect(r"unsafe because \S")
    child.expect(r"Apply this unsafe fix \(review it\)\? " + PROMPT)
    child.send("?")
    child.expect(r"a  apply this fix and every safe fix left in this file; an unsafe one is still shown")
    child.expect(PROMPT)
    child.send("n")
    child.expect(pexpect.EOF)
    child.close()
    fixed = MIXED.replace(b'torch.Generator(device="cuda")', b"torch.Generator()").replace(
        b'torch.Generator(device="cuda:1")', b"torch.Generator()")
    assert (tmp_path / "train.py").read_bytes() == fixed  # both safe fixes, not the unsafe split
