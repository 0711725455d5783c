"""DDP010's proof that clearing a list at the end of its epoch-end hook changes nothing the program
computes except the growth across epochs (``check`` only).

Clearing is safe only for a plain list known to live within one epoch (an allowlist; anything
else is unsafe, with what was not proven):

* the hooks are the fit loop's (``training_step`` / ``validation_step``): test and predict run one
  epoch per ``trainer.test``/``predict`` call, so nothing grows across epochs there, and the
  script may read the list after the call;
* the class creates it once, as ``[]`` or ``list()``, in ``__init__`` (a ``deque(maxlen=...)``, a
  list made elsewhere or a base class's attribute is not known to be a plain per-epoch list);
* the step only appends to it (``.append``/``.extend``), and the epoch-end hook only reads it as a
  whole, the same way every epoch: through ``torch.stack``/``torch.cat`` and kin (their array not
  indexed, sliced, sized, nor reduced to an extreme or a total) or a ``for`` over it that only adds
  items into running totals. ``len``,
  ``sum``, ``min``/``max``, an index or a slice may read a history across epochs (a step count, a
  best-so-far, a window over the last steps) that clearing would change; nothing may keep the list
  itself;
* no other file can read it: the name is private to the class by Python's name mangling
  (``self.__name``), since ddpfix's facts do not follow attributes across files (a callback, a
  subclass or the script after ``fit`` may read a history on purpose).
"""

from __future__ import annotations

import ast

from ddpfix.ast_walk import child_nodes, walk
from ddpfix.analysis.ast_shapes import every_node
from ddpfix.imports import ImportTable
from ddpfix.analysis.names import bound_names

FIT_STEPS = frozenset({"training_step", "validation_step"})
#: Calls that read the whole list the same way every epoch and keep no reference to it: they turn
#: every item into one array. A builtin over the list (``len``, ``sum``, ``min``, ``max``, ``sorted``...),
#: an index or a slice may read it as a history across epochs (a step count, a best-so-far, a window
#: over the last steps), which clearing would change.
WHOLE_LIST_CALLS = frozenset(
    [f"torch.{n}" for n in ("stack", "cat", "concat", "concatenate", "vstack", "hstack", "tensor", "as_tensor")]
    + [f"numpy.{n}" for n in ("concatenate", "stack", "array", "asarray", "vstack", "hstack")]
)
#: Methods of that array that read all of it the same way (an element-wise mean, a copy, a cast).
WHOLE_ARRAY_METHODS = frozenset({"mean", "nanmean", "float", "double", "detach", "cpu", "to", "flatten", "squeeze",
                                 "view", "reshape", "numpy", "contiguous"})
#: Array functions that read all of an array the same way: a mean, a cast, a copy.
WHOLE_ARRAY_FUNCTIONS = frozenset({"mean", "nanmean", "flatten", "squeeze", "reshape", "ravel", "asarray", "array"})


def _library_function(func: ast.expr, imports: ImportTable | None) -> str | None:
    """``min`` for ``torch.min``, ``np.min``, ``T.max`` after ``import torch as T``, ``amax`` after
    ``from torch import amax``: an array library's function, read through the file's imports (review
    helper-46, c05); None for anything else."""
    qualified = imports.qualify(func) if imports is not None else None
    if qualified is not None and qualified.split(".", 1)[0] in ("torch", "numpy"):
        return qualified.rsplit(".", 1)[-1]
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("torch", "np", "numpy"):
        return func.attr
    return None


#: Builtins that turn a value into a number or a string: read as a cast.
_CASTS = frozenset({"float", "int", "bool", "str"})
#: Calls an epoch-end hook hands a value to for logging, which read it as it is.
_LOGGING = frozenset({"log", "log_dict"})


#: Builtins that read an array as a history (how many items, the best so far, a total over epochs).
HISTORY_BUILTINS = frozenset({"len", "sum", "min", "max", "sorted", "any", "all"})
SET_UP_ONCE = frozenset({"__init__", "setup", "configure_model"})


