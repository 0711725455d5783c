"""sources.fix_source (and the engine behind it): the guarantees every front-end relies on."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from ddpfix.edits import MODULE, NodeEdit, ReplaceExpression, Span
from ddpfix.sources import fix_source
from ddpfix.rules import all_rules
from ddpfix.rules.base import Rule
from ddpfix.rules.cuda_generator import CudaGenerator

ALL = {"unsafe_fixes": True}  # the fix machinery is tested with every fix, safe or not

TWO_FIXES = b'''import torch
from torch.utils.data import DataLoader, random_split

a = DataLoader(range(4), shuffle=True, generator=torch.Generator(device="cuda"))
b = random_split(range(4), [2, 2], generator=torch.Generator("cuda").manual_seed(1))
'''


class Exploding(Rule):
    code, name, summary, fixable, triggers = "DDP900", "exploding", "test rule that raises", True, ("Generator",)

    def check(self, tree, ctx):
        raise ValueError("boom")


@dataclass(frozen=True)
class AppendStatement(NodeEdit):
    """``code`` appended to the module (an edit of the module itself)."""

    code: str
    kind = "Module"
    at = MODULE

    def rewrite(self, module):
        return module.with_changes(body=[*module.body, cst.parse_statement(self.code)])


class Corrupting(Rule):
    """Reports a fix whose edit makes code that does not compile (``return`` at module level)."""

    code, name, summary, fixable, triggers = "DDP901", "corrupting", "test rule that corrupts", True, ("Generator",)

    def check(self, tree, ctx):
        ctx.report(tree.body[0], "corrupt", fixable=True, edits=[AppendStatement("return 1\n")])


def test_files_without_triggers_are_not_parsed():
    result = fix_source("x.py", b"def broken(:\n", all_rules(), options=ALL)
    assert result.fixed is None and not result.problems and not result.findings


def test_parse_error_keeps_original_and_reports_position():
    data = b"import torch\ng = torch.Generator(\nDataLoader(\n"
    result = fix_source("x.py", data, all_rules(), options=ALL)
    assert result.fixed is None
    [problem] = result.problems
    assert problem.code == "E999" and problem.message.startswith("cannot parse") and problem.line


def test_wrong_coding_cookie_is_reported_not_raised():
    data = b"# -*- coding: klingon -*-\nfrom torch.utils.data import DataLoader\ntorch.Generator()\n"
    [problem] = fix_source("x.py", data, all_rules(), options=ALL).problems
    assert problem.code == "E902" and "decode" in problem.message


def test_invalid_utf8_is_reported_not_raised():
    data = b"from torch.utils.data import DataLoader\nx = '\xff\xfe'  # Generator\n"
    [problem] = fix_source("x.py", data, all_rules(), options=ALL).problems
    assert problem.code == "E902"


def test_a_crashing_rule_leaves_the_file_untouched():
    result = fix_source("x.py", TWO_FIXES, [CudaGenerator, Exploding], options=ALL)
    assert result.fixed is None
    assert [p.code for p in result.problems] == ["DDP900"]
    assert "internal error: ValueError: boom" in result.problems[0].message
    # The earlier rule's findings are still reported, but as not fixed.
    assert len(result.findings) == 2 and not any(f.fixed for f in result.findings)


def test_output_that_does_not_compile_is_never_returned():
    result = fix_source("x.py", TWO_FIXES, [Corrupting], options=ALL)
    assert result.fixed is None
    [problem] = result.problems
    assert problem.code == "DDP901" and "does not compile" in problem.message


def test_only_applies_exactly_the_chosen_fixes():
    full = fix_source("x.py", TWO_FIXES, [CudaGenerator], options=ALL)
    first, second = full.findings
    assert first.fixed and second.fixed
    only_second = fix_source("x.py", TWO_FIXES, [CudaGenerator], only={second.key}, options=ALL)
    assert [f.fixed for f in only_second.findings] == [False, True]
    text = only_second.output.decode()
    assert 'torch.Generator(device="cuda")' in text and 'torch.Generator().manual_seed(1)' in text
    none = fix_source("x.py", TWO_FIXES, [CudaGenerator], only=set(), options=ALL)
    assert none.fixed is None and len(none.findings) == 2


def test_fix_keys_are_stable_across_runs():
    keys = [f.key for f in fix_source("x.py", TWO_FIXES, [CudaGenerator], options=ALL).findings]
    assert keys == [f.key for f in fix_source("x.py", TWO_FIXES, [CudaGenerator], options=ALL).findings]
    assert keys[0].line == 4 and keys[1].line == 5


def test_match_statements_and_unexpected_errors_never_escape(monkeypatch):
    source = b"from torch.utils.data import DataLoader\nmatch x:\n    case 1:\n        g = torch.Generator()\n"
    assert not fix_source("x.py", source, all_rules(), options=ALL).problems

    from ddpfix.imports import ImportTable

    def broken(module):
        raise KeyError("boom")

    monkeypatch.setattr(ImportTable, "from_tree", staticmethod(broken))
    result = fix_source("x.py", TWO_FIXES, all_rules(), options=ALL)
    assert result.fixed is None and [p.code for p in result.problems] == ["E001"]


def test_without_facts_a_file_is_its_own_run():
    source = b'''import lightning as L


class Model(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.loss(batch))
'''
    result = fix_source("m.py", source, all_rules(), options=ALL)  # no facts: as the stdin mode and editors call it
    assert not result.problems
    assert b'self.log("val_loss", self.loss(batch), sync_dist=True)' in result.fixed


# ``os`` is used but not imported: DDP003 cannot tell what ``os.environ["RANK"]`` is until DDP008's
# fix (which runs after it) imports os. Found by bench/fuzz.py.
IMPORT_ADDED_BY_A_LATER_RULE = b'''import lightning as L
from transformers import AutoModelForCausalLM


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = AutoModelForCausalLM.from_pretrained("gpt2", load_in_8bit=True, device_map="auto")

    def training_step(self, batch, batch_idx):
        print("rank", self.global_rank)
        if int(os.environ["RANK"]) == 0:
            self.log("train_loss", batch)
'''


def test_a_fix_that_changes_what_an_earlier_rule_sees_is_followed_in_the_same_run():
    first = fix_source("x.py", IMPORT_ADDED_BY_A_LATER_RULE, all_rules(), options=ALL)
    assert b"import os\n" in first.output
    assert b'self.log("train_loss", batch, rank_zero_only=True)' in first.output
    assert {f.code for f in first.findings if f.fixed} == {"DDP003", "DDP008"}
    second = fix_source("x.py", first.output, all_rules(), options=ALL)
    assert second.fixed is None and not [f for f in second.findings if f.fixable]


def test_only_applies_the_picked_fixes_in_one_round():
    first = fix_source("x.py", IMPORT_ADDED_BY_A_LATER_RULE, all_rules(), options=ALL)
    picked = {f.key for f in first.findings if f.code == "DDP008"}
    one = fix_source("x.py", IMPORT_ADDED_BY_A_LATER_RULE, all_rules(), only=picked, options=ALL)
    assert b"import os\n" in one.output and b"rank_zero_only" not in one.output


def test_a_file_that_parses_but_does_not_compile_is_reported_and_left_alone():
    # CPython's parser accepts a repeated keyword; its compiler does not. Found by bench/fuzz.py:
    # the fix removed one ``device=`` and left the other for a second run.
    source = b'import torch\nfrom torch.utils.data import DataLoader\n\nDataLoader(range(4), generator=torch.Generator(device="cuda", device="cuda"))\n'
    result = fix_source("x.py", source, all_rules(), options=ALL)
    assert result.fixed is None
    assert [(p.code, p.message, p.line) for p in result.problems] == [
        ("E999", "cannot compile: keyword argument repeated: device", 4)
    ]
    assert all(not f.fixed for f in result.findings)


class _Flip(Rule):
    """Rewrites the module's first statement ``x = <before>`` into ``x = <after>``."""

    fixable, triggers = True, ("x =",)
    before, after = "", ""

    def check(self, tree, ctx):
        first = tree.body[0]
        if isinstance(first, ast.Assign) and ast.unparse(first.value) == self.before:
            edit = ReplaceExpression(Span.of(ctx.position(first.value)), self.after)
            ctx.report(first, "flip", fixable=True, edits=[edit])


