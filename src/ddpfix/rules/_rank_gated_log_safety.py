"""DDP003's proofs of safety, on CPython's tree (``RankGatedLog.check`` decides applicability here).

Two fixes, two questions:

- ``rank_zero_only=True`` on a gated log is right only if nothing monitors the metric. "Nothing
  monitors it" is a claim about the whole project: it needs facts gathered from every file
  (``ProjectFacts.whole``: one file named alone, stdin, the language server and pre-commit's staged
  files give facts from part of a project), every monitor in them a literal (``unknown_monitors``
  empty).
- Moving a monitored log out of its guard (with ``sync_dist=True``) is right when the monitor is
  known (a literal one, found in the run), and safe when the move is proven to change nothing but
  who reaches the call: the guard stands at the method's top level, every value the call reads is a
  literal or a name bound on every rank before the guard, and what it jumps over calls only
  functions known to leave values alone.

Anything else is unknown, so unsafe, with a ``why``.
"""

from __future__ import annotations

import ast

from ddpfix.ast_walk import kept_on, walk
from ddpfix.facts import MONITORING_CALLBACKS
from ddpfix.imports import TREE_COMPOUND
from ddpfix.analysis.ast_shapes import nodes_of
from ddpfix.analysis.lightning import arguments_in_order, logged_names
from ddpfix.analysis.names import PURE_CALLEES, READ_ONLY_METHODS, exit_in, statement_names

