"""``edits._in_parts``: fixes that need LibCST, carried out on the top-level statements they touch,
give exactly the bytes of the whole-file pass, or are left to it. Compared on every fixture, on
generated scripts and on layouts of trailing comments and blank lines chosen to tell the owners
of such lines apart (a block's footer, the next statement's leading lines, the module's footer)."""

from __future__ import annotations

import ast
import itertools
import sys
from pathlib import Path

import pytest
from fixture_cases import cases

import ddpfix.engine as engine
from ddpfix.edits import AddImport, MoveOutOfWith, SetKeyword, Span
from ddpfix.edits._base import MODULE
from ddpfix.edits._in_parts import Parts
from ddpfix.facts import ProjectFacts, file_facts
from ddpfix.locations import TreePositions
from ddpfix.rules import all_rules
from ddpfix.sources import fix_source

ROOT = Path(__file__).resolve().parent.parent
IN_PARTS = engine._in_parts


def _outcome(path: str, data: bytes, unsafe: bool, facts=None):
    result = fix_source(path, data, all_rules(), facts, options={"unsafe_fixes": unsafe})
    return result.output, [(f.line, f.code, f.fixed) for f in result.findings], [p.message for p in result.problems]


def _both_ways(monkeypatch, path: str, data: bytes, unsafe: bool, facts=None) -> tuple[tuple, tuple, bool]:
    """The outcome with the parts path, without it, and whether it was taken."""
    used = []

    def counting(view, ctx):
        answer = IN_PARTS(view, ctx)
        used.append(answer is not None)
        return answer

    monkeypatch.setattr(engine, "_in_parts", counting)
    with_parts = _outcome(path, data, unsafe, facts)
    monkeypatch.setattr(engine, "_in_parts", lambda view, ctx: None)
    whole = _outcome(path, data, unsafe, facts)
    return with_parts, whole, any(used)


def test_every_fixture_comes_out_the_same_with_and_without_parts(monkeypatch):
    taken = 0
    for unsafe in (False, True):
        for case in (case for case in cases() if case.input.suffix == ".py"):
            facts = ProjectFacts.merge((file_facts(str(p), p.read_bytes()) for p in case.group), whole=case.whole)
            with_parts, whole, used = _both_ways(monkeypatch, str(case.input), case.input.read_bytes(), unsafe, facts)
            assert with_parts == whole, (case.id, unsafe)
            taken += used
    assert taken > 50, taken


def test_generated_scripts_come_out_the_same_with_and_without_parts(monkeypatch, tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from corpus import make_corpus_b
    finally:
        sys.path.remove(str(ROOT / "bench"))
    make_corpus_b(tmp_path, files=60, seed=11)
    taken = 0
    for path in sorted(tmp_path.rglob("*.py")):
        with_parts, whole, used = _both_ways(monkeypatch, str(path), path.read_bytes(), True)
        assert with_parts == whole, path.name
        taken += used
    assert taken > 10, taken


# A rank-gated log in a LightningModule (DDP003 moves it out of the guard) and data work in a
# module-level ``with trainer.init_module()`` (DDP001 moves it out of the block), each followed by
# every layout of trailing lines and of what comes next.
GATED = '''import lightning as L
from lightning.pytorch.callbacks import ModelCheckpoint


class Model(L.LightningModule):
    def on_validation_epoch_end(self):
        loss = self.loss_value()
        if self.trainer.is_global_zero:  # only rank zero reports
            self.log("val_hdr", loss)
{tail}{after}
checkpoint = ModelCheckpoint(monitor="val_hdr")
'''
WITH = '''import lightning as L
from torch.utils.data import DataLoader

from project import Model

trainer = L.Trainer(devices=2, strategy="ddp")
# above the block
with trainer.init_module():  # on the with line
    model = Model()
    loader = DataLoader(range(4))
{tail}{after}'''
TAILS = ["", "            # end of the guard\n", "        # end of the hook\n", "    # end of the class\n",
         "# column zero\n", "\n", "\n\n            # deep after blank lines\n\n", "\n# c\n\n    # back in\n"]
AFTERS = ["", "x = 1\n", "@staticmethod\ndef f():\n    pass\n", "# only a comment\n", "\n\n"]


@pytest.mark.parametrize("template", [GATED, WITH], ids=["rank-gated-log", "init-module"])
def test_trailing_lines_keep_their_owners(monkeypatch, template):
    taken = 0
    for tail, after in itertools.product(TAILS, AFTERS):
        source = template.format(tail=tail, after=after)
        with_parts, whole, used = _both_ways(monkeypatch, "t.py", source.encode(), True)
        assert with_parts == whole, source
        assert with_parts[0] != source.encode(), source  # the fix was made
        taken += used
    assert taken == len(TAILS) * len(AFTERS)


def _parts(source: str, edits) -> Parts | None:
    return Parts.of(source, source.encode(), ast.parse(source), TreePositions(source), edits)


def _call_span(source: str) -> Span:
    call = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call))
    return Span.of(TreePositions(source)[call])


