"""DDP004 epoch-log-sync: epoch-level ``self.log`` without ``sync_dist=True`` logs rank 0's shard only."""

from __future__ import annotations

import ast

from ddpfix.ast_walk import child_nodes, walk
from ddpfix.analysis.ast_shapes import a_method_calls_self_log, every_node
from ddpfix import edits
from ddpfix.edits import Span
from ddpfix.analysis import lightning as tree_lightning
from ddpfix.rules._epoch_log_sync_safety import ClassFacts, fix_problem
from ddpfix.analysis.keyword_comments import keyword_edits_keep_comments
from ddpfix.analysis.ranks import TreeRankTests, rank_words
from ddpfix.analysis.ranks import only_returns as tree_only_returns
from ddpfix.analysis.ranks import gated_statements as tree_gated_statements
from ddpfix.rules.base import Rule, RuleContext

LOG_METHODS = frozenset({"log", "log_dict"})
# Hooks whose self.log defaults to on_epoch=True (Lightning's logger connector).
EPOCH_HOOKS = frozenset({
    "validation_step", "test_step",
    "on_validation_batch_start", "on_validation_batch_end", "on_test_batch_start", "on_test_batch_end",
    "on_train_epoch_start", "on_train_epoch_end", "on_validation_epoch_start", "on_validation_epoch_end",
    "on_test_epoch_start", "on_test_epoch_end", "on_train_start", "on_validation_start", "on_test_start",
})


