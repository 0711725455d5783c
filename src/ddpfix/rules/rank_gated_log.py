"""DDP003 rank-gated-log: ``self.log`` under a rank guard deadlocks or starves the other ranks."""

from __future__ import annotations

import ast

from ddpfix import edits
from ddpfix.edits import Span
from ddpfix.imports import TREE_COMPOUND
from ddpfix.analysis.ast_shapes import a_method_calls_self_log, every_node
from ddpfix.analysis.keyword_comments import keyword_edits_keep_comments
from ddpfix.analysis.lightning import (FUNCTIONS, arguments_in_order, has_star, is_elif, is_true, keyword,
                                       lightning_methods, log_label, logged_names, self_method_calls)
from ddpfix.analysis.names import exit_in, statement_names
from ddpfix.analysis.ranks import Guard, RANK_TRIGGERS, TreeRankTests, only_returns
from ddpfix.records import record
from ddpfix.rules.base import Rule, RuleContext, TreeView

#: The feature a fix writes, by the method it is written on (``log_dict`` took it a release later).
RANK_ZERO_ONLY = {"log": "self.log(rank_zero_only=...)", "log_dict": "self.log_dict(rank_zero_only=...)"}
LOG_METHODS = frozenset({"log", "log_dict"})
#: What a fix that would rewrite a call and lose one of its comments says instead.
COMMENT_LOST = " (not rewritten: a comment inside the call would be lost)"


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

    A method of the class that logs (directly or through its other methods), called under a rank
    guard, is reported at the call, without a fix: its logs run on rank 0 alone (the helper may
    also run elsewhere on every rank, so the call is not moved). Logs marked `rank_zero_only=True`
    do not count.

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
      monitors it" needs the whole project: the run's facts must be whole (the project of any path
      named is read whole; stdin without `--stdin-filename` does not see `train.py`'s
      `EarlyStopping`), every monitor in it a literal (`unknown_monitors` empty),
      the logged names literals, no monitor of this file unknown (`monitor=args.monitor`, `self.hparams.monitor`,
      `dict(monitor=...)`, `ModelCheckpoint(**cfg)`, a non-literal `"monitor"`, `LightningCLI` and its
      YAML), and no monitor naming the key's `_step` / `_epoch` forms (`on_step=True, on_epoch=True`).
      Monitors are read wherever they are named: `EarlyStopping("val_loss")`, `ModelCheckpoint`'s
      third positional argument, `monitor=` in any call (a subclass's `super().__init__(monitor=...)`),
      `ckpt.monitor = "val_loss"`, a `"monitor"` key. And no other `self.log` of the class may log
      the key (or a key that is not a literal) with a sync (`sync_dist` not a literal False,
      `**kwargs`): an `else:` branch or an `if self.global_rank > 0:` that logs it with
      `sync_dist=True` leaves the other ranks in an all-reduce that rank 0 no longer enters.
      And the Lightning in force has the keyword (`self.log`'s since 1.4.0, `self.log_dict`'s since
      1.5.0, read from the project's pins, else the installed distribution): pinned below it there
      is no fix (the keyword would be a `TypeError` at the first epoch end); a version not found,
      or a range reaching below it, makes the fix unsafe, its reason naming the pin.
      Monitors are read from configurations too (`monitor: val_acc` in YAML), and a monitored
      `val_loss/dataloader_idx_0` is the `val_loss` a step logs; pins from any requirements file,
      conda environment, Dockerfile, tox's `deps` or a launch script. A guard on a rank counted
      within a node (`self.local_rank`, `LOCAL_RANK`) holds on each node's first process where the
      run may span several nodes (`num_nodes` not a literal 1, a configuration or launcher with
      several nodes, Trainer arguments from outside): both fixes are then unsafe (review helper-45).
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

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """The one analysis: each gated log's finding, its fix's applicability and its typed edits.
        Findings are reported bottom-up, so that the moves out of one block are carried out
        bottom-up, as ``ddpfix.edits.moves`` needs (the engine sorts findings for display)."""
        tests = TreeRankTests(ctx.imports, tree)
        mode = str(ctx.options.get("log_mode", "auto"))
        findings: list[_Finding] = []
        helpers: dict[int, dict[str, ast.Call]] = {}  # class -> its methods that log -> a log they reach
        for cls, method in lightning_methods(tree, ctx.imports, ctx.facts.of_kind("LightningModule", ctx.path)):
            if id(cls) not in helpers:
                helpers[id(cls)] = _logging_helpers(cls)
            logging = helpers[id(cls)]
            if not _may_gate_logs(method, tests, frozenset(logging)):
                continue
            for gated in _gated_lines(method, tests, ctx.view):
                for call in self_method_calls(list(gated.line), frozenset(logging) - LOG_METHODS):
                    findings.append(_gated_helper(call, logging[call.func.attr], ctx, _where(ctx, gated.guard),
                                                  _where(ctx, gated.guard, short=True)))
                for call in self_method_calls(list(gated.line), LOG_METHODS):
                    if is_true(keyword(call, "rank_zero_only")):
                        finding = _monitored_rank_zero_only(call, _where(ctx, gated.guard), ctx.facts.for_program(ctx.path))
                        if finding is not None:
                            findings.append(finding)
                        continue  # otherwise it already says what it means
                    findings.append(self._judge(call, gated, mode, ctx, tree, cls, method, tests))
        for finding in reversed(findings):
            ctx.report(finding.call, finding.message, detail=finding.detail, fixable=finding.fixable, safe=finding.why is None,
                       why=finding.why or "", edits=finding.edits if finding.fixable else None)

    def _judge(self, call: ast.Call, gated: _Gated, mode: str, ctx: RuleContext, tree: ast.Module,
               cls: ast.ClassDef, method: ast.FunctionDef | ast.AsyncFunctionDef, tests: TreeRankTests) -> _Finding:
        """The finding for a gated log: its fix proven safe, or marked unsafe with why, or none."""
        # Imported here, not at the top: a run loads every rule, and only files this rule checks need it.
        from ddpfix.model.versions import feature_problem, imported_package, version_in_force
        from ddpfix.rules._rank_gated_log_safety import synced_elsewhere, unmonitored_unproven

        names = logged_names(call)
        label, where, at = log_label(call), _where(ctx, gated.guard), _where(ctx, gated.guard, short=True)
        facts = ctx.facts.for_program(ctx.path)  # this program's callbacks, not another project's of the run
        monitors = [m for n in names or () for m in facts.monitored.get(n, ())]
        synced = is_true(keyword(call, "sync_dist"))
        if mode == "sync-dist" or (mode == "auto" and monitors):
            return self._move_out(call, ctx, label, where, at, monitors, gated, cls, method, synced, tests)
        if names is None and facts.monitored and mode == "auto":
            watched = ", ".join(sorted(facts.monitored))
            return _Finding(call, f"{label} {at}; its name may be a monitored one",
                            f"{label} runs {where}: its name is not a literal, and {watched} is monitored; if "
                            "this is a monitored metric, log it on every rank with sync_dist=True")
        if monitors:  # --log-mode rank-zero-only on a monitored metric would keep the crash
            return _Finding(call, f"{label} {at}; {names[0]} is monitored",
                            f"{label} runs {where}, but {names[0]} is monitored by {monitors[0].describe()}: "
                            "rank_zero_only=True would leave the other ranks without it; use --log-mode sync-dist")
        short = f"{label} {at}: other ranks {'hang in its sync' if synced else 'never log it'}"
        if has_star(call):
            return _Finding(call, short, f"{label} runs {where}: other ranks never log it; not rewritten: the call "
                            "passes *args or **kwargs, so rank_zero_only=True could clash with them")
        problem = (
            "only rank 0 enters the sync_dist all-reduce, so the other ranks hang"
            if synced
            else "the other ranks never log the key, so their logging falls out of step"
        )
        message = f"{label} runs {where}: {problem}; mark it rank_zero_only=True"
        # The keyword arrived in Lightning 1.4.0 (``log_dict``'s in 1.5.0): never written where the
        # version in force lacks it.
        feature = RANK_ZERO_ONLY.get(call.func.attr, RANK_ZERO_ONLY["log_dict"])
        version = version_in_force(ctx.path, imported_package(ctx.data))
        lacking = feature_problem(version, feature)
        if version is not None and version.has(feature) is False:
            return _Finding(call, short, f"{message}; not rewritten: {lacking}")
        drop = "sync_dist" if keyword(call, "sync_dist") is not None else None  # a no-op once rank 0 alone logs
        if not keyword_edits_keep_comments(call, ctx.view, drop, "rank_zero_only"):
            return _Finding(call, short, message + COMMENT_LOST)
        # rank_zero_only=True only turns the sync off (Lightning's ``_Sync``): nothing else changes,
        # unless a callback monitors the key, which then never exists on the other ranks.
        # The other ranks may also log the key with a sync elsewhere (``else:``, ``if rank > 0:``):
        # rank 0, now out of the sync, leaves them in their all-reduce.
        # Under a launcher that leaves the guard true on every rank, every rank logs: without a
        # sync, rank_zero_only=True changes nothing there either; dropping a sync changes the value.
        launcher = launcher_unknown(gated.guard.launcher) if gated.guard.launcher and synced else None
        why = (lacking or launcher or _local_on_several_nodes(gated, ctx, tests)
               or unmonitored_unproven(names, facts, tree) or synced_elsewhere(call, names, cls))
        at = Span.of(ctx.position(call))
        fix = (*([edits.DropKeyword(at, drop)] if drop else []), edits.SetKeyword(at, "rank_zero_only", "True"))
        return _Finding(call, short, message, True, why, fix)

    def _move_out(self, call: ast.Call, ctx: RuleContext, label: str, where: str, at: str, monitors, gated: _Gated,
                  cls: ast.ClassDef, method, synced: bool, tests: TreeRankTests) -> _Finding:
        """The finding for a log to be logged on every rank: moved out of its guard, synced."""
        from ddpfix.rules._rank_gated_log_safety import move_unproven, synced_elsewhere

        reason = (
            f"{monitors[0].metric} is monitored by {monitors[0].describe()}: the other ranks crash or hang without it"
            if monitors
            else "it must be logged on every rank"
        )
        short = f"{label} {at}" + (f"; {monitors[0].metric} is monitored" if monitors else ": log it on every rank")
        message = f"{label} runs {where}, but {reason}; log it on every rank, after the guard, with sync_dist=True"
        refusal = _why_not_movable(call, gated) or _set_on_rank_zero_only(call, gated.guard, method, tests)
        if refusal is not None:
            return _Finding(call, short, f"{message} (not rewritten: {refusal})")
        if not keyword_edits_keep_comments(call, ctx.view, None, "sync_dist"):
            return _Finding(call, short, message + COMMENT_LOST)
        why = (_local_on_several_nodes(gated, ctx, tests)
               or move_unproven(call, method, gated.guard.node, _jumped(gated), synced, bool(monitors), tests, cls)
               or (None if synced else _untied(monitors, ctx, cls)) or synced_elsewhere(call, logged_names(call), cls))
        return _Finding(call, short, message, True, why, (edits.SetKeyword(Span.of(ctx.position(call)), "sync_dist", "True"),
                                                          _move(gated, ctx)))


def _untied(monitors, ctx: RuleContext, cls: ast.ClassDef) -> str | None:
    """Why the monitors are not known to watch this module (None: one of them is). A monitor of
    another script of the program may watch another model: then the move changes what is logged
    (rank 0's value becomes the mean over ranks) without a crash to prevent. (A synced log under a
    guard hangs whatever watches it: its move needs no monitor.)"""
    if not monitors or any(ctx.facts.ties(monitor, ctx.path, [cls.name]) for monitor in monitors):
        return None
    first = monitors[0]
    return (f"{first.describe()} monitors {first.metric}, but that file neither is this module's nor imports it "
            "or its class: whether that callback watches this module is not known, and if it does not, the move "
            "turns the value from rank 0's into the mean over ranks")


@record(frozen=True)
class _Finding:
    """A finding, held until ``check`` reports them all (bottom-up); ``why``: why its fix is unsafe."""

    call: ast.Call
    message: str
    detail: str
    fixable: bool = False
    why: str | None = None
    edits: tuple = ()




def _where(ctx: RuleContext, guard: Guard, short: bool = False) -> str:
    """Where the call runs on rank 0 only, as the detail says it (``short``: the finding line)."""
    if guard.branch == "decorator":
        return "in a @rank_zero_only method"
    line = ctx.position(guard.node).start.line
    return f"under a rank guard (line {line})" if short else f"under the rank guard on line {line}"


def _monitored_rank_zero_only(call: ast.Call, where: str, facts) -> _Finding | None:
    """The finding for a gated call already marked ``rank_zero_only=True`` whose key a callback
    monitors: the pitfall itself (a partial run's fix may have written it), never fixed here."""
    label = log_label(call)
    monitors = [m for n in logged_names(call) or () for m in facts.monitored.get(n, ())]
    if not monitors:
        return None
    return _Finding(call, f"{label} is rank_zero_only, but {monitors[0].metric} is monitored",
                    f"{label} runs {where} with rank_zero_only=True, but {monitors[0].metric} is monitored by "
                    f"{monitors[0].describe()}: the other ranks never have it, so they crash or hang; log it on every "
                    "rank with sync_dist=True instead (not rewritten)")


# --- where logs run on rank 0 only -----------------------------------------------------------------
#
# The statement lines of a method that run on rank 0 only, as LibCST lists a block (``a; b`` is
# one line; a one-line body ``if zero: self.log(...)`` is a ``SimpleStatementSuite``, never moved
# from), with the block they stand in, whether they stand directly in the guarded block, and where
# that block and the guard's ``if`` are (a move names them by the statement owning the block, the
# block's field and indices).


@record(frozen=True)
class _Place:
    """A block of statements: the statement that owns it (the method, a compound statement) and
    its field (``"body"``, ``"orelse"``, ``"handlers.0"``...), as ``ddpfix.edits.moves`` names it."""

    owner: ast.AST
    block: str


@record(frozen=True)
class _Gated:
    """A statement line (its small statements) that runs on rank 0 only."""

    line: tuple[ast.stmt, ...]
    guard: Guard
    block: tuple  # the block's units: lines (tuples) and compound statements
    direct: bool
    suite: bool = False  # a one-line body (``if zero: self.log(...)``)
    place: _Place | None = None  # where ``block`` is
    guard_at: tuple[_Place, int] | None = None  # where the guard's ``if`` stands: its block and index


def _logging_helpers(cls: ast.ClassDef) -> dict[str, ast.Call]:
    """The class's own methods that log, directly or through another of its methods: name -> the
    first ``self.log``/``self.log_dict`` call they reach."""
    methods = {s.name: s for s in cls.body if isinstance(s, FUNCTIONS)}
    found: dict[str, ast.Call] = {}
    for name, method in methods.items():
        # A log marked rank_zero_only=True says it runs on rank 0 alone: not the pitfall.
        logs = [log for log in self_method_calls(method, LOG_METHODS) if not is_true(keyword(log, "rank_zero_only"))]
        if logs and name not in LOG_METHODS:
            found[name] = logs[0]
    grew = True
    while grew:  # through helpers of helpers
        grew = False
        for name, method in methods.items():
            if name in found or name in LOG_METHODS:
                continue
            reached = self_method_calls(method, frozenset(found))
            if reached:
                found[name] = found[reached[0].func.attr]
                grew = True
    return found


def _gated_helper(call: ast.Call, log: ast.Call, ctx: RuleContext, where: str, at: str) -> _Finding:
    """A method of the class that logs, called under a rank guard: its logs run on rank 0 alone.
    Reported without a fix (the helper may be called elsewhere on every rank)."""
    label = log_label(log)
    line = ctx.position(log).start.line
    return _Finding(call, f"self.{call.func.attr}() {at} logs: other ranks never do",
                    f"self.{call.func.attr}() runs {where} and logs ({label}, line {line}): only rank 0 logs those keys, "
                    "so a sync_dist all-reduce hangs and a monitored key is missing on the other ranks; call it on "
                    "every rank and keep only the rank-0 work (printing, saving) under the guard (not rewritten: the "
                    "helper may also run elsewhere)")


def _may_gate_logs(function: ast.FunctionDef | ast.AsyncFunctionDef, tests: TreeRankTests,
                   logging: frozenset[str] = frozenset()) -> bool:
    """Whether a log of ``function`` may stand in one of its ``_gated_lines``: it logs (outside
    nested functions, as those lines do; or calls a method of its class that logs), and it has a
    guard, which only a ``@rank_zero_only`` or an ``if`` makes. Most hooks have neither, and
    ``_gated_lines`` reads the layout of every block."""
    if not self_method_calls(function, LOG_METHODS | logging):
        return False
    return (any(tests.is_rank_zero_only_decorator(d) for d in function.decorator_list)
            or any(isinstance(node, ast.If) for node in every_node(function)))


def _gated_lines(function: ast.FunctionDef | ast.AsyncFunctionDef, tests: TreeRankTests, view: TreeView):
    """Every statement line of ``function`` that runs on rank 0 only."""
    guard = None
    if any(tests.is_rank_zero_only_decorator(d) for d in function.decorator_list):
        guard = Guard(function, "decorator", True)
    yield from _walk(function.body, _Place(function, "body"), tests, view, guard, None)


def _walk(block: list[ast.stmt], place: _Place, tests: TreeRankTests, view: TreeView, guard: Guard | None,
          guard_at: tuple[_Place, int] | None, guarded_block: bool = False):
    if view.one_line_body(block):
        if guard is not None:
            line = tuple(block)  # LibCST's stand-in line for a SimpleStatementSuite: never moved from
            yield _Gated(line, guard, (line,), False, suite=True)
        return
    units = _lines(block, view)
    current, current_at, direct = guard, guard_at, guarded_block
    for index, unit in enumerate(units):
        if isinstance(unit, tuple):
            if current is not None:
                yield _Gated(unit, current, units, direct, place=place, guard_at=current_at)
            continue
        if isinstance(unit, ast.If):
            yield from _walk_if(unit, (place, index), tests, view, current, current_at, standalone=True)
            if tests.classify(unit.test) == ("nonzero", True) and not unit.orelse and only_returns(unit.body):
                # ``if not self.trainer.is_global_zero: return``: the rest of this block is rank 0's.
                current, current_at, direct = Guard(unit, "return", True, nested=current is not None,
                                                    launcher=tests.launcher_variable(unit.test)), (place, index), True
            continue
        if isinstance(unit, (*FUNCTIONS, ast.ClassDef)):
            continue  # defined here, run elsewhere
        for owner, name, inner in _named_blocks(unit):
            yield from _walk(inner, _Place(owner, name), tests, view, current, current_at)


def _walk_if(node: ast.If, at: tuple[_Place, int] | None, tests: TreeRankTests, view: TreeView,
             outer: Guard | None, outer_at: tuple[_Place, int] | None, standalone: bool):
    kind = tests.classify(node.test)
    nested = outer is not None
    launcher = tests.launcher_variable(node.test) if kind else None
    body_guard = Guard(node, "body", kind[1], standalone, nested, launcher) if kind and kind[0] == "zero" else None
    else_guard = Guard(node, "orelse", kind[1], standalone, nested, launcher) if kind and kind[0] == "nonzero" else None
    yield from _walk(node.body, _Place(node, "body"), tests, view, body_guard or outer,
                     at if body_guard else outer_at, body_guard is not None)
    if not node.orelse:
        return
    if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) and is_elif(node, node.orelse[0]):
        # ``if rank != 0: ... elif c: ...``: every later branch runs on rank 0 only.
        yield from _walk_if(node.orelse[0], None, tests, view, else_guard or outer,
                            at if else_guard else outer_at, standalone=False)
    else:
        yield from _walk(node.orelse, _Place(node, "orelse"), tests, view, else_guard or outer,
                         at if else_guard else outer_at, else_guard is not None)


def _named_blocks(statement: ast.stmt):
    """The blocks of a compound statement (not an ``if``'s chain: ``_walk_if``), each with the
    statement that owns it and its field, in ``_tree_lightning.child_blocks``'s order."""
    if isinstance(statement, ast.Match):
        for number, case in enumerate(statement.cases):
            yield statement, f"cases.{number}", case.body
        return
    if isinstance(getattr(statement, "body", None), list):
        yield statement, "body", statement.body
    if getattr(statement, "orelse", None):
        yield statement, "orelse", statement.orelse
    for number, handler in enumerate(getattr(statement, "handlers", ())):
        yield statement, f"handlers.{number}", handler.body
    if getattr(statement, "finalbody", None):
        yield statement, "finalbody", statement.finalbody


def _lines(block: list[ast.stmt], view: TreeView) -> tuple:
    """The block as LibCST holds it: compound statements, and tuples of the small statements that
    share a line (``a; b``)."""
    return tuple(line[0] if isinstance(line[0], TREE_COMPOUND) else tuple(line) for line in view.statement_lines(block))


# --- moving a log out of its guard ----------------------------------------------------------------


def _move(gated: _Gated, ctx: RuleContext):
    """The edit that moves ``gated.line`` out of its guard: after the ``if`` it stands in, or, under
    ``if not <rank 0>: return``, up to just before that ``if``."""
    place, index = gated.guard_at
    owner = Span.of(ctx.position(place.owner))
    line = next(i for i, unit in enumerate(gated.block) if unit is gated.line)
    if gated.guard.branch == "return":
        return edits.MoveBeforeIf(owner, place.block, index, line)
    return edits.MoveOutOfIf(owner, place.block, index, gated.guard.branch, line)


def _local_on_several_nodes(gated: _Gated, ctx: RuleContext, tests: TreeRankTests) -> str | None:
    """Why a guard on a rank counted within a node (``self.local_rank == 0``, ``LOCAL_RANK``) may
    hold on more than rank 0: the run may span several nodes (``ProjectFacts.several_nodes_for``), and
    then each node's first process enters it (review helper-45, c01/c02: a working sync between
    them was dropped, a monitored value changed)."""
    test = getattr(gated.guard.node, "test", None)
    if test is None or not tests.reads_local_rank(test):
        return None
    nodes = ctx.facts.several_nodes_for(ctx.path)
    if nodes is None:
        return None
    return (f"the guard reads a rank counted within a node, and {nodes}: on several nodes it holds on each "
            "node's first process, not on rank 0 alone")


def launcher_unknown(variable: str) -> str:
    if variable == "NODE_RANK":
        return ("the guard reads NODE_RANK, the node's index, the same on every process of a node: on one machine "
                "it holds on every rank, so whether it gates rank 0 depends on how many nodes run")
    return (f"the guard reads {variable}, which torchrun and SLURM set but Lightning's own launcher does not: "
            "under Trainer(strategy='ddp') launched by Lightning it holds on every rank (or fails), so whether it "
            "gates rank 0 depends on a launcher the code does not name")


def _why_not_movable(call: ast.Call, gated: _Gated) -> str | None:
    """Why ``call`` cannot move out of its guard, with the rest of the guarded block kept as it is."""
    guard = gated.guard
    if guard.branch == "decorator":
        return "the whole method is @rank_zero_only"
    if not guard.pure:
        return "the guard also tests something else, so moving the call out would log more often"
    if guard.launcher:
        return launcher_unknown(guard.launcher)
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
        if self_method_calls(other, LOG_METHODS):
            return "the other branch of the guard logs too"
        exit_word = exit_in(other) if other else None
        if exit_word:
            return f"the other ranks `{exit_word}` in the other branch of the guard, so the moved call would still run on rank 0 only"
    jumped = _jumped(gated)
    for other in jumped:
        exit_word = exit_in(other)
        if exit_word:
            return f"the guard can `{exit_word}` before the call would run"
    # What the logged value depends on: the call's arguments (``self.log`` itself reads ``self``).
    names = [statement_names(arg.value if isinstance(arg, ast.keyword) else arg) for arg in arguments_in_order(call)]
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


def _jumped(gated: _Gated) -> list:
    """The units of the guarded block that a move of ``gated.line`` out of its guard jumps over
    (lines that only log left out: they change nothing the call reads)."""
    block = list(gated.block)
    index = next(i for i, unit in enumerate(block) if unit is gated.line)
    if gated.guard.branch == "return":
        start = next(i for i, unit in enumerate(block) if unit is gated.guard.node)
        jumped = block[start + 1 : index]  # the call moves above these and the guard
    else:
        jumped = [*block[:index], *block[index + 1 :]]  # the call moves below all of these
    return [unit for unit in jumped if not _only_logs(unit)]


def _set_on_rank_zero_only(call: ast.Call, guard: Guard, method, tests: TreeRankTests) -> str | None:
    """A name the call reads that is neither a parameter nor bound before the guard except under
    ``if <rank 0>:`` guards of the method's top level: on the other ranks the moved call would raise
    NameError. (Only for a guard at the method's top level; elsewhere the move is unsafe.)"""
    body = method.body
    if not any(statement is guard.node for statement in body):
        return None
    arguments = method.args
    bound = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                             *filter(None, [arguments.vararg, arguments.kwarg])]}
    reads = set().union(*(statement_names(arg.value if isinstance(arg, ast.keyword) else arg).reads
                          for arg in arguments_in_order(call)))
    zero_only: set[str] = set()
    for statement in body[: next(i for i, s in enumerate(body) if s is guard.node)]:
        binds = statement_names(statement).binds
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


def _only_logs(unit) -> bool:
    """A line that is just ``self.log(...)`` calls: it changes nothing another log call could read."""
    return isinstance(unit, tuple) and all(isinstance(s, ast.Expr) and _is_self_log(s.value) for s in unit)


def _is_self_log(node: ast.expr) -> bool:
    """``self.log(...)`` / ``self.log_dict(...)`` itself (what ``self_method_calls`` finds)."""
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Attribute) and func.attr in LOG_METHODS
            and isinstance(func.value, ast.Name) and func.value.id == "self")