class FlipOneToTwo(_Flip):
    code, name, summary, before, after = "DDP902", "one-to-two", "test rule", "1", "2"


class FlipTwoToOne(_Flip):
    code, name, summary, before, after = "DDP903", "two-to-one", "test rule", "2", "1"


class FlipTwoToThree(_Flip):
    code, name, summary, before, after = "DDP904", "two-to-three", "test rule", "2", "3"


def test_fixes_that_undo_each_other_are_reported_and_the_file_left_alone():
    # Without a bound on the rounds fix mode would never return; at the bound, writing the last
    # round's code would leave a file that the next run changes again.
    result = fix_source("x.py", b"x = 1\n", [FlipOneToTwo, FlipTwoToOne], options=ALL)
    assert result.fixed is None
    assert [(p.code, p.message) for p in result.problems] == [(
        "DDP902",
        "internal error: the fixes did not settle after 3 rounds (DDP902, DDP903 kept changing the file); "
        "file left as it was",
    )]
    assert result.findings and not [f for f in result.findings if f.fixed]


def test_fixes_that_build_on_each_other_settle():
    # The contrast: a chain of fixes reaches a fixed point, is written, and a second run has nothing to do.
    result = fix_source("x.py", b"x = 1\n", [FlipTwoToThree, FlipOneToTwo], options=ALL)
    assert result.fixed == b"x = 3\n" and not result.problems
    assert fix_source("x.py", result.fixed, [FlipTwoToThree, FlipOneToTwo], options=ALL).fixed is None


