"""DDP003 rank-gated-log: ``self.log`` under a rank guard deadlocks or starves the other ranks."""

from __future__ import annotations

import ast

from dataclasses import dataclass, field

import libcst as cst

from ddpfix.imports import TREE_COMPOUND
from ddpfix.transforms._ast_shapes import a_method_calls_self_log
from ddpfix.transforms._args import ReplaceCalls, is_true, keeps_comments, keyword, with_keyword, without_keyword
from ddpfix.transforms._lightning import lightning_methods, self_method_calls, string_value
from ddpfix.transforms._names import exit_in, statement_names
from ddpfix.transforms._rank_gated_log_safety import move_unproven, synced_elsewhere, unmonitored_unproven
from ddpfix.transforms._ranks import RANK_TRIGGERS, Gated, Guard, RankTests, gated_statements
from ddpfix.transforms._tree_lightning import FUNCTIONS, arguments_in_order, has_comment, has_star
from ddpfix.transforms._tree_lightning import is_elif
from ddpfix.transforms._tree_lightning import child_blocks as tree_child_blocks
from ddpfix.transforms._tree_lightning import is_true as tree_is_true
from ddpfix.transforms._tree_lightning import keyword as tree_keyword
from ddpfix.transforms._tree_lightning import lightning_methods as tree_lightning_methods
from ddpfix.transforms._tree_lightning import self_method_calls as tree_self_method_calls
from ddpfix.transforms._tree_lightning import string_value as tree_string_value
from ddpfix.transforms._tree_names import exit_in as tree_exit_in
from ddpfix.transforms._tree_names import statement_names as tree_statement_names
from ddpfix.transforms._tree_ranks import TreeRankTests
from ddpfix.transforms._tree_ranks import only_returns
from ddpfix.transforms.base import NeedsLibCST, Rule, RuleContext, TreeView

LOG_METHODS = frozenset({"log", "log_dict"})