class EpochLogSync(Rule):
    """
    # DDP004 epoch-log-sync

    ## What it does
    Adds `sync_dist=True` to `self.log` / `self.log_dict` calls of a LightningModule that log per
    epoch — in `validation_step`, `test_step`, the `on_*_epoch_*` hooks and the other hooks where
    `on_epoch` defaults to True, or anywhere with `on_epoch=True` — and say nothing about
    `sync_dist`.

    ## Why it breaks under DDP
    Each rank reduces its own shard of the epoch; without `sync_dist=True` the value logged (and
    seen by `ModelCheckpoint`, `EarlyStopping` and schedulers) is rank 0's shard only, and Lightning
    warns: "It is recommended to use `self.log('val_loss', ..., sync_dist=True)` when logging on
    epoch level in distributed setting to accumulate the metric across devices." On one device
    `sync_dist=True` costs nothing.

    ## Before
    ```python
    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.loss(batch))
    ```

    ## After
    ```python
    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.loss(batch), sync_dist=True)
    ```

    ## When it does not fix
    Never touches a call that passes `sync_dist` at all (even `False`: you decided), one with
    `rank_zero_only=True` or `*args`/`**kwargs`, one under a rank guard (DDP003's case) or under any
    `if` whose test mentions a rank (a synced log that only some ranks reach hangs), or one that logs
    a torchmetrics object or `metric.compute()` (torchmetrics syncs its own state; `sync_dist` is
    ignored there).
    Step-level logging (`training_step` without `on_epoch=True`) is left alone. A call whose
    comments sit where the new argument would go (`self.log("x", v,  # why` then a next line) is
    reported, not rewritten: the comment would be repeated or lost.

    ## Fix safety
    A safe fix also needs the whole project read with no iterable dataset named in any file of it
    (Lightning does not shard one, so a batch is not proven to be this rank's own): in a partial view
    (a file named alone, stdin, an editor buffer, staged files) the fix is **unsafe**.

    `sync_dist=True` turns a log into collectives that Lightning runs per key, in the order in which
    each rank first logged its keys: a rank that skips a synced key hangs the others, and keys first
    logged in another order average values of different keys together. Adding it is **safe** only
    when all of this is proven, and **unsafe** (applied with `--unsafe-fixes`, the reason shown)
    otherwise:

    - **Every rank makes the call, in the same order.** The call is a statement of its own in
      `validation_step`, `test_step`, `training_step`, an `on_{train,validation,test}_batch_{start,end}`
      hook or an epoch/start hook, not decorated, not defined twice, and not called by the file's
      own code (`super().validation_step(...)`): Lightning calls these on every rank, the same
      number of times (its DistributedSampler gives every rank the same number of batches). Only
      `with torch.no_grad()` / `inference_mode()` / `enable_grad()` / `set_grad_enabled()` /
      `autocast()` may enclose it; any `if`, `for`, `while`, `try` or `match` makes it unsafe, and so
      does a `return` or `raise` before it. No condition is taken as rank-invariant (`batch_idx`
      depends on each rank's batch count; a guard held in a variable or a property is a condition
      like any other). A log in a helper method is unsafe: its callers (maybe under a rank guard)
      are not followed.
    - **Literal keys.** `self.log`'s name is a string literal; `self.log_dict`'s argument is a dict
      display with string-literal keys. F-strings, loop variables (even over a literal tuple),
      dict comprehensions and MetricCollections are unsafe.
    - **A per-rank value.** Every value is built from the hook's arguments (the batch, its index; a
      batch-end hook's `outputs` only when every `return` of the step is itself per-rank) and
      constants, through operators, subscripts, comprehensions, `torch.*` functions one level deep
      (not `torch.load`), `torch.nn.functional`, `torch.linalg`/`special`/`fft`,
      `torchmetrics.functional`, a list of tensor methods (`mean`, `argmax`, `float`, `item`, ...),
      the module's own `forward` (`self(x)`; unsafe if it names a collective), and `self.<name>(...)`
      for attributes only ever assigned a `torch.nn` module. Nothing that runs before the log may
      change such a value in place through an unknown call (`dist.all_reduce(total)`,
      `x.add_(...)`). Anything else (`self.<attribute>`, `self.step(batch)`, `self.all_gather(...)`,
      `metric.compute()` kept in a local, a Metric from a `ModuleDict`) is of unknown provenance,
      possibly global already, and a second reduction would change it (a `reduce_fx="sum"` doubles).
    - **Known flags.** `reduce_fx` absent or one of `"mean"`/`"max"`/`"min"`/`"sum"` (or `torch.mean`
      ...); no flags by position, no `sync_dist_group=` or `metric_attribute=`; `on_step=` a literal,
      and not `True` outside the training hooks (a per-batch sync needs equal batch counts);
      `batch_size=` absent or a literal int (Lightning syncs each rank's summed batch sizes as
      integers, a sum then a floor division by the world size, so a per-rank count such as the
      batch's number of tokens changes a weighted mean).
    - **This rank's own data.** The file names no iterable dataset (`IterableDataset`,
      `IterDataPipe`, defined or used): Lightning does not shard one, every rank may read the
      whole stream, and a synced `reduce_fx="sum"` would count each sample once per rank.
    - **Nothing else may sync out of order.** No other log of the class or its in-file bases that
      may sync (`sync_dist` not literally `False`, `**kwargs`, or a value that may be a Metric) is
      reached conditionally, from a helper or with a run-time key, and no log through another
      object in the file (`pl_module.log(..., sync_dist=True)`) syncs: a new sync could pair with it.
    - **Everything is seen.** The class's bases are Lightning's `LightningModule` or classes of the
      same file, and it defines no `log` of its own; with `use_distributed_sampler=False` known from
      the run, fixes in the evaluation batch hooks are unsafe (ranks may run different numbers of
      batches, some none).

    What the proof assumes: Lightning, not user code, calls the hooks (a subclass in another file
    that calls `super().validation_step()` under a condition is not seen, nor a callback in
    another file that logs conditionally with `sync_dist=True`); the batch is this rank's own data
    (a dataset built in another file is taken to be a map-style one that Lightning's
    DistributedSampler shards).
    """

    code = "DDP004"
    name = "epoch-log-sync"
    summary = "Epoch-level self.log without sync_dist=True: the value is rank 0's shard only"
    fixable = True
    triggers = ("self.log", ("_step", "epoch", "_start", "batch_end"))
    lightning_only = True
    module_only = True
    uses_facts = True

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        return a_method_calls_self_log(tree)

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """The one analysis: findings, each fix's applicability, and its typed edit
        (``sync_dist=True`` set on the call), which the engine carries out on LibCST's tree."""
        tests, words = TreeRankTests(ctx.imports), rank_words(ctx.imports)
        metrics_by_class: dict[ast.ClassDef, set[str]] = {}
        safety: dict[ast.ClassDef, tuple[ClassFacts, ast.Call | None]] = {}
        sampler_off = ctx.facts.sampler_off_for(ctx.path)
        for cls, method in tree_lightning.lightning_methods(tree, ctx.imports, ctx.facts.lightning_modules):
            if cls not in metrics_by_class:
                has_metrics = b"torchmetrics" in ctx.data
                metrics_by_class[cls] = tree_lightning.metric_attributes(cls, ctx.imports) if has_metrics else set()
            calls = [call for call in tree_lightning.self_method_calls_in_body(method, LOG_METHODS)
                     if _unsynced_epoch_log(call, method.name)]
            for call in _not_rank_gated(calls, method, tests, ctx.view, words):
                if _tree_logs_a_metric_object(call, metrics_by_class[cls]):
                    continue
                if cls not in safety:
                    facts = ClassFacts(tree, cls, ctx.imports)
                    safety[cls] = (facts, facts.unordered_sync())
                facts, unordered = safety[cls]
                if not keyword_edits_keep_comments(call, ctx.view, None, "sync_dist"):
                    # What --write would refuse (apply_edits keeps every comment): --check says so too.
                    ctx.report(call, _message(call, method.name), detail=_detail(call.func.attr, method.name)
                               + " (not rewritten: a comment inside the call would be lost)", fixable=False)
                    continue
                why = fix_problem(facts, method, call, unordered, sampler_off) or ctx.facts.hazard("iterable data")
                ctx.report(call, _message(call, method.name), detail=_detail(call.func.attr, method.name),
                           fixable=True, safe=why is None, why=why or "",
                           edits=[edits.SetKeyword(Span.of(ctx.position(call)), "sync_dist", "True")])


