"""DDP014 ambiguous-batch-size: epoch means weighted by a guessed batch size."""

from __future__ import annotations

import ast

from ddpfix.ast_walk import walk
from ddpfix.analysis.ast_shapes import a_method_calls_self_log
from ddpfix.analysis.lightning import (
                                       has_star, is_true, keyword, lightning_methods, self_method_calls, single_index, string_value,
                                       )
from ddpfix.rules.base import Rule, RuleContext

STEPS = frozenset({"training_step", "validation_step", "test_step"})
# on_epoch defaults to True in these steps (and to False in training_step).
EPOCH_BY_DEFAULT = frozenset({"validation_step", "test_step"})


class AmbiguousBatchSize(Rule):
    """
    # DDP014 ambiguous-batch-size

    ## What it does
    Reports `self.log` / `self.log_dict` calls that accumulate over the epoch (`on_epoch=True`, or
    the default in `validation_step`/`test_step`) without `batch_size=`, inside a step whose batch
    is not a plain tensor or tuple of tensors: `training_step(self, dataloader_iter)`, or a batch
    indexed by string keys (`batch["input_ids"]`). The message shows the argument to add.

    ## Why it breaks under DDP
    Epoch values are means weighted by each step's batch size, and Lightning infers it from the
    batch: for a dict it takes the first tensor it finds and warns "Trying to infer the
    `batch_size` from an ambiguous collection"; with `dataloader_iter` it cannot infer anything and
    requires it. A wrong weight skews every rank's mean, and with `sync_dist=True` the mean of
    means.

    ## Before
    ```python
    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.loss(batch["input_ids"], batch["labels"]), sync_dist=True)
    ```

    ## After
    ```python
    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.loss(batch["input_ids"], batch["labels"]), sync_dist=True,
                 batch_size=batch["input_ids"].size(0))
    ```

    ## When it does not fix
    Always: which entry holds the samples is yours to say.
    """

    code = "DDP014"
    name = "ambiguous-batch-size"
    summary = "Epoch-level self.log without batch_size= on a dict batch or dataloader_iter: a guessed weight"
    fixable = False
    triggers = ("self.log", ("dataloader_iter", '["', "['"))
    lightning_only = True
    module_only = True
    uses_facts = True
    # bench/real: 0 of 28 findings right (dict batches whose tensors share their first dimension are
    # inferred correctly and silently; a logged Metric ignores batch_size). Out of the default
    # selection until it meets its target.
    preview = True

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        return a_method_calls_self_log(tree)

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """Reports on CPython's tree exactly what the rule's LibCST version did (``bench/parity.py``
        compared them); every finding is a call, so it never needs LibCST."""
        for _cls, method in lightning_methods(tree, ctx.imports, ctx.facts.of_kind("LightningModule", ctx.path)):
            hook = method.name
            params = [p.arg for p in method.args.args if p.arg != "self"]  # positional-only ones never counted
            if hook not in STEPS or not params:
                continue
            batch = params[0]
            if batch == "dataloader_iter":
                hint = "batch_size=<the number of samples in this step>"
                why = "with dataloader_iter Lightning cannot infer the batch size and requires it"
            else:
                key = _first_string_key(method, batch, ctx)
                if key is None:
                    continue
                hint = f'batch_size=len({batch}["{key}"])'
                why = ("the batch is a dict, so Lightning infers the batch size from the first tensor it finds, "
                       "which is wrong when its entries differ in their first dimension")
            for call in self_method_calls(method.body, frozenset({"log", "log_dict"})):
                if keyword(call, "batch_size") is not None or has_star(call):
                    continue
                on_epoch = keyword(call, "on_epoch")
                per_epoch = is_true(on_epoch) if on_epoch is not None else hook in EPOCH_BY_DEFAULT
                if not per_epoch:
                    continue  # step values are not weighted
                ctx.report(call, f"self.{call.func.attr}(...) in {hook}: per-epoch mean without batch_size",
                           detail=f"self.{call.func.attr}(...) in {hook} accumulates over the epoch without "
                           f"batch_size: {why}, and the epoch mean is weighted by that guess; add {hint}", fixable=False)


def _first_string_key(method: ast.FunctionDef | ast.AsyncFunctionDef, batch: str, ctx: RuleContext) -> str | None:
    """The first string key ``batch["..."]`` in the method's body. Such subscripts cannot nest in
    one another, so the first in the source is the first LibCST's walk visits."""
    keys = []
    for statement in method.body:
        for node in walk(statement):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == batch:
                index = single_index(node.slice, ctx.view.positions.segment)
                text = string_value(index) if index is not None else None
                if text is not None:
                    keys.append((node.lineno, node.col_offset, text))
    return min(keys)[2] if keys else None