class RankGatedLog(Rule):
    """
    # DDP003 rank-gated-log

    ## What it does
    Finds `self.log` / `self.log_dict` in a LightningModule that run on rank 0 only — under
    `if self.trainer.is_global_zero:`, `if self.global_rank == 0:`, `rank_zero_only.rank == 0`,
    `dist.get_rank() == 0` and kin, after `if not self.trainer.is_global_zero: return`, in the `else`
    of a `!= 0` test, or in a method decorated `@rank_zero_only` — and fixes them:
    - a metric no callback monitors gets `rank_zero_only=True` (and loses `sync_dist=True`, a no-op
      then); the guard stays;
    - a metric that `EarlyStopping`, `ModelCheckpoint` or a scheduler's `"monitor"` watches (in any
      file of the run) is logged on every rank instead: the call moves out of the guard, just after
      it, with `sync_dist=True`; everything else stays guarded, and the `if` goes only if it is left
      empty.
    `--log-mode rank-zero-only` / `--log-mode sync-dist` force one of the two.

    A gated log that already says `rank_zero_only=True` is left alone, unless a callback monitors
    its key: that is the same pitfall (a run over part of the project may have written it), reported
    without a fix.

    ## Why it breaks under DDP
    With `sync_dist=True` only rank 0 enters the all-reduce: the other ranks wait for it forever
    (PL#19783). Without it, the other ranks never have the key: a callback monitoring it raises
    "Early stopping conditioned on metric `val_loss` which is not available" (or "could not find the
    monitored key") on them, and since callbacks decide through collectives, ranks crash or hang
    (PL#15852, PL#19072). The docs: the `is_global_zero` guard belongs around the logging call's side
    effects, not around the logging itself.

    ## Before
    ```python
    def on_validation_epoch_end(self):
        loss = torch.stack(self.losses).mean()
        if self.trainer.is_global_zero:
            self.log("val_loss", loss, sync_dist=True)
            print(f"val_loss={loss:.3f}")
    ```

    ## After (val_loss monitored by EarlyStopping)
    ```python
    def on_validation_epoch_end(self):
        loss = torch.stack(self.losses).mean()
        if self.trainer.is_global_zero:
            print(f"val_loss={loss:.3f}")
        self.log("val_loss", loss, sync_dist=True)
    ```
    (not monitored: `self.log("val_loss", loss, rank_zero_only=True)`, guard kept)

    ## When it does not fix
    A monitored metric whose value is computed inside the guard, or is a name set only under an
    earlier `if <rank 0>:` (it does not exist on the other ranks: compute it on every rank first); a
    guard whose other branch leaves (`else: return`: the moved call would still run on rank 0 alone,
    now in a sync, a hang); a log nested deeper than the guard's own block, under a guard that also
    tests something else (`and batch_idx == 0`), or in a `@rank_zero_only` method; a logged name
    that is not a literal while some metric is monitored; a monitored metric already logged with
    `rank_zero_only=True`; a call whose rewrite would drop a comment.

    ## Fix safety
    - **safe** — `rank_zero_only=True` (and `sync_dist=True` dropped), where nothing monitors the
      key. In Lightning it only turns the sync off, so it is right exactly then, and "nothing
      monitors it" needs the whole project: the run's facts must be whole (a folder that holds the
      project; a file named alone, stdin, the language server or pre-commit's staged files do not
      see `train.py`'s `EarlyStopping`), every monitor in it a literal (`unknown_monitors` empty),
      the logged names literals, no monitor of this file unknown (`monitor=args.monitor`, `self.hparams.monitor`,
      `dict(monitor=...)`, `ModelCheckpoint(**cfg)`, a non-literal `"monitor"`, `LightningCLI` and its
      YAML), and no monitor naming the key's `_step` / `_epoch` forms (`on_step=True, on_epoch=True`).
      Monitors are read wherever they are named: `EarlyStopping("val_loss")`, `ModelCheckpoint`'s
      third positional argument, `monitor=` in any call (a subclass's `super().__init__(monitor=...)`),
      `ckpt.monitor = "val_loss"`, a `"monitor"` key. And no other `self.log` of the class may log
      the key (or a key that is not a literal) with a sync (`sync_dist` not a literal False,
      `**kwargs`): an `else:` branch or an `if self.global_rank > 0:` that logs it with
      `sync_dist=True` leaves the other ranks in an all-reduce that rank 0 no longer enters.
    - **unsafe** — the same where any of that is not proven.
    - **safe** — moving a monitored metric's log out of its guard with `sync_dist=True`, where the
      monitor is a literal found in the run (a known monitor needs no whole view), the method is a
      hook Lightning calls on every rank (`training_step`, `on_validation_epoch_end`, ...) and cannot
      leave before the guard, the guard is a plain rank test at its top level, every value the call
      reads is a literal, a parameter or a name bound before the guard on every rank without a rank
      test (`x.item()`, `d["k"]`, arithmetic of those too), its keywords are literals, and the
      statements it jumps over call only functions known to leave values alone (`print`,
      `self.print`, `x.item()`, ...) and change nothing in place, and no other `self.log` of the
      class may log the key with a sync.
    - **unsafe** — the same move otherwise: a value from `self.attribute`, a call (`self.summary()`),
      a name set in an `if`/loop before the guard or computed from the rank, a helper method (it may
      be called on rank 0 only), a `return` before the guard (not every rank may reach the sync), a
      guard nested in a loop or `with`, an unknown call inside the guard (the log now runs after
      it), an in-place change inside the guard on any name (`pct = acc; pct *= 100` changes `acc`;
      `x[i] = v`, `x.attr = v`; `self.attr = v` only where the class defines a setter or
      `__setattr__`), the same key logged with a sync elsewhere in the class; and a move forced by `--log-mode sync-dist` for an unmonitored, unsynced metric (its
      value turns from rank 0's into the mean over ranks).
    - **no fix** — the refusals above.
    """

    code = "DDP003"
    name = "rank-gated-log"
    summary = "self.log under a rank guard: other ranks hang in the sync or lack the monitored key"
    fixable = True
    triggers = ("self.log", RANK_TRIGGERS)
    lightning_only = True
    module_only = True
    uses_facts = True

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        return a_method_calls_self_log(tree)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        edits = _Edits()
        tests = RankTests(ctx.imports)
        mode = str(ctx.options.get("log_mode", "auto"))
        for _cls, method in lightning_methods(module, ctx.imports, ctx.facts.lightning_modules):
            for gated in gated_statements(method, tests):
                for call in self_method_calls(gated.statement, LOG_METHODS):
                    if is_true(keyword(call, "rank_zero_only")):
                        names = logged_names(call)
                        label = f"self.{call.func.attr.value}({', '.join(repr(n) for n in names) if names else '...'})"
                        where = _where(ctx, gated.guard)
                        message = _monitored_rank_zero_only(label, where, names, ctx.facts)
                        if message is not None:
                            ctx.report(call, message, fixable=False)
                        continue  # otherwise it already says what it means
                    self._handle(call, gated, mode, ctx, edits, method, tests)
        return edits.apply(module, ctx.view.positions)

    def _handle(self, call: cst.Call, gated: Gated, mode: str, ctx: RuleContext, edits: _Edits,
                method: cst.FunctionDef, tests: RankTests) -> None:
        names = logged_names(call)
        label = f"self.{call.func.attr.value}({', '.join(repr(n) for n in names) if names else '...'})"
        where = _where(ctx, gated.guard)
        monitors = [m for n in names or () for m in ctx.facts.monitored.get(n, ())]
        synced = is_true(keyword(call, "sync_dist"))
        if mode == "sync-dist" or (mode == "auto" and monitors):
            self._move_out(call, gated, ctx, edits, f"{label} runs {where}", monitors, method, tests)
            return
        if names is None and ctx.facts.monitored and mode == "auto":
            watched = ", ".join(sorted(ctx.facts.monitored))
            ctx.report(call, f"{label} runs {where}: its name is not a literal, and {watched} is monitored; if this "
                       "is a monitored metric, log it on every rank with sync_dist=True", fixable=False)
            return
        if monitors:  # --log-mode rank-zero-only on a monitored metric would keep the crash
            ctx.report(call, f"{label} runs {where}, but {names[0]} is monitored by {monitors[0].describe()}: "
                       "rank_zero_only=True would leave the other ranks without it; use --log-mode sync-dist", fixable=False)
            return
        if any(arg.star for arg in call.args):
            ctx.report(call, f"{label} runs {where}: other ranks never log it; not rewritten: the call passes *args or "
                       "**kwargs, so rank_zero_only=True could clash with them", fixable=False)
            return
        problem = (
            "only rank 0 enters the sync_dist all-reduce, so the other ranks hang"
            if synced
            else "the other ranks never log the key, so their logging falls out of step"
        )
        fixed = with_keyword(without_keyword(call, "sync_dist"), "rank_zero_only", "True")
        message = f"{label} runs {where}: {problem}; mark it rank_zero_only=True"
        if ctx.report_fix(call, message, call, fixed):
            edits.calls[call] = fixed

    def _move_out(self, call, gated: Gated, ctx: RuleContext, edits: _Edits, what: str, monitors,
                  method: cst.FunctionDef, tests: RankTests) -> None:
        reason = (
            f"{monitors[0].metric} is monitored by {monitors[0].describe()}: the other ranks crash or hang without it"
            if monitors
            else "it must be logged on every rank"
        )
        message = f"{what}, but {reason}; log it on every rank, after the guard, with sync_dist=True"
        refusal = _why_not_movable(call, gated) or _set_on_rank_zero_only(call, gated.guard, method, tests)
        if refusal is not None:
            ctx.report(call, f"{message} (not rewritten: {refusal})", fixable=False)
            return
        moved = gated.statement.with_changes(
            body=[gated.statement.body[0].with_changes(value=with_keyword(call, "sync_dist", "True"))]
        )
        if not keeps_comments(call, moved.body[0].value):
            ctx.report(call, f"{message} (not rewritten: a comment inside the call would be lost)", fixable=False)
            return
        if ctx.report(call, message, fixable=True):
            edits.move(gated, moved)


    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """``apply`` on CPython's tree, nothing fixed: the same findings, messages and ``fixable``.
        Raises ``NeedsLibCST`` where a fix would be offered for a call with a comment inside:
        whether the rewrite keeps it (``keeps_comments``) only LibCST's tree can tell."""
        tests = TreeRankTests(ctx.imports)
        mode = str(ctx.options.get("log_mode", "auto"))
        for cls, method in tree_lightning_methods(tree, ctx.imports, ctx.facts.lightning_modules):
            for gated in _tree_gated_lines(method, tests, ctx.view):
                for call in tree_self_method_calls(list(gated.line), LOG_METHODS):
                    if tree_is_true(tree_keyword(call, "rank_zero_only")):
                        names = _tree_logged_names(call)
                        label = f"self.{call.func.attr}({', '.join(repr(n) for n in names) if names else '...'})"
                        where = _where(ctx, gated.guard)
                        message = _monitored_rank_zero_only(label, where, names, ctx.facts)
                        if message is not None:
                            _tree_report(ctx, call, gated, message, fixable=False)
                        continue  # otherwise it already says what it means
                    self._check_call(call, gated, mode, ctx, tree, cls, method, tests)

    def _check_call(self, call: ast.Call, gated: _TreeGated, mode: str, ctx: RuleContext, tree: ast.Module,
                    cls: ast.ClassDef, method: ast.FunctionDef | ast.AsyncFunctionDef, tests: TreeRankTests) -> None:
        """``_handle`` without the edits; here each fix is proven safe, or marked unsafe with why."""
        def report(message: str, fixable: bool = False, why: str | None = None) -> None:
            _tree_report(ctx, call, gated, message, fixable=fixable, safe=why is None, why=why or "")

        names = _tree_logged_names(call)
        label = f"self.{call.func.attr}({', '.join(repr(n) for n in names) if names else '...'})"
        where = _where(ctx, gated.guard)
        monitors = [m for n in names or () for m in ctx.facts.monitored.get(n, ())]
        synced = tree_is_true(tree_keyword(call, "sync_dist"))
        if mode == "sync-dist" or (mode == "auto" and monitors):
            self._check_move_out(call, ctx, f"{label} runs {where}", monitors, report, gated, cls, method, synced, tests)
            return
        if names is None and ctx.facts.monitored and mode == "auto":
            watched = ", ".join(sorted(ctx.facts.monitored))
            report(f"{label} runs {where}: its name is not a literal, and {watched} is monitored; if this "
                   "is a monitored metric, log it on every rank with sync_dist=True")
            return
        if monitors:
            report(f"{label} runs {where}, but {names[0]} is monitored by {monitors[0].describe()}: "
                   "rank_zero_only=True would leave the other ranks without it; use --log-mode sync-dist")
            return
        if has_star(call):
            report(f"{label} runs {where}: other ranks never log it; not rewritten: the call passes *args or "
                   "**kwargs, so rank_zero_only=True could clash with them")
            return
        problem = (
            "only rank 0 enters the sync_dist all-reduce, so the other ranks hang"
            if synced
            else "the other ranks never log the key, so their logging falls out of step"
        )
        _defer_if_commented(call, ctx)  # ``report_fix``: the keywords' rewrite may drop or repeat it
        # rank_zero_only=True only turns the sync off (Lightning's ``_Sync``): nothing else changes,
        # unless a callback monitors the key, which then never exists on the other ranks.
        # The other ranks may also log the key with a sync elsewhere (``else:``, ``if rank > 0:``):
        # rank 0, now out of the sync, leaves them in their all-reduce.
        why = unmonitored_unproven(names, ctx.facts, tree) or synced_elsewhere(call, names, cls, _tree_logged_names)
        report(f"{label} runs {where}: {problem}; mark it rank_zero_only=True", fixable=True, why=why)

    def _check_move_out(self, call: ast.Call, ctx: RuleContext, what: str, monitors, report, gated: _TreeGated,
                        cls: ast.ClassDef, method, synced: bool, tests: TreeRankTests) -> None:
        """``_move_out`` without the edits."""
        reason = (
            f"{monitors[0].metric} is monitored by {monitors[0].describe()}: the other ranks crash or hang without it"
            if monitors
            else "it must be logged on every rank"
        )
        message = f"{what}, but {reason}; log it on every rank, after the guard, with sync_dist=True"
        refusal = _tree_why_not_movable(call, gated) or _tree_set_on_rank_zero_only(call, gated.guard, method, tests)
        if refusal is not None:
            report(f"{message} (not rewritten: {refusal})")
            return
        _defer_if_commented(call, ctx)  # adding ``sync_dist=True`` may repeat a comment between arguments
        why = (move_unproven(call, method, gated.guard.node, _tree_jumped(gated), synced, bool(monitors), tests, cls)
               or synced_elsewhere(call, _tree_logged_names(call), cls, _tree_logged_names))
        report(message, fixable=True, why=why)