def _message(call: ast.Call, hook: str) -> str:
    return f"{tree_lightning.log_label(call)} in {hook}: epoch value without sync_dist"


def _detail(method: str, hook: str) -> str:
    return (
        f"self.{method}(...) in {hook} logs per epoch without sync_dist: under DDP "
        "the value logged (and seen by checkpoints and early stopping) is rank 0's shard only; "
        "add sync_dist=True"
    )








def _unsynced_epoch_log(call: ast.Call, hook: str) -> bool:
    """A log per epoch that says nothing about ``sync_dist``, with no ``*args``/``**kwargs`` and not
    ``rank_zero_only=True``: the calls the rule is about, before asking where they stand."""
    if not _tree_logs_per_epoch(call, hook) or tree_lightning.has_star(call):
        return False
    zero_only = tree_lightning.is_true(tree_lightning.keyword(call, "rank_zero_only"))
    return tree_lightning.keyword(call, "sync_dist") is None and not zero_only


def _not_rank_gated(calls: list[ast.Call], function: ast.FunctionDef | ast.AsyncFunctionDef, tests: TreeRankTests,
                    view, words: tuple[str, ...]) -> list[ast.Call]:
    """The calls (of ``function``) neither under a rank guard nor under an ``if`` whose test mentions a
    rank, in their order. Each search is made only where calls are left to ask about: most hooks
    have no epoch log to fix, and the second search reads the whole hook."""
    if calls:
        gated = {id(c) for statement, _guard in tree_gated_statements(function, tests)
                 for c in tree_lightning.self_method_calls(statement, LOG_METHODS)}
        calls = [call for call in calls if id(call) not in gated]
    if calls:
        gated = _tree_maybe_rank_gated(function, view, words)
        calls = [call for call in calls if id(call) not in gated]
    return calls


def _tree_logs_per_epoch(call: ast.Call, hook: str) -> bool:
    on_epoch = tree_lightning.keyword(call, "on_epoch")
    if on_epoch is not None:
        return tree_lightning.is_true(on_epoch)
    return hook in EPOCH_HOOKS


def _tree_is_metric_object(value: ast.expr, metrics: set[str]) -> bool:
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
        return value.attr in metrics
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "compute"


def _tree_logs_a_metric_object(call: ast.Call, metrics: set[str]) -> bool:
    if call.func.attr == "log":
        named = tree_lightning.keyword(call, "value")
        value = named.value if named is not None else (call.args[1] if len(call.args) > 1 else None)
        return value is not None and _tree_is_metric_object(value, metrics)
    named = tree_lightning.keyword(call, "dictionary")
    dictionary = named.value if named is not None else (call.args[0] if call.args else None)
    if dictionary is None:
        return False
    if isinstance(dictionary, ast.Dict):
        values = [v for k, v in zip(dictionary.keys, dictionary.values) if k is not None]  # ``**more`` has no key
        return bool(values) and all(_tree_is_metric_object(v, metrics) for v in values)
    return _tree_is_metric_object(dictionary, metrics)


def _tree_maybe_rank_gated(function: ast.FunctionDef | ast.AsyncFunctionDef, view, words: tuple[str, ...]) -> set[int]:
    """``_ranks.maybe_rank_gated`` on CPython's tree: ids of the calls under an ``if`` whose test
    mentions a rank, or after ``if <rank words>: return`` in the same block."""
    calls: set[int] = set()
    if not any(isinstance(n, ast.If) for n in every_node(function)):
        return calls  # most hooks: nothing to look for (the walk is kept on the hook's node)

    def all_calls(node: ast.AST) -> None:
        calls.update(id(n) for n in walk(node) if isinstance(n, ast.Call))

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _tree_mentions_rank(node, view, words):
            all_calls(node)
            return
        for field in node._fields:
            value = getattr(node, field, None)
            # An ``if`` is never in a one-line body, so every block that holds one is indented.
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                for index, statement in enumerate(value):
                    if isinstance(statement, ast.If) and _tree_mentions_rank(statement, view, words) and tree_only_returns(statement.body):
                        for later in value[index + 1:]:
                            all_calls(later)
                        break
        for child in child_nodes(node):
            visit(child)

    visit(function)
    return calls


def _tree_mentions_rank(node: ast.If, view, words: tuple[str, ...]) -> bool:
    """Whether the ``if`` test names a rank. A comment inside the test's parentheses counts as part of
    the test (the rule's earlier LibCST reading did so); there the whole header is read, which may
    only count more calls as rank-gated, so add fewer syncs."""
    if any(word in view.positions.segment(node.test) for word in words):
        return True
    header = view.text[view.positions.offset(node.lineno, node.col_offset):view.positions.offset(node.body[0].lineno, node.body[0].col_offset)]
    return "#" in header and tree_lightning.comment_before_colon(header) and any(word in header for word in words)