#: Callbacks and helpers whose ``monitor`` decides what a run watches (facts.MONITORING_CALLBACKS,
#: and the Optuna/Ray pruning callbacks, which read ``trainer.callback_metrics[monitor]``).
MONITOR_TAKERS = frozenset({
    "EarlyStopping", "ModelCheckpoint", "StochasticWeightAveraging", "PyTorchLightningPruningCallback",
    "TuneReportCallback", "TuneReportCheckpointCallback",
})
#: A LightningCLI run reads its callbacks (and their monitors) from YAML or the command line.
CONFIG_RUNNERS = frozenset({"LightningCLI", "cli_lightning_logo"})
#: Tensor methods that read their receiver and give a new value (for a moved call's arguments).
_VALUE_METHODS = frozenset({"item", "detach", "mean", "sum", "float", "double", "cpu", "clone", "squeeze"})
#: Hooks Lightning calls on every rank, in step, where ``self.log`` may be called: a moved log there
#: is reached by every rank (a helper method may be called on rank 0 only).
EVERY_RANK_HOOKS = frozenset({
    "training_step", "validation_step", "test_step",
    "on_train_batch_start", "on_train_batch_end", "on_validation_batch_start", "on_validation_batch_end",
    "on_test_batch_start", "on_test_batch_end", "on_train_epoch_start", "on_train_epoch_end",
    "on_validation_epoch_start", "on_validation_epoch_end", "on_test_epoch_start", "on_test_epoch_end",
    "on_train_start", "on_validation_start", "on_test_start", "on_before_backward", "on_after_backward",
    "on_before_optimizer_step", "on_before_zero_grad",
})
#: What Lightning adds to a key logged with ``on_step=True, on_epoch=True``.
SUFFIXES = ("_step", "_epoch")


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _literal(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def unknown_monitor_here(tree: ast.Module) -> str | None:
    """The first monitor of this file that is not a literal (the facts keep literal ``monitor=``
    arguments of any call, the monitoring callbacks' positional ones, ``x.monitor = "..."`` and
    literal ``"monitor"`` values of dicts). Kept on the tree: asked for every gated log, it walked
    the whole file each time (20,000 logs in one method took minutes)."""
    known = getattr(tree, "_ddpfix_unknown_monitor", False)
    if known is False:
        known = tree._ddpfix_unknown_monitor = _unknown_monitor_here(tree)
    return known


def _unknown_monitor_here(tree: ast.Module) -> str | None:
    found: list[tuple[int, str]] = []
    for node in nodes_of(tree, ast.Call, ast.Dict):  # the first by line is kept: their order does not matter
        if isinstance(node, ast.Call):
            callee = _callee(node)
            if callee in CONFIG_RUNNERS:
                found.append((node.lineno, f"`{callee}` (line {node.lineno}) takes its callbacks and their monitors from a config"))
            for keyword in node.keywords:
                if keyword.arg == "monitor" and not _literal(keyword.value):
                    found.append((node.lineno, f"`monitor=` on line {node.lineno} is not a literal"))
                elif keyword.arg is None and callee in MONITOR_TAKERS:
                    found.append((node.lineno, f"`{callee}(**...)` on line {node.lineno} may set its monitor"))
            position = MONITORING_CALLBACKS.get(callee)
            if position is not None and len(node.args) > position and not _literal(node.args[position]):
                found.append((node.lineno, f"`{callee}`'s monitor on line {node.lineno} is not a literal"))
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "monitor" and not _literal(value):
                    found.append((node.lineno, f"the `\"monitor\"` on line {node.lineno} is not a literal"))
    return min(found)[1] if found else None


def unmonitored_unproven(names: list[str] | None, facts, tree: ast.Module) -> str | None:
    """Why "nothing monitors these names" is not proven (None: it is). ``rank_zero_only=True``
    leaves every other rank without the key: a monitor of it anywhere crashes or hangs them."""
    if names is None:
        return "the logged name is not a literal, so no one can tell whether a callback monitors it"
    for name in names:
        for suffix in SUFFIXES:
            watched = facts.monitored.get(name + suffix)
            if watched:
                return (f"{name + suffix} is monitored by {watched[0].describe()}, and this call may be what "
                        f"logs it (on_step and on_epoch give {name}_step and {name}_epoch)")
    local = unknown_monitor_here(tree)
    if local is not None:
        return f"{local}: it may name {names[0]}"
    if not facts.whole:
        return (f"no proof that nothing monitors {names[0]}: the facts come from part of the project (stdin "
                "without --stdin-filename, an unsaved buffer), which does not see other files' callbacks")
    if facts.unknown_monitors:
        where = facts.unknown_monitors[0]
        return (f"no proof that nothing monitors {names[0]}: a monitor of the project is not a literal "
                f"({where.describe()})")
    return None


def move_unproven(call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef, guard_node: ast.AST,
                  jumped: list, synced: bool, monitored: bool, tests, cls: ast.ClassDef | None = None) -> str | None:
    """Why moving ``call`` out of its guard (to every rank, with ``sync_dist=True``) is not proven
    to change nothing but the DDP failure; None when it is."""
    if not monitored and not synced:
        return ("no monitor is known for it: on every rank with sync_dist=True its value turns from rank 0's "
                "into the mean over ranks")
    if function.name not in EVERY_RANK_HOOKS:
        return f"`{function.name}` is not a Lightning hook: that every rank calls it is not proven"
    if not any(statement is guard_node for statement in function.body):
        return "the guard is not at the method's top level: that every rank has the logged values is not proven"
    for statement in function.body:
        if statement is guard_node:
            break
        word = exit_in(statement)
        if word:
            return (f"the method can `{word}` before the guard (line {statement.lineno}): that every rank reaches "
                    "the synced log is not proven")
    bound = _bound_on_every_rank(function, guard_node, tests)
    for argument in arguments_in_order(call):
        if isinstance(argument, ast.keyword):
            if argument.arg is None or not isinstance(argument.value, ast.Constant):
                return f"`{argument.arg or '**'}=` is not a literal: it would now be computed on every rank"
            continue
        unknown = _unknown_value(argument, bound)
        if unknown is not None:
            return unknown
    plain = _plain_attributes(cls)
    for unit in jumped:
        for statement in unit if isinstance(unit, tuple) else (unit,):
            for node in walk(statement):
                changed = _changes_in_place(node, plain)
                if changed is not None:
                    return (f"{changed} (line {node.lineno}) inside the guard changes a value in place, and the log "
                            "now runs in another order with it: an alias (`pct = acc`) may be what it logs")
                if isinstance(node, ast.Call) and not _leaves_values_alone(node):
                    name = _callee(node) or "a call"
                    return (f"`{name}()` inside the guard now runs in another order with the log: it is not known "
                            "to leave the logged value alone")
    return None


def _plain_attributes(cls: ast.ClassDef | None):
    """Whether ``self.<name> = v`` only rebinds an attribute of the module: not where the class
    defines ``__setattr__`` or a property of that name (its setter may run any code)."""
    if cls is None:
        return lambda name: False
    custom = set()
    for statement in cls.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if statement.name in ("__setattr__", "__delattr__"):
                return lambda name: False
            if statement.decorator_list:
                custom.add(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            custom.update(t.id for t in targets if isinstance(t, ast.Name))  # ``x = property(...)``, a descriptor
    return lambda name: name not in custom


def _changes_in_place(node: ast.AST, plain=lambda name: False) -> str | None:
    """An in-place change (``x *= 100``, ``x[i] = v``, ``x.attr = v``, ``del x[i]``), whatever its
    name: a tensor is changed through every name that holds it. ``self.<name> = v`` only rebinds
    the module's attribute (``plain``: no setter of the class runs). In-place methods (``x.mul_()``)
    are calls not known to leave values alone (``_leaves_values_alone``)."""
    if isinstance(node, ast.AugAssign):
        return f"`{_short(ast.unparse(node))}`"
    targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target] if isinstance(node, ast.AnnAssign) else []
    for target in targets:
        for part in walk(target):
            if isinstance(part, (ast.Subscript, ast.Attribute)) and isinstance(part.ctx, (ast.Store, ast.Del)):
                if (isinstance(part, ast.Attribute) and isinstance(part.ctx, ast.Store) and isinstance(part.value, ast.Name)
                        and part.value.id == "self" and plain(part.attr)):
                    continue
                return f"`{_short(ast.unparse(node))}`"
    return None


def _short(text: str) -> str:
    text = text.splitlines()[0] if text else text
    return text if len(text) < 40 else text[:37] + "..."


def synced_elsewhere(call: ast.Call, names: list[str] | None, cls: ast.ClassDef) -> str | None:
    """Why the other ranks may still sync the key without rank 0 (None: no other ``self.log`` of
    the class may log it with a sync). ``else: self.log(k, sync_dist=True)``, a complementary
    ``if self.global_rank > 0:`` or a helper method logging it: rank 0 then leaves their all-reduce."""
    logs, by_key, unnamed = kept_on(cls, _syncing_logs)
    # The first two of each list are enough: ``call`` itself is at most one of them.
    if names is None:
        candidates = range(min(2, len(logs)))
    else:
        candidates = [*unnamed[:2], *(order for name in names for order in by_key.get(name, ())[:2])]
    first = min((order for order in candidates if logs[order][0] is not call), default=None)
    if first is None:
        return None
    other, theirs = logs[first]
    what = next(iter(set(names) & set(theirs)), None) if names and theirs else None
    key = f"{what}" if what else "a key that may be this one"
    return (f"`self.{other.func.attr}(...)` on line {other.lineno} may log {key} with a sync too: "
            "ranks that reach it would enter the all-reduce without rank 0")


def _syncing_logs(cls: ast.ClassDef):
    """The class's ``self.log``/``self.log_dict`` calls that may sync, in walk order, with the
    names each logs (None: not known); the orders of those logging each name, and of those whose
    names are not known. Asked once per gated log (``kept_on``): walking the class each time was
    quadratic in its size."""
    logs = [(other, logged_names(other)) for other in walk(cls)
            if isinstance(other, ast.Call) and isinstance(other.func, ast.Attribute)
            and other.func.attr in ("log", "log_dict") and isinstance(other.func.value, ast.Name)
            and other.func.value.id == "self" and _may_sync(other)]
    by_key: dict[str, list[int]] = {}
    unnamed: list[int] = []
    for order, (_other, theirs) in enumerate(logs):
        if theirs is None:
            unnamed.append(order)
        else:
            for name in dict.fromkeys(theirs):
                by_key.setdefault(name, []).append(order)
    return logs, by_key, unnamed


def _may_sync(call: ast.Call) -> bool:
    """``sync_dist`` given and not a literal False, or maybe passed in ``*args`` / ``**kwargs`` or
    positionally (its place in ``log`` / ``log_dict``: the 9th / 8th)."""
    for keyword in call.keywords:
        if keyword.arg is None:
            return True
        if keyword.arg == "sync_dist":
            return not (isinstance(keyword.value, ast.Constant) and keyword.value.value in (False, None))
    return any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) >= 8