def _where(ctx: RuleContext, guard: Guard) -> str:
    if guard.branch == "decorator":
        return "in a @rank_zero_only method"
    return f"under the rank guard on line {ctx.position(guard.node).start.line}"


def _monitored_rank_zero_only(label: str, where: str, names: list[str] | None, facts) -> str | None:
    """The finding for a gated call already marked ``rank_zero_only=True`` whose key a callback
    monitors: the pitfall itself (a partial run's fix may have written it), never fixed here."""
    monitors = [m for n in names or () for m in facts.monitored.get(n, ())]
    if not monitors:
        return None
    return (f"{label} runs {where} with rank_zero_only=True, but {monitors[0].metric} is monitored by "
            f"{monitors[0].describe()}: the other ranks never have it, so they crash or hang; log it on every "
            "rank with sync_dist=True instead (not rewritten)")


def logged_names(call: cst.Call) -> list[str] | None:
    """The metric names a ``self.log``/``self.log_dict`` call logs, when they are literals."""
    first = next((a for a in call.args if a.keyword is None or a.keyword.value in ("name", "dictionary")), None)
    if first is None or first.star:
        return None
    if call.func.attr.value == "log":
        name = string_value(first.value)
        return [name] if name is not None else None
    if isinstance(first.value, cst.Dict):
        keys = [string_value(e.key) if isinstance(e, cst.DictElement) else None for e in first.value.elements]
        return keys if keys and all(k is not None for k in keys) else None
    return None