# --- rules that read CPython's tree (Rule.check) ----------------------------------------------------

GATED_BARRIER = b'''import torch
import torch.distributed as dist
import lightning as L


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.outputs = []

    def validation_step(self, batch, batch_idx):
        self.outputs.append(batch)

    def on_validation_epoch_end(self):
        self.log("val_mean", torch.stack(self.outputs).mean(), sync_dist=True)

    def on_fit_end(self):
        if self.trainer.is_global_zero:
            dist.barrier()
'''


def _ddp005():
    return next(rule for rule in all_rules() if rule.code == "DDP005")


def test_a_file_whose_rules_all_read_cpythons_tree_is_not_parsed_by_libcst(monkeypatch):
    import ddpfix.engine as engine

    def no_libcst(path, data):
        raise AssertionError("parsed by LibCST")

    monkeypatch.setattr(engine, "_parse", no_libcst)
    source = b"import torch.distributed as dist\n\ndef f():\n    if dist.get_rank() == 0:\n        dist.barrier()\n"
    [finding] = fix_source("x.py", source, all_rules(), options=ALL).findings
    assert (finding.code, finding.line, finding.column, finding.end_column) == ("DDP005", 5, 9, 23)
    assert "under the rank guard on line 4" in finding.detail


def test_tree_rule_findings_stand_in_the_code_that_would_be_written():
    # DDP010 adds ``self.outputs.clear()`` to the epoch-end hook: the barrier moves down a line.
    result = fix_source("m.py", GATED_BARRIER, all_rules(), options=ALL)
    assert result.fixed is not None
    [collective] = [f for f in result.findings if f.code == "DDP005"]
    lines = result.fixed.decode().splitlines()
    assert lines[collective.line - 1].strip() == "dist.barrier()" and collective.line == 20
    assert f"on line {collective.line - 1}" in collective.detail
    report_only = fix_source("m.py", GATED_BARRIER, all_rules(), fix=False, options=ALL)
    assert [f.line for f in report_only.findings if f.code == "DDP005"] == [19]


class ExplodingReader(Rule):
    code, name, summary, fixable, triggers = "DDP902", "exploding-reader", "test rule that raises", False, ("barrier",)

    def check(self, tree, ctx):
        raise ValueError("boom")


def test_a_crashing_tree_rule_leaves_the_file_untouched_and_keeps_the_other_findings():
    result = fix_source("m.py", GATED_BARRIER, [*all_rules(), ExplodingReader], options=ALL)
    assert result.fixed is None
    [problem] = result.problems
    assert problem.code == "DDP902" and "ValueError: boom" in problem.message
    assert {"DDP005", "DDP010"} <= {f.code for f in result.findings} and not any(f.fixed for f in result.findings)
    [collective] = [f for f in result.findings if f.code == "DDP005"]
    assert collective.line == 19  # in the bytes the file keeps


def test_a_rule_must_implement_check():
    import pytest

    with pytest.raises(TypeError, match="must implement check"):
        class Fixing(Rule):  # noqa: F841 - defining it is the test
            code, name, summary, fixable, triggers = "DDP903", "fixing-nothing", "test", True, ()

    class Typed(Rule):
        code, name, summary, fixable, triggers = "DDP903", "fixing-reader", "test", True, ()

        def check(self, tree, ctx):
            pass

    assert Typed.fixable  # fixes through typed edits from its check


def test_tree_rule_findings_honour_noqa_on_the_first_line_of_their_statement():
    source = (b"import torch.distributed as dist\n\ndef f():\n    if dist.get_rank() == 0:\n"
              b"        x = dist.all_gather(  # noqa: DDP005\n            y)\n        z = dist.broadcast(\n            w)\n")
    findings = fix_source("x.py", source, [_ddp005()], options=ALL).findings
    assert [(f.line, f.code) for f in findings] == [(7, "DDP005")]


def test_a_file_libcst_cannot_reproduce_is_reported_not_rewritten():
    # LibCST drops a form feed that stands before code on its line; a fix elsewhere would lose it.
    data = TWO_FIXES.replace(b"\na = DataLoader", b"\n\x0ca = DataLoader")
    result = fix_source("x.py", data, all_rules(), options=ALL)
    assert result.fixed is None
    assert result.findings and not any(f.fixed for f in result.findings)
    [problem] = result.problems
    assert problem.level == "note" and "byte for byte" in problem.message