def clear_safety(tree: ast.Module, methods: dict, step: str, end: ast.FunctionDef, name: str,
                 imports: ImportTable) -> str | None:
    """None when appending ``self.<name>.clear()`` to ``end`` is proven safe; else what was not
    proven (the finding's ``why``)."""
    if step not in FIT_STEPS:
        return (f"{step} runs one epoch per trainer call, so nothing grows across epochs, and code after "
                f"the call (another file, the script) may read self.{name}")
    why = _created(methods, name)
    if why is not None:
        return why
    why = _step_only_appends(methods[step], name)
    if why is not None:
        return why
    why = _end_only_copies(tree, end, name, imports)
    if why is not None:
        return why
    if not (name.startswith("__") and not name.endswith("__")):
        return (f"other files (a callback, a subclass, the script after fit) may read self.{name} after the epoch, "
                "and ddpfix's facts do not follow attributes across files")
    return None


def _self_uses(node: ast.AST, name: str) -> list[ast.Attribute]:
    return [n for n in walk(node) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id == "self" and n.attr == name]


def _created(methods: dict, name: str) -> str | None:
    made = []
    for method_name in SET_UP_ONCE:
        method = methods.get(method_name)
        if method is None:
            continue
        for use in _self_uses(method, name):
            made.append((method_name, use))
    if not made:
        return (f"self.{name} is not created in this class's __init__ (a base class, another file?): "
                "ddpfix cannot tell it is a plain list")
    if len(made) > 1:
        return f"self.{name} is used in {made[1][0]} too (line {made[1][1].lineno})"
    method_name, use = made[0]
    parent = next((n for n in every_node(methods[method_name]) if isinstance(n, ast.Assign) and use in n.targets), None)
    if method_name != "__init__" or parent is None or len(parent.targets) != 1:
        return f"self.{name} is made in {method_name} in a way ddpfix does not follow (line {use.lineno})"
    value = parent.value
    plain = (isinstance(value, ast.List) and not value.elts) or (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "list"
        and not value.args and not value.keywords
    )
    if not plain:
        return (f"self.{name} holds {ast.unparse(value)[:40]}, not an empty plain list: it may be a history or a "
                "bounded buffer kept on purpose")
    return None


def _step_only_appends(step: ast.FunctionDef, name: str) -> str | None:
    parents = {child: node for node in every_node(step) for child in child_nodes(node)}
    for use in _self_uses(step, name):
        method = parents.get(use)
        call = parents.get(method)
        if not (isinstance(method, ast.Attribute) and method.attr in ("append", "extend")
                and isinstance(call, ast.Call) and call.func is method):
            return (f"{step.name} reads self.{name} too (line {use.lineno}): it would see only this epoch's items")
    return None




def _end_only_copies(tree: ast.Module, end: ast.FunctionDef, name: str, imports: ImportTable) -> str | None:
    """None when the epoch-end hook reads the list only as a whole, the same way every epoch: through
    ``torch.stack``/``torch.cat`` and kin (their result not indexed, sliced, sized or reduced to an
    extreme or a total), or a ``for`` over it."""
    parents = {child: node for node in every_node(end) for child in child_nodes(node)}
    bound = bound_names(tree)
    for use in sorted(_self_uses(end, name) + _derived_uses(end, name, parents), key=lambda n: (n.lineno, n.col_offset)):
        condition = _read_on_some_epochs(use, parents, end)
        if condition is not None:
            return (f"{end.name} reads self.{name} on some epochs only ({condition}): the list then carries the "
                    "epochs between reads, which clearing every epoch would change")
        if not _self_uses(use, name):
            continue  # a local computed from the list: only where it is used is asked
        parent = parents.get(use)
        if isinstance(parent, ast.Call) and use in parent.args and (imports.qualify(parent.func) or "") in WHOLE_LIST_CALLS:
            if _array_read_whole(parent, parents, bound, end, imports=imports):
                continue
            return (f"{end.name} reads the array of self.{name} in part or as a count, an extreme or a total "
                    f"(line {use.lineno}): that may be a history across epochs, which clearing would change")
        if isinstance(parent, ast.For) and parent.iter is use and _only_sums(parent, end):
            continue  # ``for loss, n in self.__parts: total += loss; count += n``: a mean's parts
        if isinstance(parent, ast.comprehension) and parent.iter is use:
            made = parents.get(parent)
            holder = parents.get(made)
            if isinstance(holder, ast.Call) and made in holder.args and (imports.qualify(holder.func) or "") in WHOLE_LIST_CALLS \
                    and _array_read_whole(holder, parents, bound, end, imports=imports):
                continue  # ``torch.stack([x.detach() for x in self.__outs])``
            return (f"{end.name} reads self.{name} in a comprehension (line {use.lineno}) whose result may be a "
                    "count, an extreme or a total across epochs, which clearing would change")
        if isinstance(parent, ast.For) and parent.iter is use:
            return (f"{end.name} loops over self.{name} (line {use.lineno}) computing more than sums (a running "
                    "average, a best-so-far across epochs), which clearing would change")
        if isinstance(parent, ast.Subscript) and parent.value is use:
            return (f"{end.name} indexes or slices self.{name} (line {use.lineno}): a window over the last steps "
                    "may span epochs on purpose, and clearing would change what it reads")
        if isinstance(parent, ast.Call) and use in parent.args and isinstance(parent.func, ast.Name) and parent.func.id not in bound:
            return (f"{end.name} reads self.{name} through `{parent.func.id}(...)` (line {use.lineno}): a count, an "
                    "extreme or a total may be a history across epochs, which clearing would change")
        return (f"{end.name} hands self.{name} on in a way ddpfix does not follow (line {use.lineno}): "
                "something may keep the list itself, or read it as a history across epochs, which clearing would change")
    return None


