"""Applicability, as Ruff has it: each fix is safe or unsafe, decided once by the rule's ``check``.

A test rule marks the fix of ``safe_call()`` safe and that of ``risky_call()`` unsafe, each fix a
typed edit. The engine must apply safe fixes by default, unsafe ones only with ``unsafe_fixes`` or
when picked by hand (``only``), and both paths (report-only and fixing) must carry the same
applicability, since one decision feeds both.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ddpfix.edits import MODULE, NodeEdit, ReplaceExpression, Span
from ddpfix.findings import SAFE, UNSAFE
from ddpfix.sources import fix_source
from ddpfix.rules.base import Rule

SOURCE = b"safe_call()\nrisky_call()\n"
RENAMED = {"safe_call": "safe_done", "risky_call": "risky_done"}


class Decides(Rule):
    code, name, summary, fixable, triggers = "DDP950", "decides", "test rule with safe and unsafe fixes", True, ("_call",)

    def check(self, tree, ctx):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in RENAMED:
                safe = node.func.id == "safe_call" and b"#" not in ctx.data
                edit = ReplaceExpression(Span.of(ctx.position(node.func)), RENAMED[node.func.id])
                ctx.report(node, f"{node.func.id} found", fixable=True, safe=safe,
                           why="" if safe else "risky_call may do anything", edits=[edit])


@dataclass(frozen=True)
class AddDocstring(NodeEdit):
    """A docstring before the module's first statement (an edit of the module itself)."""

    kind = "Module"
    at = MODULE

    def rewrite(self, module):
        import libcst as cst

        return module.with_changes(body=[cst.parse_statement('"""Doc."""\n'), *module.body])


class Undecided(Decides):
    """The same rule saying nothing of safety: every fix is unsafe."""

    code, name = "DDP951", "undecided"

    def check(self, tree, ctx):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in RENAMED:
                edit = ReplaceExpression(Span.of(ctx.position(node.func)), RENAMED[node.func.id])
                ctx.report(node, f"{node.func.id} found", fixable=True, edits=[edit])


def kinds(result) -> list[tuple[int, str | None, bool]]:
    return [(f.line, f.applicability, f.fixed) for f in result.findings]


def test_by_default_only_the_safe_fix_is_applied():
    result = fix_source("x.py", SOURCE, [Decides])
    assert result.fixed == b"safe_done()\nrisky_call()\n"
    assert kinds(result) == [(1, SAFE, True), (2, UNSAFE, False)]
    assert result.findings[1].unsafe_reason == "risky_call may do anything"


def test_unsafe_fixes_apply_both():
    result = fix_source("x.py", SOURCE, [Decides], options={"unsafe_fixes": True})
    assert result.fixed == b"safe_done()\nrisky_done()\n"
    assert kinds(result) == [(1, SAFE, True), (2, UNSAFE, True)]


def test_an_unsafe_fix_picked_by_hand_is_applied_alone():
    risky = fix_source("x.py", SOURCE, [Decides]).findings[1]
    result = fix_source("x.py", SOURCE, [Decides], only={risky.key})
    assert result.fixed == b"safe_call()\nrisky_done()\n"
    assert kinds(result) == [(1, SAFE, False), (2, UNSAFE, True)]


def test_the_report_carries_what_the_fix_path_decides():
    report = fix_source("x.py", SOURCE, [Decides], fix=False)
    fixed = fix_source("x.py", SOURCE, [Decides])
    assert report.fixed is None
    assert [(f.line, f.applicability, f.unsafe_reason) for f in report.findings] == \
        [(f.line, f.applicability, f.unsafe_reason) for f in fixed.findings]


def test_without_a_decision_every_fix_is_unsafe():
    result = fix_source("x.py", SOURCE, [Undecided])
    assert result.fixed is None
    assert kinds(result) == [(1, UNSAFE, False), (2, UNSAFE, False)]


def test_where_check_does_not_prove_it_every_fix_is_unsafe_on_both_paths():
    source = SOURCE + b"# a comment\n"
    report = fix_source("x.py", source, [Decides], fix=False)
    fixed = fix_source("x.py", source, [Decides])
    assert fixed.fixed is None
    assert kinds(report) == kinds(fixed) == [(1, UNSAFE, False), (2, UNSAFE, False)]


