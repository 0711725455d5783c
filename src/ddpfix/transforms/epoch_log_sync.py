"""DDP004 epoch-log-sync: epoch-level ``self.log`` without ``sync_dist=True`` logs rank 0's shard only."""

from __future__ import annotations

import ast

import libcst as cst

from ddpfix.transforms._ast_shapes import a_method_calls_self_log
from ddpfix.transforms._args import ReplaceCalls, is_true, keyword, with_keyword
from ddpfix.transforms._lightning import lightning_methods, metric_attributes, self_method_calls
from ddpfix.transforms._ranks import RankTests, gated_statements, maybe_rank_gated
from ddpfix.transforms.base import Rule, RuleContext

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
    Step-level logging (`training_step` without `on_epoch=True`) is left alone.
    """

    code = "DDP004"
    name = "epoch-log-sync"
    summary = "Epoch-level self.log without sync_dist=True: the value is rank 0's shard only"
    fixable = True
    triggers = (("self.log(", "self.log_dict("), ("_step", "epoch", "_start"))
    lightning_only = True
    module_only = True
    uses_facts = True

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        return a_method_calls_self_log(tree)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        tests = RankTests(ctx.imports)
        metrics_by_class: dict[cst.ClassDef, set[str]] = {}
        replacements: dict[cst.Call, cst.Call] = {}
        for cls, method in lightning_methods(module, ctx.imports, ctx.facts.lightning_modules):
            if cls not in metrics_by_class:
                has_metrics = b"torchmetrics" in ctx.data
                metrics_by_class[cls] = metric_attributes(cls, ctx.imports) if has_metrics else set()
            gated = {id(c) for g in gated_statements(method, tests) for c in self_method_calls(g.statement, LOG_METHODS)}
            gated |= maybe_rank_gated(method)
            for call in self_method_calls(method.body, LOG_METHODS):
                if id(call) in gated or not _logs_per_epoch(call, method.name.value):
                    continue
                if any(arg.star for arg in call.args):
                    continue  # **kwargs may carry sync_dist already
                if keyword(call, "sync_dist") is not None or is_true(keyword(call, "rank_zero_only")):
                    continue
                if _logs_a_metric_object(call, metrics_by_class[cls]):
                    continue
                fixed = with_keyword(call, "sync_dist", "True")
                hook = method.name.value
                message = (
                    f"self.{call.func.attr.value}(...) in {hook} logs per epoch without sync_dist: under DDP "
                    "the value logged (and seen by checkpoints and early stopping) is rank 0's shard only; "
                    "add sync_dist=True"
                )
                if ctx.report_fix(call, message, call, fixed):
                    replacements[call] = fixed
        if not replacements:
            return module
        return module.visit(ReplaceCalls(replacements, ctx.view.positions))


def _logs_per_epoch(call: cst.Call, hook: str) -> bool:
    on_epoch = keyword(call, "on_epoch")
    if on_epoch is not None:
        return is_true(on_epoch)
    return hook in EPOCH_HOOKS


def _is_metric_object(value: cst.BaseExpression, metrics: set[str]) -> bool:
    if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == "self":
        return value.attr.value in metrics
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "compute":
        return True
    return False


def _logs_a_metric_object(call: cst.Call, metrics: set[str]) -> bool:
    positional = [a for a in call.args if a.keyword is None]
    if call.func.attr.value == "log":
        value = keyword(call, "value") or (positional[1] if len(positional) > 1 else None)
        return value is not None and _is_metric_object(value.value, metrics)
    dictionary = keyword(call, "dictionary") or (positional[0] if positional else None)
    if dictionary is None:
        return False
    if isinstance(dictionary.value, cst.Dict):
        values = [e.value for e in dictionary.value.elements if isinstance(e, cst.DictElement)]
        return bool(values) and all(_is_metric_object(v, metrics) for v in values)
    return _is_metric_object(dictionary.value, metrics)
