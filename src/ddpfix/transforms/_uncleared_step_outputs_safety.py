"""DDP010's proof that clearing a list at the end of its epoch-end hook changes nothing the program
computes except the growth across epochs (``check`` only).

Clearing is safe only for a plain list known to live within one epoch (an allowlist; anything
else is unsafe, with what was not proven):

* the hooks are the fit loop's (``training_step`` / ``validation_step``): test and predict run one
  epoch per ``trainer.test``/``predict`` call, so nothing grows across epochs there, and the
  script may read the list after the call;
* the class creates it once, as ``[]`` or ``list()``, in ``__init__`` (a ``deque(maxlen=...)``, a
  list made elsewhere or a base class's attribute is not known to be a plain per-epoch list);
* the step only appends to it (``.append``/``.extend``), and the epoch-end hook only reads it
  through calls known to copy what they read (``torch.stack``, ``sum``, ``len``...), a ``for`` over
  it, or an index: nothing keeps the list itself;
* no other file can read it: the name is private to the class by Python's name mangling
  (``self.__name``), since ddpfix's facts do not follow attributes across files (a callback, a
  subclass or the script after ``fit`` may read a history on purpose).
"""

from __future__ import annotations

import ast

from ddpfix.imports import ImportTable

FIT_STEPS = frozenset({"training_step", "validation_step"})
# Builtins that read every item now and keep no reference to the list.
COPYING_BUILTINS = frozenset({"len", "sum", "min", "max", "sorted", "list", "tuple", "set", "any", "all", "print",
                              "str", "repr"})
COPYING_CALLS = frozenset(
    [f"torch.{n}" for n in ("stack", "cat", "concat", "concatenate", "vstack", "hstack", "tensor", "as_tensor")]
    + [f"numpy.{n}" for n in ("mean", "concatenate", "stack", "array", "asarray", "vstack", "hstack", "sum",
                              "average", "median", "std", "var")]
)
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
    return [n for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
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
    parent = next((n for n in ast.walk(methods[method_name]) if isinstance(n, ast.Assign) and use in n.targets), None)
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
    parents = {child: node for node in ast.walk(step) for child in ast.iter_child_nodes(node)}
    for use in _self_uses(step, name):
        method = parents.get(use)
        call = parents.get(method)
        if not (isinstance(method, ast.Attribute) and method.attr in ("append", "extend")
                and isinstance(call, ast.Call) and call.func is method):
            return (f"{step.name} reads self.{name} too (line {use.lineno}): it would see only this epoch's items")
    return None


def _bound_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _end_only_copies(tree: ast.Module, end: ast.FunctionDef, name: str, imports: ImportTable) -> str | None:
    parents = {child: node for node in ast.walk(end) for child in ast.iter_child_nodes(node)}
    bound = _bound_names(tree)
    for use in _self_uses(end, name):
        parent = parents.get(use)
        if isinstance(parent, ast.Call) and use in parent.args:
            func = parent.func
            if isinstance(func, ast.Name) and func.id in COPYING_BUILTINS and func.id not in bound:
                continue
            if (imports.qualify(func) or "") in COPYING_CALLS:
                continue
        elif isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is use:
            continue
        elif isinstance(parent, ast.Subscript) and parent.value is use and isinstance(parent.ctx, ast.Load):
            continue
        return (f"{end.name} hands self.{name} on in a way ddpfix does not follow (line {use.lineno}): "
                "something may keep the list itself, which clearing would empty")
    return None
