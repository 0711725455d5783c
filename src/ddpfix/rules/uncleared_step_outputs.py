"""DDP010 uncleared-step-outputs: step outputs kept in a list that the epoch-end hook never clears."""

from __future__ import annotations

import ast
from collections import Counter

from ddpfix.ast_walk import walk
from ddpfix import edits
from ddpfix.edits import Span
from ddpfix.analysis.ast_shapes import every_node, methods
from ddpfix.analysis.lightning import FUNCTIONS, lightning_methods
from ddpfix.analysis.names import exit_in
from ddpfix.rules.base import Rule, RuleContext, TreeView

EPOCH_END = {
    "training_step": "on_train_epoch_end",
    "validation_step": "on_validation_epoch_end",
    "test_step": "on_test_epoch_end",
    "predict_step": "on_predict_epoch_end",
}


SET_UP_ONCE = frozenset({"__init__", "setup", "configure_model"})


class UnclearedStepOutputs(Rule):
    """
    # DDP010 uncleared-step-outputs

    ## What it does
    Finds a list attribute that a `*_step` appends to and the matching `on_*_epoch_end` reads, but
    that nothing ever clears, and appends `self.<name>.clear()` as the last statement of that
    `on_*_epoch_end`.

    ## Why it breaks under DDP
    The list grows every epoch on every rank: memory climbs until a rank is killed, and each
    epoch's metric is computed over every epoch so far. Lightning's docs clear it in the hook
    (`self.validation_step_outputs.clear()  # free memory`).

    ## Before
    ```python
    def validation_step(self, batch, batch_idx):
        self.outputs.append(self.loss(batch))

    def on_validation_epoch_end(self):
        self.log("val_loss", torch.stack(self.outputs).mean(), sync_dist=True)
    ```

    ## After
    ```python
    def on_validation_epoch_end(self):
        self.log("val_loss", torch.stack(self.outputs).mean(), sync_dist=True)
        self.outputs.clear()
    ```

    ## When it does not fix
    When the list is read anywhere else after the epoch end (another hook, or a callback through
    `pl_module.<name>`), when it is stored elsewhere as it is, or when the epoch-end hook can
    `return` early: reported.

    ## Fix safety
    Clearing changes what any later reader of the list sees, so it is safe only for a list proven
    to live within one epoch.

    - **safe** when all of this is proven: the hooks are the fit loop's (`training_step` with
      `on_train_epoch_end`, `validation_step` with `on_validation_epoch_end`); the class makes the
      list once, empty (`[]` or `list()`), in `__init__`; the step only appends to it (`.append`,
      `.extend`); the epoch-end hook only reads it whole, the same way every epoch (not under an
      `if`, a loop, `and`/`or` or after a `return`: a list read every few epochs carries the
      epochs between reads, review round 15): through
      `torch.stack`/`torch.cat` and kin (`numpy.stack`, `numpy.concatenate`...), their array then
      only averaged, cast or copied (`.mean()`, `torch.mean`, `.float()`, `.cpu()`, element-wise
      operators) and handed on, or a `for` over it that only adds items into running totals
      (`total += loss; count += n`: a mean's parts); and its name is name-mangled
      (`self.__outputs`), so no other file reads it. A loop that weighs the epochs (an exponential
      average), `torch.min`/`np.max` of the array, a comprehension reduced by `min`/`sum`: unsafe
      (review helper-45).
    - **unsafe** otherwise, saying what was not proven: test and predict hooks (their loops run
      one epoch per `trainer.test`/`predict` call, so nothing grows, and the script may read the
      list after the call); a `deque(maxlen=...)` or any other container, or a list made outside
      `__init__` or by a base class (a replay buffer or a history may be kept across epochs on
      purpose); a step that reads the list too (`len(self.outputs)`); an epoch-end hook that reads
      it as a history across epochs (a slice such as `self.__losses[-50:]`, an index, `len`,
      `sum`, `min`/`max`, or the same on its stacked array: `.shape`, `.max()`, `[-50:]`), which
      clearing would change, or that hands the list itself to code that may keep it; a public name, because ddpfix's facts do not
      follow attributes across files, and a callback, a subclass or the script after `fit` may
      read the whole run's history. Lists cleared in one hook share one decision: the hook's
      fixes are safe only if each of them is.
    - **no fix**: the cases of *When it does not fix*.
    """

    code = "DDP010"
    name = "uncleared-step-outputs"
    summary = "Step outputs appended every step, read at epoch end, never cleared: memory grows on every rank"
    fixable = True
    triggers = ((".append(", ".extend("), "_epoch_end", "_step")
    lightning_only = True
    module_only = True
    uses_facts = True

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """Some class (which ones are LightningModules is ``check``'s question) defines a step of
        ``EPOCH_END`` and its epoch-end hook, and the step calls ``self.<x>.append``/``extend``.
        Lightning's own hook and callback modules show the pattern only in docstrings."""
        for owner, method in methods(tree):
            end = EPOCH_END.get(method.name)
            if end is None or not any(
                isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == end for s in owner.body
            ):
                continue
            if any(
                isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend")
                and isinstance(node.func.value, ast.Attribute) and isinstance(node.func.value.value, ast.Name)
                and node.func.value.value.id == "self"
                for node in every_node(method)
            ):
                return True
        return False

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """The one analysis: findings, each fix's applicability, and its typed edit (the lists'
        ``.clear()`` appended to the epoch-end hook), which the engine carries out on LibCST's tree."""
        # Imported here, not at the top: a run loads every rule, and only files this rule checks need it.
        from ddpfix.rules._uncleared_step_outputs_safety import clear_safety

        classes = {cls: None for cls, _ in lightning_methods(tree, ctx.imports, ctx.facts.of_kind("LightningModule", ctx.path))}
        for cls in classes:
            methods = {s.name: s for s in cls.body if isinstance(s, FUNCTIONS)}
            # Creating the list (in __init__ or setup) happens once, not once per epoch: it neither
            # clears it between epochs nor reads it.
            uses = {name: _attribute_uses(method, ctx.view) for name, method in methods.items() if name not in SET_UP_ONCE}
            found = list(_uncleared(tree, cls, methods, uses))
            # A finding is known by its code, line and column, so the lists cleared in one hook share
            # one fix: one applicability (safe only if every clear is) and one edit clearing them all.
            whys: dict[ast.AST, list[str]] = {}
            clears: dict[ast.AST, list[str]] = {}
            for end, name, _message, refusal in found:
                if not refusal:
                    step = next(step for step, hook in EPOCH_END.items() if hook == end.name)
                    why = clear_safety(tree, methods, step, end, name, ctx.imports)
                    whys.setdefault(end, []).extend([why] if why else [])
                    clears.setdefault(end, []).append(f"self.{name}.clear()")
            for end, name, message, refusal in found:
                short = f"self.{name} grows every epoch: {end.name} never clears it"
                if refusal:
                    ctx.report(end, short, detail=f"{message} (not rewritten: {refusal})", fixable=False)
                else:
                    why = "; ".join(dict.fromkeys(whys[end]))
                    fix = [edits.AppendStatements(Span.of(ctx.position(end)), tuple(clears[end]))]
                    ctx.report(end, short, detail=message, fixable=True, safe=not why, why=why, edits=fix)


