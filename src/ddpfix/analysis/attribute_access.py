"""How a program reaches attributes other than by writing their names: the stores on objects other
than ``self`` (``Head.forward = f``, ``setattr(obj, name, v)``) and the reads by a name made at run
time (``getattr(x, name)``, ``vars(type(self))``). Asked of the file a rule reads and, parsed when
their text names such a thing, of the program's other files (``ProjectFacts``)."""

from __future__ import annotations

import ast

from ddpfix.analysis.ast_shapes import every_node
from ddpfix.ast_walk import walk


def attribute_stores(tree: ast.Module) -> dict[str, int]:
    """Attribute name -> the line of its first store on anything but ``self`` (``Head.forward = f``);
    ``"*"`` -> the first store that may bind any name: ``setattr`` with a name that is not a literal,
    ``setattr`` handed around as a value, ``__setattr__`` or ``__dict__`` (not where it is only
    shown or read: ``f"{config.__dict__}"``, ``print(x.__dict__)``, ``x.__dict__.items()``). Each literal
    ``setattr(obj, "name", ...)`` counts as a store of ``name``. What a class stores on its own
    ``self`` (``setattr(self, k, v)``, ``self.__dict__ = self``) is that class's, which its own
    reader sees (a base or subclass of the model is read as such), not another object's.

    A store on a module counts too: it binds one of its globals (``setattr(nn, "Linear", Mine)``),
    which a proof that reads that name relies on."""
    found: dict[str, int] = {}
    parsed = _argparse_namespaces(tree)
    shown: set[int] = set()  # ``x.__dict__`` read where nothing can store through it
    for node in walk(tree):  # a parent before its children
        if isinstance(node, ast.FormattedValue):
            shown.add(id(node.value))
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in _READS_A_NAMESPACE:
                shown.update(id(a) for a in node.args)
            elif isinstance(node.func, ast.Attribute) and node.func.attr in _NAMESPACE_READS:
                shown.add(id(node.func.value))
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            found.setdefault(node.attr, node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == "__dict__" and id(node) in shown:
            continue  # ``f"{config.__dict__}"``, ``print(vars_.__dict__)``, ``cfg.__dict__.items()``
        elif isinstance(node, ast.Attribute) and node.attr in ("__setattr__", "__dict__") and not _own(node.value):
            found.setdefault("*", node.lineno)
        elif isinstance(node, ast.Call) and _names_setattr(node.func):
            if len(node.args) < 2 or any(isinstance(a, ast.Starred) for a in node.args) or node.keywords:
                found.setdefault("*", node.lineno)
            elif not _own(node.args[0]):
                name = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
                found.setdefault(name if isinstance(name, str) else "*", node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" \
                and not (node.args and isinstance(node.args[0], ast.Name) and node.args[0].id in parsed):
            found.setdefault("*", node.lineno)  # ``vars(obj).update(forward=f)`` stores into its namespace
        elif isinstance(node, ast.Name) and node.id == "setattr" and not _called(node, tree):
            found.setdefault("*", node.lineno)  # ``store = setattr``, ``map(setattr, ...)``
    return found


#: Builtins that only read the namespace they are handed (to show or count it).
_READS_A_NAMESPACE = frozenset({"print", "str", "repr", "len", "sorted", "format"})
#: A namespace's methods that read it.
_NAMESPACE_READS = frozenset({"items", "keys", "values", "get", "copy", "__contains__"})


def _names_setattr(func: ast.expr) -> bool:
    """``setattr`` or ``builtins.setattr`` (any ``x.setattr``: over-approximated)."""
    return (isinstance(func, ast.Name) and func.id == "setattr") or (
        isinstance(func, ast.Attribute) and func.attr == "setattr")


def _own(receiver: ast.expr) -> bool:
    """``self`` or ``super()``: a class's own instance (``self.__dict__ = self`` in a dict that
    serves attributes), which the class's reader sees (its ``setattr`` on itself), not another
    file's object."""
    return (isinstance(receiver, ast.Name) and receiver.id == "self") or (
        isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super")


def _called(name: ast.Name, tree: ast.Module) -> bool:
    """``name`` is the function a call calls (``setattr(...)``), not a value handed around."""
    calls = tree.__dict__.get("_ddpfix_called_names")
    if calls is None:
        calls = tree._ddpfix_called_names = {id(n.func) for n in walk(tree) if isinstance(n, ast.Call)}
    return id(name) in calls


#: Calls that reach an attribute by a name made at run time.
DYNAMIC_ACCESS = frozenset({"getattr", "attrgetter", "methodcaller", "__getattribute__", "__getattr__", "getmembers"})


def dynamic_access(tree: ast.Module) -> ast.AST | None:
    """The first place of the file that may reach an attribute by a name made at run time:
    ``getattr(x, name)`` with a name that is not a literal, ``operator.attrgetter``/``methodcaller``,
    ``__getattribute__``, ``x.__dict__`` (a class's holds its methods); None where there is none."""
    for node in every_node(tree):
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            return node
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        word = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if word not in DYNAMIC_ACCESS:
            continue
        if word == "getattr" and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
            continue
        return node
    # ``vars(type(self))``, ``vars(Model)``: a class's namespace holds its methods. Only the
    # namespace argparse makes (``args = parser.parse_args()``, then ``vars(args)``) is known to
    # hold none.
    parsed = _argparse_namespaces(tree)
    for node in every_node(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" and node.args \
                and not (isinstance(node.args[0], ast.Name) and node.args[0].id in parsed):
            return node
    return None


def _argparse_namespaces(tree: ast.Module) -> frozenset[str]:
    """Names the file binds only to the namespace argparse makes (``args = parser.parse_args()``):
    every binding of the name in the file is such an assignment (a parameter or another
    assignment of that name, in any scope, may hold anything)."""
    def compute():
        parsed, other, targets = set(), set(), set()
        for n in every_node(tree):
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute) \
                    and n.value.func.attr == "parse_args" and all(isinstance(t, ast.Name) for t in n.targets):
                parsed.update(t.id for t in n.targets)
                targets.update(id(t) for t in n.targets)
        for n in every_node(tree):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and id(n) not in targets:
                other.add(n.id)
            elif isinstance(n, ast.arg):
                other.add(n.arg)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                other.add(n.name)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                other.update((a.asname or a.name).partition(".")[0] for a in n.names)
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                other.update(n.names)
        return frozenset(parsed - other)
    found = tree.__dict__.get("_ddpfix_argparse_namespaces")
    if found is None:
        found = tree._ddpfix_argparse_namespaces = compute()
    return found