def _why_not_movable(call: cst.Call, gated: Gated) -> str | None:
    guard = gated.guard
    if guard.branch == "decorator":
        return "the whole method is @rank_zero_only"
    if not guard.pure:
        return "the guard also tests something else, so moving the call out would log more often"
    if not guard.standalone:
        return "the guard is an `elif`"
    if guard.nested:
        return "it sits under more than one rank guard"
    if not gated.direct:
        return "the call is nested deeper than the guard's own block"
    statement = gated.statement
    if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Expr) or statement.body[0].value is not call:
        return "the call is part of a larger statement"
    if any(arg.star for arg in call.args):
        return "the call passes *args or **kwargs"
    if guard.branch in ("body", "orelse") and _other_branch_logs(guard):
        return "the other branch of the guard logs too"
    if guard.branch in ("body", "orelse"):
        other = guard.node.orelse if guard.branch == "body" else guard.node.body
        exit_word = exit_in(other) if other is not None else None
        if exit_word:
            return f"the other ranks `{exit_word}` in the other branch of the guard, so the moved call would still run on rank 0 only"
    block = list(gated.block)
    index = block.index(statement)
    if guard.branch == "return":
        jumped = block[block.index(guard.node) + 1 : index]  # the call moves above these and the guard
    else:
        jumped = [*block[:index], *block[index + 1 :]]  # the call moves below all of these
    jumped = [s for s in jumped if not _only_logs(s)]
    for other in jumped:
        exit_word = exit_in(other)
        if exit_word:
            return f"the guard can `{exit_word}` before the call would run"
    # What the logged value depends on: the call's arguments (``self.log`` itself reads ``self``).
    names = [statement_names(arg.value) for arg in call.args]
    reads = set().union(*(n.reads for n in names))
    binds = set().union(*(n.binds for n in names))  # a walrus inside the call
    for other in jumped:
        other_names = statement_names(other)
        clash = sorted(reads & other_names.writes)
        if clash:
            name = "self.…" if clash[0] == "self" else clash[0]
            return f"`{name}` is computed or changed inside the guard, on rank 0 only; compute it on every rank first"
        clash = sorted(binds & (other_names.reads | other_names.writes))
        if clash:
            return f"the call binds `{clash[0]}`, which the guard also uses"
    return None


