"""DDP005 collective-under-rank-guard: a collective that only rank 0 enters stalls every other rank."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ddpfix.ast_walk import child_nodes, walk
from ddpfix.lazy_regex import lazy_compile
from ddpfix.analysis import lightning as tree_lightning
from ddpfix.analysis.ast_shapes import blocks, import_targets, last_name, may_be, root
from ddpfix.analysis.text import aliased, bound_by_as, calls, headers, word_match
from ddpfix.analysis.ranks import Guard, RANK_ATTRIBUTES, RANK_TRIGGERS, RANK_VARIABLES, TreeRankTests, functions, gated_at_module_level, gated_statements
from ddpfix.rules.base import Rule, RuleContext

TORCH_DISTRIBUTED = frozenset(
    f"torch.distributed.{name}"
    for name in (
        "all_reduce", "all_gather", "all_gather_object", "all_gather_into_tensor", "broadcast",
        "broadcast_object_list", "barrier", "monitored_barrier", "reduce", "reduce_scatter",
        "reduce_scatter_tensor", "gather", "gather_object", "scatter", "scatter_object_list", "all_to_all",
    )
)
STRATEGY_COLLECTIVES = frozenset({"barrier", "broadcast", "reduce", "all_gather", "reduce_boolean_decision"})
FABRIC_COLLECTIVES = frozenset({"barrier", "broadcast", "all_reduce", "all_gather", "save"})


# --- the text prefilter (supersets of may_apply's shapes, see _text) ---------------------------

# What ``_rankish`` takes, as words (searched within ``if`` headers only, a few lines each).
_RANK_TOKEN = lazy_compile(b"|".join(re.escape(word.encode()) for word in sorted({*RANK_TRIGGERS, *RANK_VARIABLES})))
_TAILS = frozenset(name.rsplit(".", 1)[1] for name in TORCH_DISTRIBUTED)
_LIGHTNING_OWNERS = {"strategy": STRATEGY_COLLECTIVES, "fabric": FABRIC_COLLECTIVES,
                     "trainer": frozenset({"save_checkpoint"}), "self": frozenset({"all_gather"})}
_CALLED = sorted(_TAILS.union(*_LIGHTNING_OWNERS.values(), {"compute"}))


def _rank_guard_text(data: bytes) -> bool:
    """A rank word may stand in an ``if`` test, or ``rank_zero_only`` in a decorator."""
    if aliased("get_rank", data) or aliased("rank_zero_only", data):
        return True  # an alias may stand anywhere
    if any(_RANK_TOKEN.search(data, start, end) for start, end in headers(data, "if", (b"", b"el"))):
        return True
    return b"rank_zero_only" in data and any(
        data.find(b"rank_zero_only", start, end) >= 0 for start, end in headers(data, "@")
    )


def _collective_call_text(data: bytes) -> bool:
    """A call that ``_collective_shaped`` may take for a collective: a Lightning one by its owner's
    name, any ``.compute()``, or a name that may resolve to ``torch.distributed.<name>``: behind
    ``distributed.``, behind a name bound by ``as`` (``import torch.distributed as dist``), or
    bare where the file names ``distributed`` (``from torch.distributed import barrier``)."""
    mentions_distributed = b"distributed" in data
    if mentions_distributed and any(aliased(name, data) for name in sorted(_TAILS)):
        return True  # ``from torch.distributed import barrier as sync``: called by any name
    bound: dict[str, bool] = {}  # owner -> whether an ``as`` binds it
    for call in calls(data, _CALLED):
        if call.name == "compute" or call.name in _LIGHTNING_OWNERS.get(call.owner or "", ()):
            return True
        if call.name not in _TAILS:
            continue
        if call.owner is None:
            if mentions_distributed:
                return True  # bare, or behind a call or a subscript (taken as bare: a superset)
        elif call.owner == "distributed":
            return True
        elif not call.owner_is_attribute:
            if call.owner not in bound:
                bound[call.owner] = word_match(bound_by_as(call.owner), data)
            if bound[call.owner]:
                return True
    return False


def _rankish(node: ast.AST, get_rank: set[str]) -> bool:
    """Whether ``node`` may be a rank expression that ``RankTests`` understands (a superset of it:
    ``self.global_rank``, ``trainer.is_global_zero``, ``rank_zero_only.rank``, ``dist.get_rank()``,
    the ``RANK`` variables of the environment). A plain variable called ``rank`` is none of these."""
    if isinstance(node, ast.Attribute):
        if node.attr in RANK_ATTRIBUTES or node.attr == "is_global_zero":
            return True
        if node.attr == "rank":
            return last_name(node.value) == "rank_zero_only"
        return False
    if isinstance(node, ast.Call):
        return last_name(node.func) in get_rank
    return isinstance(node, ast.Constant) and node.value in RANK_VARIABLES


def _collective_shaped(func: ast.expr, imported: dict[str, set[str]]) -> bool:
    """``_collectives``'s tests on CPython's tree, each as loose or looser: a metric's ``compute``
    is any ``self.<x>.compute``, and a dotted name counts when any import of the file makes it a
    ``torch.distributed`` collective."""
    if isinstance(func, ast.Attribute):
        method, owner = func.attr, func.value
        owner_name = last_name(owner)
        if (
            (method == "all_gather" and owner_name == "self" and isinstance(owner, ast.Name))
            or (method in STRATEGY_COLLECTIVES and owner_name == "strategy")
            or (method == "save_checkpoint" and owner_name == "trainer")
            or (method in FABRIC_COLLECTIVES and owner_name == "fabric")
            or (method == "compute" and isinstance(owner, ast.Attribute) and root(owner) == "self")
        ):
            return True
    return may_be(func, TORCH_DISTRIBUTED, imported)


def _early_return(node: ast.If) -> bool:
    """``if <rank test>: return`` (``only_returns`` of ``_ranks``, on CPython's tree)."""
    return not node.orelse and all(isinstance(s, (ast.Return, ast.Pass)) for s in node.body) and any(
        isinstance(s, ast.Return) for s in node.body)


class CollectiveUnderRankGuard(Rule):
    """
    # DDP005 collective-under-rank-guard

    ## What it does
    Reports collectives that run under a rank guard (`if self.trainer.is_global_zero:`,
    `if self.global_rank == 0:`, an early `return` on the other ranks, `@rank_zero_only`...):
    `self.all_gather`, `trainer.strategy.barrier/broadcast/reduce/all_gather`,
    `torch.distributed.*` collectives, `compute()` of a torchmetrics attribute,
    `trainer.save_checkpoint`, and `fabric.barrier/broadcast/all_reduce/all_gather/save`. Each
    finding names the guard's line.

    ## Why it breaks under DDP
    A collective completes only when every rank enters it. Under a rank guard only rank 0 does, and
    it waits forever; the other ranks stall at their next collective. `Metric.compute()` syncs the
    metric's state across ranks, and `trainer.save_checkpoint` ends in a barrier from Lightning
    2.1.0 on, so both count. Before 2.1.0 (1.4 to 2.0 checked) `save_checkpoint` saves on rank 0
    and syncs nothing, so under a project that pins such a version it is not reported; where the
    version in force may be either, the finding says so. The docs: "The `is_global_zero` guard
    belongs around `self.log`, not around the computation."

    ## Before
    ```python
    if self.trainer.is_global_zero:
        preds = self.all_gather(self.preds)
        torch.save(preds, "preds.pt")
    ```

    ## After (by hand)
    ```python
    preds = self.all_gather(self.preds)
    if self.trainer.is_global_zero:
        torch.save(preds, "preds.pt")
    ```

    ## When it does not fix
    Always: whether the surrounding statements can move with the collective is a judgement this
    rule leaves to you.
    """

    code = "DDP005"
    name = "collective-under-rank-guard"
    summary = "Collective under a rank guard: only rank 0 enters it, every rank stalls"
    fixable = False
    triggers = (
        # Implied by the next group and four scans of the file instead of seven: most files have none.
        ("rank", "is_global_zero", "RANK", "SLURM_PROCID"),
        RANK_TRIGGERS,
        ("all_gather", "barrier", "broadcast", "reduce", "compute(", "save_checkpoint", "gather", "scatter", ".save(",
         "all_to_all"),
    )

    @classmethod
    def triggered_by(cls, data: bytes) -> bool:
        """The words, then in the bytes what ``may_apply`` needs, each apart: a rank word in an
        ``if`` test (or ``rank_zero_only`` in a decorator) and a call shaped like a collective.
        torch's distributed code names ranks and collectives everywhere, in assignments and
        tensor methods (``logits.gather``), and parsing it for nothing cost a second on corpus A."""
        return cls.has_trigger_words(data) and _rank_guard_text(data) and _collective_call_text(data)

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """A collective-shaped call stands where a rank guard could gate it: in an ``if`` whose test
        mentions a rank (its body or its ``else``), in the rest of the block after such an ``if``
        that only returns, or in a function with a ``rank_zero_only`` decorator. A superset of
        what ``apply`` reports (gated statements are always there).

        Statements first, expressions only where needed: torch's own distributed code passes the
        trigger words, and walking every expression of it cost 2 s on corpus A. The blocks of the
        file give the gated regions (a rank ``if``; the rest of its block after an early return;
        a decorated function); only those are walked for calls shaped like a collective ``apply``
        reports (``self.all_gather``, ``<x>.strategy.barrier``, a ``torch.distributed`` function
        through any import of the file...). The shapes matter too: torch calls ``reduce``,
        ``gather`` and ``save`` of every kind under rank tests, and a name alone made 40 files of
        corpus A candidates where one had a finding (their LibCST parse: 4 s).
        """
        file_blocks = list(blocks(tree))
        imports = [s for block in file_blocks for s in block if isinstance(s, (ast.Import, ast.ImportFrom))]
        functions = [
            s for block in file_blocks for s in block
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.decorator_list
        ]
        zero_only, get_rank = {"rank_zero_only"}, {"get_rank"}
        for statement in imports:
            for alias in statement.names if isinstance(statement, ast.ImportFrom) else ():
                if alias.name in ("rank_zero_only", "get_rank"):
                    (zero_only if alias.name == "rank_zero_only" else get_rank).add(alias.asname or alias.name)
        gated: list[ast.AST] = []  # the roots of what a rank guard may gate
        for block in file_blocks:
            for index, statement in enumerate(block):
                if isinstance(statement, ast.If) and any(_rankish(n, get_rank) for n in walk(statement.test)):
                    gated.append(statement)
                    if _early_return(statement):  # the rest of the block runs on the ranks that did not return
                        gated.extend(block[index + 1:])
                        break
        gated += [f for f in functions if any(
            isinstance(n, (ast.Name, ast.Attribute)) and last_name(n) in zero_only
            for d in f.decorator_list for n in walk(d))]
        if not gated:
            return False
        imported = import_targets(imports)
        return any(
            isinstance(node, ast.Call) and _collective_shaped(node.func, imported)
            for region in gated for node in walk(region)
        )

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        tests = TreeRankTests(ctx.imports, tree)
        metrics: set[str] = set()
        if b"compute(" in ctx.data and b"torchmetrics" in ctx.data:
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    metrics |= tree_lightning.metric_attributes(node, ctx.imports)
        seen: set[int] = set()
        regions = [gated_at_module_level(tree, tests)] + [gated_statements(f, tests) for f in functions(tree)]
        for region in regions:
            for statement, guard in region:
                for call, what, why in _collectives(statement, ctx, metrics):
                    if id(call) in seen:
                        continue
                    seen.add(id(call))
                    ctx.report(call, _message(what, guard, ctx), detail=_detail(what, why, guard, ctx), fixable=False)


def _where(guard: Guard, ctx: RuleContext, short: bool = False) -> str:
    """Where the call runs on rank 0 only, as the detail says it (``short``: the finding line)."""
    if guard.branch == "decorator":
        return "in a @rank_zero_only function"
    line = ctx.position(guard.node).start.line
    return f"under a rank guard (line {line})" if short else f"under the rank guard on line {line}"


def _message(what: str, guard: Guard, ctx: RuleContext) -> str:
    return f"collective {what} {_where(guard, ctx, short=True)}: the other ranks stall"


def _detail(what: str, why: str, guard: Guard, ctx: RuleContext) -> str:
    return (
        f"{what}{why} is a collective and runs {_where(guard, ctx)}: only rank 0 enters it, so every rank "
        "stalls; run it on every rank and keep only its side effects (saving, printing) under the guard"
    )


def _calls(statement: ast.stmt) -> Iterator[ast.Call]:
    """The calls of a statement, in source order, not those inside a ``lambda`` (defined here, run elsewhere)."""
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Call):
            yield node
        pending.extend(reversed(child_nodes(node)))