def _only_sums(loop: ast.For, end: ast.FunctionDef) -> bool:
    """The loop only adds each item into running totals: every statement is ``total += e`` or
    ``total = total + e`` on a local name, ``e`` not reading any total (a sum and a count: a mean's
    parts); no ``else``. An exponential average (``ema = 0.9 * ema + 0.1 * x``), a best-so-far
    (``best = min(best, x)``, an ``if``) weigh the epochs, which clearing would change (review
    helper-45, c05)."""
    if loop.orelse:
        return False
    totals: set[str] = set()
    added: list[ast.expr] = []
    for statement in loop.body:
        if isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Add) and isinstance(statement.target, ast.Name):
            totals.add(statement.target.id)
            added.append(statement.value)
        elif (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
              and isinstance(statement.value, ast.BinOp) and isinstance(statement.value.op, ast.Add)
              and isinstance(statement.value.left, ast.Name) and statement.value.left.id == statement.targets[0].id):
            totals.add(statement.targets[0].id)
            added.append(statement.value.right)
        else:
            return False
    if any(isinstance(n, ast.Name) and n.id in totals for value in added for n in walk(value)):
        return False
    # Each total starts as a number (``total, count = 0.0, 0``): ``history += [x]`` on a list
    # concatenates, and ``max(history)`` then reads a best-so-far (review helper-46, c05).
    numbers = _numeric_starts(end)
    return totals <= numbers


def _numeric_starts(function: ast.FunctionDef) -> set[str]:
    """Names the function binds once, to a number written out (``total = 0.0``, ``a, b = 0.0, 0``)."""
    found: dict[str, int] = {}
    numeric: set[str] = set()
    for node in walk(function):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found[node.id] = found.get(node.id, 0) + 1
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            pairs = zip(target.elts, value.elts) if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) \
                and len(target.elts) == len(value.elts) else [(target, value)]
            for name, start in pairs:
                if isinstance(name, ast.Name) and isinstance(start, ast.Constant) and type(start.value) in (int, float):
                    numeric.add(name.id)
    # bound by the start and by the loop's own additions only: counted below by the caller's loop
    return numeric


def _derived_uses(end: ast.FunctionDef, name: str, parents: dict) -> list[ast.Name]:
    """The uses of the hook's locals computed from the list (``acc = torch.cat(self.__correct).mean()``,
    and locals computed from those): where such a local is used on some epochs only (``self.log(...)
    if report else None``), so is what the list holds (review round 16)."""
    derived: set[str] = set()
    while True:
        found = {target.id for node in every_node(end) if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                 and node.value is not None and (_self_uses(node.value, name) or any(
                     isinstance(n, ast.Name) and n.id in derived for n in walk(node.value)))
                 for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                 for target in walk(target) if isinstance(target, ast.Name)}
        if found <= derived:
            break
        derived |= found
    return [n for n in every_node(end) if isinstance(n, ast.Name) and n.id in derived and isinstance(n.ctx, ast.Load)]