def _set_on_rank_zero_only(call: cst.Call, guard: Guard, method: cst.FunctionDef, tests: RankTests) -> str | None:
    """A name the call reads that is neither a parameter nor bound before the guard except under
    ``if <rank 0>:`` guards of the method's top level: on the other ranks the moved call would raise
    NameError. (Only for a guard at the method's top level; elsewhere ``check`` marks the move unsafe.)"""
    body = list(method.body.body) if isinstance(method.body, cst.IndentedBlock) else []
    if not any(statement is guard.node for statement in body):
        return None
    parameters = method.params
    bound = {p.name.value for p in [*parameters.posonly_params, *parameters.params, *parameters.kwonly_params]}
    bound |= {p.name.value for p in (parameters.star_arg, parameters.star_kwarg) if isinstance(p, cst.Param)}
    reads = set().union(*(statement_names(arg.value).reads for arg in call.args))
    zero_only: set[str] = set()
    for statement in body[: next(i for i, s in enumerate(body) if s is guard.node)]:
        binds = statement_names(statement).binds
        zero = (isinstance(statement, cst.If) and statement.orelse is None
                and (tests.classify(statement.test) or ("",))[0] == "zero")
        for name in binds:
            if zero and name not in bound:
                zero_only.add(name)
            else:
                bound.add(name)
                zero_only.discard(name)
    unset = sorted(reads & zero_only)
    if not unset:
        return None
    return f"`{unset[0]}` is only set on rank 0 (the guard above): the other ranks would raise NameError; compute it on every rank first"


def _other_branch_logs(guard) -> bool:
    node = guard.node
    other = node.orelse if guard.branch == "body" else node.body
    if other is None:
        return False
    return bool(self_method_calls(other, LOG_METHODS))


