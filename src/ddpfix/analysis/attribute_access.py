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
    ``setattr`` handed around as a value, ``__setattr__`` or ``__dict__``. Each literal
    ``setattr(obj, "name", ...)`` counts as a store of ``name``. What a class stores on its own
    ``self`` (``setattr(self, k, v)``, ``self.__dict__ = self``) is that class's, which its own
    reader sees (a base or subclass of the model is read as such), not another object's.

    A store on a module the file imports whole (``import numpy``; ``setattr(numpy, name, value)``)
    binds a global of that module, never an attribute of an object or class the program builds:
    it does not count, where the file binds that name by imports of modules alone."""
    modules = imported_modules_only(tree)
    found: dict[str, int] = {}

    def on_module(receiver: ast.expr) -> bool:
        return isinstance(receiver, ast.Name) and receiver.id in modules

    for node in walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and not (isinstance(node.value, ast.Name) and node.value.id == "self") and not on_module(node.value):
            found.setdefault(node.attr, node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr in ("__setattr__", "__dict__") and not _own(node.value):
            found.setdefault("*", node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            if len(node.args) < 2 or any(isinstance(a, ast.Starred) for a in node.args) or node.keywords:
                found.setdefault("*", node.lineno)
            elif not on_module(node.args[0]) and not _own(node.args[0]):
                name = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
                found.setdefault(name if isinstance(name, str) else "*", node.lineno)
        elif isinstance(node, ast.Name) and node.id == "setattr" and not _called(node, tree):
            found.setdefault("*", node.lineno)  # ``store = setattr``, ``map(setattr, ...)``
    return found


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


def imported_modules_only(tree: ast.Module) -> frozenset[str]:
    """Names the file binds only by ``import a`` / ``import a.b as c`` (a module object, never a class
    or an instance), nowhere rebound: no assignment, ``def``, ``class``, parameter, ``from``
    import, ``global`` or ``del`` of the name."""
    imported: set[str] = set()
    other: set[str] = set()
    for node in walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                imported.add(alias.asname or alias.name.partition(".")[0])
        elif isinstance(node, ast.ImportFrom):
            other.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            other.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other.add(node.name)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            other.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            other.add(node.name)
    return frozenset(imported - other)


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
    parsed = {t.id for n in every_node(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
              and isinstance(n.value.func, ast.Attribute) and n.value.func.attr in ("parse_args", "parse_known_args")
              for t in n.targets if isinstance(t, ast.Name)}
    for node in every_node(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" and node.args \
                and not (isinstance(node.args[0], ast.Name) and node.args[0].id in parsed):
            return node
    return None