def test_an_edit_inside_a_function_is_carried_out_on_that_function_alone():
    source = "x = f(1)\n\n\ndef g():\n    return h(2)\n\n\ny = 3\n"
    call = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)][1]
    edit = SetKeyword(Span.of(TreePositions(source)[call]), "k", "1")
    parts = _parts(source, [edit])
    assert [source[p.start:p.end] for p in parts.parts] == ["def g():\n    return h(2)\n\n\n"]
    text, refused = parts.carry_out([edit])
    assert text == "x = f(1)\n\n\ndef g():\n    return h(2, k=1)\n\n\ny = 3\n" and not refused


@pytest.mark.parametrize("source, edits", [
    ("x = f(1)\n", lambda s: [SetKeyword(_call_span(s), "k", "1")]),  # a simple statement: may share its line
    ("def g():\n    f(1)\n", lambda s: [AddImport("os")]),  # an edit of the module after the others
    ("def g():\n    f(1)\n", lambda s: [SetKeyword(Span(1, 0, 2, 8), "k", "1")]),  # the statement itself
    ("def g():\r\n    f(1)\r\n", lambda s: [SetKeyword(_call_span(s), "k", "1")]),
    ("# -*- coding: latin-1 -*-\ndef g():\n    f(1)\n", lambda s: [SetKeyword(_call_span(s), "k", "1")]),
    # LibCST's default indent comes from the file's first indented line: the part's own differs.
    ("if a:\n  b = 1\ndef g():\n    f(1)\n", lambda s: [SetKeyword(_call_span(s), "k", "1")]),
    ("@(\n  d)\ndef g():\n    f(1)\n", lambda s: [SetKeyword(_call_span(s), "k", "1")]),
    # An edit of the module that needs more than one statement.
    ("with a:\n    b = 1\n", lambda s: [MoveOutOfWith(MODULE, 0, (0,), ()), MoveOutOfWith(MODULE, 0, (), (0,))]),
])
def test_what_is_left_to_the_whole_file(source, edits):
    assert _parts(source, edits(source)) is None


def test_a_module_level_with_is_rebuilt_alone_with_the_lines_that_follow_it():
    source = "import a\n\nwith a.b():\n    x = 1\n    # end\n\n# above y\ny = 2\n"
    edit = MoveOutOfWith(MODULE, 1, (0,), ())
    parts = _parts(source, [edit])
    assert [source[p.start:p.end] for p in parts.parts] == ["with a.b():\n    x = 1\n    # end\n\n# above y\n"]
    text, refused = parts.carry_out([edit])
    assert text == "import a\n\nx = 1\n# end\n\n# above y\ny = 2\n" and not refused


def test_a_finding_the_whole_file_pass_refuses_to_fix_is_listed_once():
    """Found by the adversarial review: a fix refused because LibCST does not give the file back
    byte for byte listed its finding twice (once as the run's, once as the rule's last run's)."""
    source = GATED.format(tail="", after="").replace("\ncheckpoint", "\n\x0ccheckpoint")  # a form feed: no parts
    result = fix_source("t.py", source.encode(), all_rules(), options={"unsafe_fixes": True})
    assert result.output == source.encode()
    assert [(f.line, f.code, f.fixed) for f in result.findings] == [(9, "DDP003", False)]
    assert [p.message for p in result.problems] == [
        "fixes not applied: LibCST does not reproduce this file byte for byte, so a rewrite could lose text"]


def test_text_libcst_cannot_give_back_outside_the_part_is_copied_and_the_fix_is_made(monkeypatch):
    """The one deliberate difference (as for the splice): a line holding only a backslash, which
    LibCST drops, makes the whole-file pass refuse every fix of the file; the part holding the fix
    is read exactly and checked by its own round trip, and the rest of the file is copied."""
    source = GATED.format(tail="", after="") + "\\\ny = 2\n"
    with_parts, whole, used = _both_ways(monkeypatch, "t.py", source.encode(), True)
    assert used and whole[0] == source.encode() and whole[2]
    fixed = with_parts[0].decode()
    assert with_parts[2] == [] and fixed.endswith('checkpoint = ModelCheckpoint(monitor="val_hdr")\n\\\ny = 2\n')
    assert '        # only rank zero reports\n        self.log("val_hdr", loss, sync_dist=True)\n' in fixed