def test_the_decision_is_taken_on_the_version_being_rewritten():
    """After another rule's fix moved the lines, the keys still match: the decision is remade on the
    file as it is when the rule runs (here the safe fix lands on line 2)."""

    class InsertsALine(Rule):
        code, name, summary, fixable, triggers = "DDP949", "inserts", "test rule adding a first line", True, ("_call",)

        def check(self, tree, ctx):
            first = tree.body[0]
            if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)):
                ctx.report(first, "no docstring", fixable=True, safe=True, edits=[AddDocstring()])

    result = fix_source("x.py", SOURCE, [InsertsALine, Decides])
    assert result.fixed == b'"""Doc."""\nsafe_done()\nrisky_call()\n'


# --- a rule that fixes through its check alone: typed edits ----------------------------------------

from ddpfix.edits import AddImport, ReplaceExpression, SetKeyword, Span  # noqa: E402


class Typed(Rule):
    """``train(x)`` gets ``sync=True`` (safe); ``legacy(x)`` becomes ``modern(x)`` plus ``import modern``
    (unsafe). One analysis: no ``apply``."""

    code, name, summary, fixable, triggers = "DDP952", "typed", "test rule with typed edits", True, ("(",)

    def check(self, tree, ctx):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                where = Span.of(ctx.position(node))
                if node.func.id == "train" and not node.keywords:
                    ctx.report(node, "train without sync", fixable=True, safe=True,
                               edits=[SetKeyword(where, "sync", "True")])
                elif node.func.id == "legacy":
                    ctx.report(node, "legacy call", fixable=True, why="modern may differ",
                               edits=[ReplaceExpression(where, "modern.run(" + ast.unparse(node.args[0]) + ")"),
                                      AddImport("modern")])


TYPED_SOURCE = b"train(\n    x,  # the data\n)\ny = legacy(2)\n"


def test_typed_edits_apply_the_safe_fix_keeping_comments():
    result = fix_source("x.py", TYPED_SOURCE, [Typed])
    assert result.fixed == b"train(\n    x,\n    sync=True,  # the data\n)\ny = legacy(2)\n"
    assert kinds(result) == [(1, SAFE, True), (5, UNSAFE, False)]  # where they stand in the fixed code


def test_typed_edits_with_unsafe_fixes_and_one_picked_by_hand():
    everything = fix_source("x.py", TYPED_SOURCE, [Typed], options={"unsafe_fixes": True})
    assert everything.fixed == b"import modern\ntrain(\n    x,\n    sync=True,  # the data\n)\ny = modern.run(2)\n"
    legacy = fix_source("x.py", TYPED_SOURCE, [Typed], fix=False).findings[1]
    picked = fix_source("x.py", TYPED_SOURCE, [Typed], only={legacy.key})
    assert picked.fixed == b"import modern\ntrain(\n    x,  # the data\n)\ny = modern.run(2)\n"


def test_a_typed_rule_reports_and_leaves_clean_files_without_libcst(monkeypatch):
    import ddpfix.engine as engine

    monkeypatch.setattr(engine, "_parse", lambda path, data: (_ for _ in ()).throw(AssertionError("parsed by LibCST")))
    report = fix_source("x.py", TYPED_SOURCE, [Typed], fix=False)
    assert kinds(report) == [(1, SAFE, False), (4, UNSAFE, False)]
    only_unsafe = fix_source("x.py", b"y = legacy(2)\n", [Typed])  # nothing chosen: nothing to parse
    assert only_unsafe.fixed is None and kinds(only_unsafe) == [(1, UNSAFE, False)]


def test_an_edit_that_would_lose_a_comment_is_not_applied():
    source = b"y = legacy(  # keep me\n    2)\n"
    result = fix_source("x.py", source, [Typed], options={"unsafe_fixes": True})
    assert result.fixed is None and kinds(result) == [(1, UNSAFE, False)]