def _only_logs(statement: cst.CSTNode) -> bool:
    """A statement that is just ``self.log(...)``: it changes nothing another log call could read."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    calls = [s.value for s in statement.body if isinstance(s, cst.Expr)]
    return len(calls) == len(statement.body) and all(
        isinstance(c, cst.Call) and c in self_method_calls(statement, LOG_METHODS) for c in calls
    )


@dataclass
class _Edits:
    """Call rewrites and moves out of guards, applied in one pass."""

    calls: dict[cst.Call, cst.Call] = field(default_factory=dict)
    removed: set[cst.SimpleStatementLine] = field(default_factory=set)
    after: dict[cst.CSTNode, list[cst.BaseStatement]] = field(default_factory=dict)
    before: dict[cst.CSTNode, list[cst.BaseStatement]] = field(default_factory=dict)

    def move(self, gated: Gated, moved: cst.SimpleStatementLine) -> None:
        self.removed.add(gated.statement)
        if gated.guard.branch == "return":
            self.before.setdefault(gated.guard.node, []).append(moved)
        else:
            self.after.setdefault(gated.guard.node, []).append(moved)

    def apply(self, module: cst.Module, positions=None) -> cst.Module:
        if not (self.calls or self.removed):
            return module
        applier = _Apply(self, positions)
        result = module.visit(applier)
        if applier.placed != len(self.removed):
            # Never drop code: the engine turns this into an internal error and keeps the file.
            raise RuntimeError("a statement moved out of a rank guard found no place")
        return result


class _Apply(ReplaceCalls):
    def __init__(self, edits: _Edits, positions=None):
        # The guards that lose or gain statements are rebuilt from their blocks: visit around them too.
        super().__init__(edits.calls, positions, also=[*edits.removed, *edits.before, *edits.after])
        self.edits = edits
        self.placed = 0

    def _rebuild(self, original_body, updated_body) -> list:
        out = []
        for original, updated in zip(original_body, updated_body):
            if original in self.edits.removed:
                continue
            moved_before = self.edits.before.get(original, ())
            moved_after = self.edits.after.get(original, ())
            self.placed += len(moved_before) + len(moved_after)
            out.extend(moved_before)
            if isinstance(updated, cst.If) and moved_after:
                updated = _without_empty_branches(updated)
                if updated is None:  # nothing left under the guard: the moved calls take its place
                    first, *rest = moved_after
                    kept = [*original.leading_lines, *_comment_lines(original), *first.leading_lines]
                    out.append(first.with_changes(leading_lines=kept))
                    out.extend(rest)
                    continue
            out.append(updated)
            out.extend(moved_after)
        return out

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated_node.with_changes(body=self._rebuild(original_node.body, updated_node.body))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._rebuild(original_node.body, updated_node.body))


def _comment_lines(node: cst.If) -> list[cst.EmptyLine]:
    """The comments a removed ``if`` carried on its header line and at the end of its block."""
    lines = []
    header = node.body.header if isinstance(node.body, cst.IndentedBlock) else None
    if header is not None and header.comment is not None:
        lines.append(cst.EmptyLine(comment=header.comment))
    if isinstance(node.body, cst.IndentedBlock):
        lines.extend(line for line in node.body.footer if line.comment is not None)
    return lines


def _empty(block: cst.BaseSuite) -> bool:
    return isinstance(block, cst.IndentedBlock) and not block.body


def _without_empty_branches(node: cst.If) -> cst.If | None:
    """The ``if`` after its moved calls left: None if nothing at all is left in it."""
    orelse = node.orelse
    if isinstance(orelse, cst.Else) and _empty(orelse.body):
        orelse = None
    if _empty(node.body):
        if orelse is None:
            return None
        return node.with_changes(body=node.body.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])]), orelse=orelse)
    return node.with_changes(orelse=orelse)


# --- report-only runs: the same questions on CPython's tree (``Rule.check``) ---------------------
#
# ``_ranks.gated_statements`` on LibCST's tree yields statement *lines*, with the block they stand in
# and whether they stand directly in the guarded block; a fix moves such a line, so that is what
# ``_why_not_movable`` judges. ``_tree_ranks.gated_statements`` yields ``ast``'s small statements
# and neither the block nor ``direct`` nor the guard's ``standalone``/``nested``: the walk below is
# ``_ranks._walk`` again, on ``ast``, with LibCST's lines rebuilt (``a; b`` is one line there, and a
# one-line body ``if zero: self.log(...)`` is a ``SimpleStatementSuite``).


@dataclass(frozen=True)
class _TreeGated:
    """``_ranks.Gated`` on CPython's tree: ``line`` holds the small statements of LibCST's line."""

    line: tuple[ast.stmt, ...]
    guard: Guard
    block: tuple  # the block's units: lines (tuples) and compound statements
    direct: bool
    suite: bool = False  # a one-line body (``if zero: self.log(...)``), LibCST's SimpleStatementSuite


def _tree_gated_lines(function: ast.FunctionDef | ast.AsyncFunctionDef, tests: TreeRankTests, view: TreeView):
    """``_ranks.gated_statements``: every statement line of ``function`` that runs on rank 0 only."""
    guard = None
    if any(tests.is_rank_zero_only_decorator(d) for d in function.decorator_list):
        guard = Guard(function, "decorator", True)
    yield from _tree_walk(function.body, tests, view, guard)


def _tree_walk(block: list[ast.stmt], tests: TreeRankTests, view: TreeView, guard: Guard | None,
               guarded_block: bool = False):
    if view.one_line_body(block):
        if guard is not None:
            line = tuple(block)  # LibCST's stand-in line for a SimpleStatementSuite: never moved from
            yield _TreeGated(line, guard, (line,), False, suite=True)
        return
    units = _tree_lines(block, view)
    current, direct = guard, guarded_block
    for unit in units:
        if isinstance(unit, tuple):
            if current is not None:
                yield _TreeGated(unit, current, units, direct)
            continue
        if isinstance(unit, ast.If):
            yield from _tree_walk_if(unit, tests, view, current, standalone=True)
            if tests.classify(unit.test) == ("nonzero", True) and not unit.orelse and only_returns(unit.body):
                # ``if not self.trainer.is_global_zero: return``: the rest of this block is rank 0's.
                current, direct = Guard(unit, "return", True, nested=current is not None), True
            continue
        if isinstance(unit, (*FUNCTIONS, ast.ClassDef)):
            continue  # defined here, run elsewhere
        for inner in tree_child_blocks(unit):
            yield from _tree_walk(inner, tests, view, current)


def _tree_walk_if(node: ast.If, tests: TreeRankTests, view: TreeView, outer: Guard | None, standalone: bool):
    kind = tests.classify(node.test)
    nested = outer is not None
    body_guard = Guard(node, "body", kind[1], standalone, nested) if kind and kind[0] == "zero" else None
    else_guard = Guard(node, "orelse", kind[1], standalone, nested) if kind and kind[0] == "nonzero" else None
    yield from _tree_walk(node.body, tests, view, body_guard or outer, body_guard is not None)
    if not node.orelse:
        return
    if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) and is_elif(node, node.orelse[0]):
        # ``if rank != 0: ... elif c: ...``: every later branch runs on rank 0 only.
        yield from _tree_walk_if(node.orelse[0], tests, view, else_guard or outer, standalone=False)
    else:
        yield from _tree_walk(node.orelse, tests, view, else_guard or outer, else_guard is not None)


def _tree_lines(block: list[ast.stmt], view: TreeView) -> tuple:
    """The block as LibCST holds it: compound statements, and tuples of the small statements that
    share a line (``a; b``)."""
    return tuple(line[0] if isinstance(line[0], TREE_COMPOUND) else tuple(line) for line in view.statement_lines(block))


def _tree_logged_names(call: ast.Call) -> list[str] | None:
    """``logged_names`` on CPython's tree."""
    first = next((a for a in arguments_in_order(call)
                  if not isinstance(a, ast.keyword) or a.arg in (None, "name", "dictionary")), None)
    if first is None or isinstance(first, ast.Starred) or (isinstance(first, ast.keyword) and first.arg is None):
        return None
    value = first.value if isinstance(first, ast.keyword) else first
    if call.func.attr == "log":
        name = tree_string_value(value)
        return [name] if name is not None else None
    if isinstance(value, ast.Dict):
        keys = [tree_string_value(k) if k is not None else None for k in value.keys]  # None: ``**d``
        return keys if keys and all(k is not None for k in keys) else None
    return None