def _collectives(statement: ast.stmt, ctx: RuleContext, metrics: set[str]) -> Iterator[tuple[ast.Call, str, str]]:
    """Each collective call of the statement, with its text and what makes it one (or "")."""
    for call in _calls(statement):
        why = _collective(call.func, ctx, metrics)
        if why is not None:
            # The call's text only for a finding: it needs the file's line table.
            if why == "self":
                yield call, "self.all_gather()", ""
            else:
                yield call, f"{ctx.view.positions.segment(call.func)}()", why


SAVE_BARRIER = "Trainer.save_checkpoint's barrier"


def _collective(func: ast.expr, ctx: RuleContext, metrics: set[str]) -> str | None:
    """What to add to the call's name in the message when ``func`` is a collective (``"self"`` for
    ``self.all_gather``), else None."""
    if ctx.imports.qualify(func) in TORCH_DISTRIBUTED:
        return ""
    if not isinstance(func, ast.Attribute):
        return None
    method, owner = func.attr, func.value
    owner_name = last_name(owner)
    if method == "all_gather" and isinstance(owner, ast.Name) and owner.id == "self":
        return "self"
    if (method in STRATEGY_COLLECTIVES and owner_name == "strategy") or (method in FABRIC_COLLECTIVES and owner_name == "fabric"):
        return ""
    if method == "save_checkpoint" and owner_name == "trainer":
        from ddpfix.model.versions import imported_package, version_in_force  # a rare call: loaded for it only

        version = version_in_force(ctx.path, imported_package(ctx.data))
        has = version.has(SAVE_BARRIER) if version is not None else None
        if has is False:
            return None  # before 2.1.0 it saves on rank 0 and syncs nothing: the guard is the documented use
        if has is None:
            where = version.describe() if version is not None else "the Lightning version, not found,"
            return f" (from Lightning 2.1.0 it ends in a barrier; {where} may be older, where it does not)"
        return " (it ends in a barrier)"
    if method == "compute" and isinstance(owner, ast.Attribute) and root(owner) == "self" and owner.attr in metrics:
        return " (it syncs the metric's state across ranks)"
    return None