def _uncleared(tree: ast.Module, cls: ast.ClassDef, methods: dict, uses: dict):
    """(epoch-end hook, list name, message, refusal or None) for every list of ``cls`` a step
    appends to and its epoch-end hook reads, that nothing clears."""
    for step, end in EPOCH_END.items():
        if step not in methods or end not in methods:
            continue
        for name in sorted(uses[step]["append"]):
            if name not in uses[end]["read"] or any(name in u["clear"] for u in uses.values()):
                continue
            message = (
                f"self.{name} gets an item every {step} and is read in {end} but never cleared: it grows "
                f"every epoch on every rank and mixes epochs; clear it at the end of {end}"
            )
            readers = [m for m, u in uses.items() if name in u["read"] and m not in (step, end)]
            refusal = None
            if readers:
                refusal = f"{readers[0]} reads it too"
            elif _attribute_count(tree, name) > _attribute_count(cls, name):
                refusal = f"code outside the class uses .{name} (a callback, a subclass, or the script after fit)"
            elif _aliased(cls, name):
                refusal = f"self.{name} is stored elsewhere as it is, and clearing would empty that copy too"
            elif exit_in(methods[end].body):
                refusal = f"{end} can return early"
            yield methods[end], name, message, refusal


def _attribute_count(node: ast.AST, name: str) -> int:
    """How many times code under ``node`` reads or sets ``<x>.<name>``: more in the file than in the
    class means code outside it (a callback, a subclass, the script) uses the list too. Comments,
    strings and import paths are not attributes."""
    if not isinstance(node, ast.Module):
        return sum(isinstance(n, ast.Attribute) and n.attr == name for n in walk(node))
    # The whole file's counts, kept on its tree: asked for every list attribute of every class.
    counts = getattr(node, "_ddpfix_attribute_counts", None)
    if counts is None:
        counts = node._ddpfix_attribute_counts = Counter(n.attr for n in walk(node) if isinstance(n, ast.Attribute))
    return counts[name]