def _tree_report(ctx: RuleContext, call: ast.Call, gated: _TreeGated, message: str, *, fixable: bool,
                 safe: bool = False, why: str = "") -> None:
    """``ctx.report``, where its ``# noqa`` test reads the right statement. ``TreeView.statement_start``
    joins ``a;`` at a line's end with the next line's statement (LibCST: two lines), so a ``# noqa``
    after ``a;`` would silence the call below it on this tree only: let LibCST answer then."""
    if ctx.view.suppressions:
        first = gated.line[0].lineno
        libcst_start = first if not gated.suite and first < call.lineno else call.lineno
        if ctx.view.statement_start(call.lineno) != libcst_start:
            raise NeedsLibCST("the statement that a suppression comment applies to")
    ctx.report(call, message, fixable=fixable, safe=safe, why=why)


def _defer_if_commented(call: ast.Call, ctx: RuleContext) -> None:
    """A fix rewrites the call's keywords; with a comment among its arguments, whether the rewrite
    keeps it (else the finding is not fixable) is LibCST's to say."""
    if has_comment(call, ctx.view):
        raise NeedsLibCST("a comment inside the call: whether the fix keeps it")


def _tree_why_not_movable(call: ast.Call, gated: _TreeGated) -> str | None:
    """``_why_not_movable`` on CPython's tree."""
    guard = gated.guard
    if guard.branch == "decorator":
        return "the whole method is @rank_zero_only"
    if not guard.pure:
        return "the guard also tests something else, so moving the call out would log more often"
    if not guard.standalone:
        return "the guard is an `elif`"
    if guard.nested:
        return "it sits under more than one rank guard"
    if not gated.direct:
        return "the call is nested deeper than the guard's own block"
    line = gated.line
    if len(line) != 1 or not isinstance(line[0], ast.Expr) or line[0].value is not call:
        return "the call is part of a larger statement"
    if has_star(call):
        return "the call passes *args or **kwargs"
    if guard.branch in ("body", "orelse"):
        other = guard.node.orelse if guard.branch == "body" else guard.node.body
        if tree_self_method_calls(other, LOG_METHODS):
            return "the other branch of the guard logs too"
        exit_word = tree_exit_in(other) if other else None
        if exit_word:
            return f"the other ranks `{exit_word}` in the other branch of the guard, so the moved call would still run on rank 0 only"
    jumped = _tree_jumped(gated)
    for other in jumped:
        exit_word = tree_exit_in(other)
        if exit_word:
            return f"the guard can `{exit_word}` before the call would run"
    names = [tree_statement_names(arg.value if isinstance(arg, ast.keyword) else arg)
             for arg in arguments_in_order(call)]
    reads = set().union(*(n.reads for n in names))
    binds = set().union(*(n.binds for n in names))
    for other in jumped:
        other_names = tree_statement_names(other)
        clash = sorted(reads & other_names.writes)
        if clash:
            name = "self.…" if clash[0] == "self" else clash[0]
            return f"`{name}` is computed or changed inside the guard, on rank 0 only; compute it on every rank first"
        clash = sorted(binds & (other_names.reads | other_names.writes))
        if clash:
            return f"the call binds `{clash[0]}`, which the guard also uses"
    return None