def _read_on_some_epochs(use: ast.AST, parents: dict, end: ast.FunctionDef) -> str | None:
    """Where the hook may skip the read of ``use`` on an epoch: an ``if``, a conditional expression,
    a loop whose body holds it, a ``while``, a ``match``, an ``except``, the right side of ``and``/
    ``or``, or a ``return`` before it (``if (self.current_epoch + 1) % k == 0: torch.cat(...)``);
    None where it runs every time the hook does."""
    child, node = use, parents.get(use)
    while node is not None and node is not end:
        if isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Match, ast.ExceptHandler)) and child is not getattr(node, "test", None):
            kind = {"IfExp": "conditional expression", "ExceptHandler": "except"}.get(type(node).__name__, type(node).__name__.lower())
            return f"under the `{kind}` at line {node.lineno}"
        if isinstance(node, (ast.For, ast.AsyncFor)) and child is not node.iter:
            return f"in the loop at line {node.lineno}"
        if isinstance(node, ast.BoolOp) and child is not node.values[0]:
            return f"after `{type(node.op).__name__.lower()}` at line {node.lineno}"
        if isinstance(node, ast.comprehension) and child is not node.iter:
            return f"in a comprehension's condition at line {node.lineno}"
        child, node = node, parents.get(node)
    early = next((n for n in every_node(end) if isinstance(n, (ast.Return, ast.Raise)) and n.lineno < use.lineno), None)
    return None if early is None else f"after the `{type(early).__name__.lower()}` at line {early.lineno}"


def _array_read_whole(array: ast.expr, parents: dict, bound: set[str], end: ast.FunctionDef | None = None,
                      seen: frozenset[str] = frozenset(), imports: ImportTable | None = None) -> bool:
    """The array built from the whole list is read as a whole: through the methods above and
    element-wise operators, then handed to a call that is not a builtin history reader, or assigned
    once to a local name read the same way, or left alone."""
    node = array
    while True:
        parent = parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            call = parents.get(parent)
            if parent.attr not in WHOLE_ARRAY_METHODS or not (isinstance(call, ast.Call) and call.func is parent):
                return False  # ``.shape``, ``.max()``, ``.sum()``, ``.size(0)``...
            node = call
        elif isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            node = parent
        elif isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in _CASTS \
                and parent.func.id not in bound and parent.args and parent.args[0] is node:
            node = parent  # ``float(scores.mean())``: the same value as a number
        else:
            break
    if isinstance(parent, ast.Call) and (node in parent.args or any(k.value is node for k in parent.keywords)):
        # Handed to Lightning's logging, or to an array library's mean or cast. A reduction other than
        # a mean (``torch.min``: review helper-45, c10), a builtin, or a function of the program
        # (``summarize(arr)`` returning ``arr.max()``: review helper-46, c05) may read a best-so-far
        # or a total over the run.
        func = parent.func
        if isinstance(func, ast.Attribute) and func.attr in _LOGGING and isinstance(func.value, ast.Name) \
                and func.value.id == "self":
            return True
        qualified = _library_function(func, imports)
        return qualified is not None and qualified in WHOLE_ARRAY_FUNCTIONS
    if isinstance(parent, ast.keyword):
        return _array_read_whole(parent, parents, bound, end, seen, imports)
    if isinstance(parent, (ast.keyword, ast.Expr)):
        return True
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        local = parent.targets[0].id
        method = end if end is not None else next(n for n in parents.values() if isinstance(n, ast.FunctionDef))
        names = [n for n in every_node(method) if isinstance(n, ast.Name) and n.id == local]
        if local in seen or sum(isinstance(n.ctx, ast.Store) for n in names) != 1 or any(isinstance(n.ctx, ast.Del) for n in names):
            return False
        return all(_array_read_whole(n, parents, bound, method, seen | {local}, imports)
                   for n in names if isinstance(n.ctx, ast.Load))
    return False