def _unknown_value(node: ast.expr, bound: dict[str, str | None]) -> str | None:
    """Why the value of ``node`` is not known to exist, the same, on every rank (None: it is)."""
    if isinstance(node, ast.Constant):
        return None
    if isinstance(node, ast.Name):
        if node.id not in bound:
            return f"`{node.id}` is not known to be bound on every rank before the guard"
        return bound[node.id]
    if isinstance(node, ast.Dict):
        if not all(_literal(k) for k in node.keys):
            return "a key of the logged dict is not a literal"
        return next((why for v in node.values if (why := _unknown_value(v, bound))), None)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"`self.{node.attr}` is not known to be set on every rank (it may be set on rank 0 only)"
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return _unknown_value(node.value, bound)
    if isinstance(node, ast.UnaryOp):
        return _unknown_value(node.operand, bound)
    if isinstance(node, ast.BinOp):
        return _unknown_value(node.left, bound) or _unknown_value(node.right, bound)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _VALUE_METHODS
            and not node.args and not node.keywords):
        return _unknown_value(node.func.value, bound)
    text = ast.unparse(node)
    return f"`{text if len(text) < 40 else text[:37] + '...'}` would now be computed on every rank: not known to be free of effects"


def _bound_on_every_rank(function, guard_node, tests) -> dict[str, str | None]:
    """Names bound before ``guard_node`` on every rank, alike: parameters, and names a top-level
    statement before the guard binds without a rank test. A name that a compound statement before
    the guard (an ``if``, a loop) may rebind maps to why it is not proven."""
    arguments = function.args
    bound: dict[str, str | None] = {
        a.arg: None for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                              *filter(None, [arguments.vararg, arguments.kwarg])]
    }
    for statement in function.body:
        if statement is guard_node:
            break
        names = statement_names(statement)
        changed = names.binds | names.assigns | names.writes
        if isinstance(statement, TREE_COMPOUND):
            zero = isinstance(statement, ast.If) and (tests.classify(statement.test) or ("",))[0] in ("zero", "nonzero")
            where = "on rank 0 only" if zero else "only on some paths"
            for name in changed:
                bound[name] = f"`{name}` is set {where} (line {statement.lineno}); compute it on every rank first"
        elif isinstance(statement, ast.Delete):
            for name in names.binds:
                bound.pop(name, None)
        else:
            rank_dependent = any(_is_rank_test(node, tests) for node in walk(statement))
            for name in names.binds:
                bound[name] = (f"`{name}` depends on the rank (line {statement.lineno})" if rank_dependent else None)
    return bound


def _is_rank_test(node: ast.AST, tests) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "is_global_zero":
        return True
    return isinstance(node, ast.expr) and tests._rank(node)


def _leaves_values_alone(call: ast.Call) -> bool:
    """A call known not to change the values it is given or reaches: ``print``, ``len``,
    ``x.item()``, ``self.print(...)``, ``self.log(...)`` and kin."""
    callee = _callee(call)
    if isinstance(call.func, ast.Attribute):
        return callee in READ_ONLY_METHODS
    return callee in PURE_CALLEES