def _tree_jumped(gated: _TreeGated) -> list:
    """The units of the guarded block that a move of ``gated.line`` out of its guard jumps over
    (lines that only log left out: they change nothing the call reads)."""
    block = list(gated.block)
    index = next(i for i, unit in enumerate(block) if unit is gated.line)
    if gated.guard.branch == "return":
        start = next(i for i, unit in enumerate(block) if unit is gated.guard.node)
        jumped = block[start + 1 : index]  # the call moves above these and the guard
    else:
        jumped = [*block[:index], *block[index + 1 :]]  # the call moves below all of these
    return [unit for unit in jumped if not _tree_only_logs(unit)]


def _tree_set_on_rank_zero_only(call: ast.Call, guard: Guard, method, tests: TreeRankTests) -> str | None:
    """``_set_on_rank_zero_only`` on CPython's tree."""
    body = method.body
    if not any(statement is guard.node for statement in body):
        return None
    arguments = method.args
    bound = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                             *filter(None, [arguments.vararg, arguments.kwarg])]}
    reads = set().union(*(tree_statement_names(arg.value if isinstance(arg, ast.keyword) else arg).reads
                          for arg in arguments_in_order(call)))
    zero_only: set[str] = set()
    for statement in body[: next(i for i, s in enumerate(body) if s is guard.node)]:
        binds = tree_statement_names(statement).binds
        zero = (isinstance(statement, ast.If) and not statement.orelse
                and (tests.classify(statement.test) or ("",))[0] == "zero")
        for name in binds:
            if zero and name not in bound:
                zero_only.add(name)
            else:
                bound.add(name)
                zero_only.discard(name)
    unset = sorted(reads & zero_only)
    if not unset:
        return None
    return f"`{unset[0]}` is only set on rank 0 (the guard above): the other ranks would raise NameError; compute it on every rank first"


def _tree_only_logs(unit) -> bool:
    """``_only_logs``: a line that is just ``self.log(...)`` calls."""
    return isinstance(unit, tuple) and all(isinstance(s, ast.Expr) and _is_self_log(s.value) for s in unit)


def _is_self_log(node: ast.expr) -> bool:
    """``self.log(...)`` / ``self.log_dict(...)`` itself (what ``tree_self_method_calls`` finds)."""
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Attribute) and func.attr in LOG_METHODS
            and isinstance(func.value, ast.Name) and func.value.id == "self")