def test_a_file_libcst_loses_text_of_is_reported_not_rewritten():
    """Found by the fuzz: LibCST gives back this file without a comment line (blank lines with mixed
    newlines before it); the fixes it has would have been written with the comment gone."""
    from pathlib import Path

    data = (Path(__file__).parent / "data" / "libcst_round_trip_loss.py.bin").read_bytes()
    assert cst.parse_module(data.replace(b"\x0c", b" ")).bytes != data.replace(b"\x0c", b" ")
    result = fix_source("x.py", data, all_rules(), options=ALL)
    assert result.fixed is None and any(f.fixable for f in result.findings)
    assert [p.level for p in result.problems] == ["note"]


class Renames(Rule):
    """Reports every ``Generator`` call, fixing it by renaming: a rule that decides once."""

    code, name, summary, fixable, triggers = "DDP904", "renames", "test rule", True, ("Generator",)
    checked = 0

    def check(self, tree, ctx):
        type(self).checked += 1
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Generator":
                edit = ReplaceExpression(Span.of(ctx.position(node.func)), ast.unparse(node.func.value) + ".Gen")
                ctx.report(node, "generator", fixable=True, edits=[edit])


def test_a_report_never_parses_with_libcst_and_a_fix_uses_the_same_decision(monkeypatch):
    import ddpfix.engine as engine

    parse = engine._parse
    monkeypatch.setattr(engine, "_parse", lambda path, data: (_ for _ in ()).throw(AssertionError("parsed by LibCST")))
    Renames.checked = 0
    report = fix_source("x.py", TWO_FIXES, [Renames], fix=False, options=ALL)
    assert Renames.checked == 1 and report.fixed is None
    assert [(f.line, f.column, f.fixable, f.fixed) for f in report.findings] == [(4, 50, True, False), (5, 46, True, False)]
    monkeypatch.setattr(engine, "_parse", parse)
    fixed = fix_source("x.py", TWO_FIXES, [Renames], options=ALL)
    assert fixed.fixed.count(b".Gen(") == 2 and all(f.fixed for f in fixed.findings)
    assert [(f.line, f.column, f.end_column) for f in fixed.findings] == [(f.line, f.column, f.end_column) for f in report.findings]


def test_a_report_does_not_import_libcst(tmp_path):
    """LibCST takes longer to import than a small file's whole report: ``--check`` never loads it."""
    import subprocess
    import sys

    script = tmp_path / "train.py"
    script.write_bytes(TWO_FIXES)
    probe = ("import sys; from ddpfix.cli import main\n"
             "sys.argv = ['ddpfix', '--check', '--no-color', sys.argv[1]]\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print('LIBCST' if any(m == 'libcst' or m.startswith('libcst.') for m in sys.modules) else 'CLEAN')")
    out = subprocess.run([sys.executable, "-c", probe, str(script)], capture_output=True, text=True, timeout=60)
    assert "DDP002" in out.stdout and out.stdout.strip().endswith("CLEAN"), out.stdout + out.stderr


def test_a_report_with_nothing_to_fix_loads_no_edit_kind_nor_sarif(tmp_path):
    """Start-up time: the kinds of edit (frozen dataclasses) are loaded when a fix is made, SARIF
    when it is asked for; ``--check`` of a file with no findings loads neither."""
    import subprocess
    import sys

    script = tmp_path / "train.py"
    script.write_bytes(b'from lightning import Trainer\nTrainer(strategy="ddp", devices=2)\n')
    probe = ("import sys; from ddpfix.cli import main\n"
             "sys.argv = ['ddpfix', '--check', '--no-color', sys.argv[1]]\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(' '.join(sorted(m for m in sys.modules if m.startswith('ddpfix.'))))")
    out = subprocess.run([sys.executable, "-c", probe, str(script)], capture_output=True, text=True, timeout=60)
    loaded = set(out.stdout.split())
    assert "ddpfix.engine" in loaded, out.stdout + out.stderr
    assert not {m for m in loaded if m.startswith("ddpfix.edits.") and m != "ddpfix.edits._base"}, loaded
    assert "ddpfix.sarif" not in loaded


def test_comment_lines_after_a_callback_name_do_not_stall_the_facts_scan():
    """The facts regex once matched a run of ``#``-filled comment lines after ``ModelCheckpoint`` in
    exponentially many ways (a 1 kB fuzzed file never finished); an alarm turns a stall into a failure."""
    import signal

    from ddpfix.facts import file_facts

    source = b"from lightning.pytorch.callbacks import ModelCheckpoint\n" + b"#a#b # #c#\t#\n" * 40 + b"x = 1\n"
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("the facts scan stalled")))
    signal.alarm(10)
    try:
        file_facts("x.py", source)
    finally:
        signal.alarm(0)