def _is_self_attribute(node: ast.AST, name: str | None = None) -> bool:
    """``self.<name>`` (any name when ``name`` is None)."""
    return (
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
        and (name is None or node.attr == name)
    )


def _attribute_uses(method: ast.FunctionDef | ast.AsyncFunctionDef, view: TreeView) -> dict[str, set[str]]:
    """self.<name> attributes a method appends to, clears, and reads."""
    uses: dict[str, set[str]] = {"append": set(), "clear": set(), "read": set()}
    for node in every_node(method):
        if _is_self_attribute(node):
            uses["read"].add(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            # LibCST spells a dotted module name with Attribute nodes: ``import self.x`` reads ``.x``.
            dotted = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            uses["read"].update(parts[1] for parts in (d.split(".") for d in dotted) if len(parts) > 1 and parts[0] == "self")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_self_attribute(node.func.value):
            if node.func.attr in ("append", "extend"):
                uses["append"].add(node.func.value.attr)
            elif node.func.attr == "clear":
                uses["clear"].add(node.func.value.attr)
        elif isinstance(node, ast.Assign):
            # re-bound: a fresh list, or something else entirely
            uses["clear"].update(t.attr for t in node.targets if _is_self_attribute(t))
        elif isinstance(node, ast.Delete) and _deletes_one(node, view):
            target = node.targets[0]
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute):
                uses["clear"].add(target.value.attr)
    return uses


def _deletes_one(node: ast.Delete, view: TreeView) -> bool:
    """``del x[:]`` (LibCST: the target itself), not ``del a, b`` or ``del x[:],`` (a ``Tuple``)."""
    if len(node.targets) != 1:
        return False
    positions, target = view.positions, node.targets[0]
    after = view.text[positions.offset(target.end_lineno, target.end_col_offset):
                      positions.offset(node.end_lineno, node.end_col_offset)]
    return "," not in after


def _aliased(cls: ast.ClassDef, name: str) -> bool:
    """``x = self.<name>``, ``other.append(self.<name>)``, ``self.y = self.<name>``: the list itself kept."""
    for node in every_node(cls):
        if isinstance(node, ast.Assign) and _is_self_attribute(node.value, name):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend", "insert", "add"):
            values = [a.value if isinstance(a, ast.Starred) else a for a in node.args] + [k.value for k in node.keywords]
            if any(_is_self_attribute(value, name) for value in values):
                return True
    return False
