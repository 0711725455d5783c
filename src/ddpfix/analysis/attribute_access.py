"""How a program reaches attributes other than by writing their names: the stores on objects other
than ``self`` (``Head.forward = f``, ``setattr(obj, name, v)``) and the reads by a name made at run
time (``getattr(x, name)``, ``vars(type(self))``). Asked of the file a rule reads and, parsed when
their text names such a thing, of the program's other files (``ProjectFacts``)."""

from __future__ import annotations

import ast

from ddpfix.analysis.ast_shapes import every_node
from ddpfix.analysis.names import names_bound_at
from ddpfix.ast_walk import walk, walk_outside_scopes
from ddpfix.imports import ImportTable


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
    shown = _only_read(tree)  # ``vars(x)`` and ``x.__dict__`` where nothing can store through them
    looped = _loop_names(tree)
    for node in walk(tree):  # a parent before its children
        if writes_other_namespaces(node, shown):  # ``sys.modules["data"] = remote``, ``builtins.__import__ = f``
            found.setdefault("*", node.lineno)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            found.setdefault(node.attr, node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == "__dict__" and id(node) in shown:
            continue  # ``f"{config.__dict__}"``, ``print(vars_.__dict__)``, ``cfg.__dict__.items()``
        elif isinstance(node, ast.Attribute) and node.attr in ("__setattr__", "__dict__") and not _own(node.value) \
                and not _a_parsed_namespace(node.value, parsed):  # (an argparse namespace holds options alone)
            found.setdefault("*", node.lineno)
        elif isinstance(node, ast.Call) and _names_setattr(node.func):
            if len(node.args) < 2 or any(isinstance(a, ast.Starred) for a in node.args) or node.keywords:
                found.setdefault("*", node.lineno)
            elif not _own(node.args[0]):
                name = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
                if isinstance(name, str):
                    found.setdefault(name, node.lineno)
                else:  # a loop's name over written strings stores each of them, nothing else
                    for each in looped.get(id(node.args[1]), ("*",)):
                        found.setdefault(each, node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" \
                and id(node) not in shown \
                and not (node.args and (_a_parsed_namespace(node.args[0], parsed) or _own(node.args[0]))):
            found.setdefault("*", node.lineno)  # ``vars(obj).update(forward=f)`` stores into its namespace
        elif isinstance(node, ast.Name) and node.id == "setattr" and not _called(node, tree):
            found.setdefault("*", node.lineno)  # ``store = setattr``, ``map(setattr, ...)``
    return found


#: Words of the text without which a file writes no namespace by a name made at run time (the
#: cheap screen before ``writes_its_globals`` and ``writes_other_namespaces`` are asked of its tree).
NAMESPACE_WORDS = (b"globals", b"locals", b"vars", b"exec", b"f_globals", b"f_locals", b"modules", b"__import__",
                   b"meta_path", b"path_hooks")


def writes_its_globals(tree: ast.Module) -> int | None:
    """The line of the first place of the file that may bind any of its globals by a name made at
    run time; None where none may. The file's namespace (``globals()``, or ``vars()``/``locals()``
    without arguments) counts wherever it is not only read (``globals()["Local"] = X``,
    ``globals().update(...)``, ``g = globals()`` then ``g[k] = v``: review of helper-53's cases), as
    does ``exec`` given no namespace of its own, a written dict (``exec(code)`` in a function binds
    the module's names through ``global``; ``exec(code, g)`` with ``g`` a name may be handed the
    file's). Kept on the tree."""
    found = tree.__dict__.get("_ddpfix_writes_its_globals")
    if found is None:
        shown = _only_read(tree)
        found = next((node.lineno for node in every_node(tree) if isinstance(node, ast.Call) and (
            _the_files_namespace(node) and id(node) not in shown
            or isinstance(node.func, ast.Name) and node.func.id == "exec" and not _own_namespace_given(node))), 0)
        tree._ddpfix_writes_its_globals = found
    return found or None


def _own_namespace_given(call: ast.Call) -> bool:
    """``exec(code, {...})`` or ``exec(code, dict(...))``: a namespace made there, not the file's."""
    given = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "globals"), None)
    return isinstance(given, ast.Dict) or (isinstance(given, ast.Call) and isinstance(given.func, ast.Name)
                                           and given.func.id == "dict")


def writes_other_namespaces(node: ast.AST, shown: set[int]) -> bool:
    """``node`` may bind names of other modules or frames, or change what every import gives:
    ``sys.modules`` (a module swapped for another) or a frame's ``f_globals``/``f_locals`` (a caller's
    names) where they are not only read (``shown``: ``_only_read``; ``modules = sys.modules`` then
    ``modules["data"] = remote`` counts), a replaced ``__import__``, or ``sys.meta_path`` or
    ``sys.path_hooks`` (an import hook) other than read."""
    if isinstance(node, ast.Attribute) and node.attr == "__import__" and not isinstance(node.ctx, ast.Load):
        return True
    if isinstance(node, ast.Attribute) and node.attr in ("meta_path", "path_hooks"):
        return not isinstance(node.ctx, ast.Load) or id(node) not in shown
    return _another_namespace(node) and id(node) not in shown


def _the_files_namespace(expression: ast.expr) -> bool:
    """``globals()``, or ``vars()``/``locals()`` without arguments."""
    return isinstance(expression, ast.Call) and isinstance(expression.func, ast.Name) and not expression.args \
        and not expression.keywords and expression.func.id in ("globals", "vars", "locals")


def _another_namespace(expression: ast.expr) -> bool:
    """``sys.modules`` (any ``<x>.modules`` of a name ``sys``), or a frame's ``f_globals``/``f_locals``."""
    if not isinstance(expression, ast.Attribute):
        return False
    return expression.attr in ("f_globals", "f_locals") or (
        expression.attr == "modules" and isinstance(expression.value, ast.Name) and expression.value.id == "sys")


#: Builtins that only read the namespace they are handed (to show, count or copy it).
_READS_A_NAMESPACE = frozenset({"print", "str", "repr", "len", "sorted", "format", "dict", "list", "tuple", "set",
                                "frozenset", "iter", "enumerate"})
#: A namespace's methods that read it.
_NAMESPACE_READS = frozenset({"items", "keys", "values", "get", "copy", "__contains__"})


def _only_read(tree: ast.Module) -> set[int]:
    """The expressions of the file (``vars(args)``, ``args.__dict__``) in a place that only reads
    what they give: shown (``f"{x}"``, ``print(x)``), copied or counted (``dict(x)``, ``len(x)``),
    unpacked (``Model(**vars(args))``, ``{**x}``, ``*x``), iterated (``for k in vars(args)``), searched
    (``"lr" in x``), subscripted to read (``x["lr"]``), or asked through a reading method
    (``x.items()``). A namespace stored through must be bound or called on (``vars(x).update(...)``,
    ``vars(x)[k] = v``), none of which these are."""
    read: set[int] = set()
    for node in every_node(tree):
        if isinstance(node, ast.FormattedValue):
            read.add(id(node.value))
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in _READS_A_NAMESPACE:
                read.update(id(a) for a in node.args)
            elif isinstance(node.func, ast.Attribute) and node.func.attr in _NAMESPACE_READS:
                read.add(id(node.func.value))
            read.update(id(k.value) for k in node.keywords if k.arg is None)
        elif isinstance(node, ast.Dict):
            read.update(id(v) for k, v in zip(node.keys, node.values) if k is None)
        elif isinstance(node, ast.Starred) and isinstance(node.ctx, ast.Load):
            read.add(id(node.value))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            read.add(id(node.iter))
        elif isinstance(node, ast.Compare):
            read.update(id(c) for op, c in zip(node.ops, node.comparators) if isinstance(op, (ast.In, ast.NotIn)))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            read.add(id(node.value))
    return read


def _loop_names(tree: ast.Module) -> dict[int, tuple[str, ...]]:
    """The uses of a ``for`` loop's name, in the loop's own body, whose every value is a string the
    loop's literal iterable writes: ``for name, kind in [("object", object), ("int", int)]:
    setattr(numpy, name, kind)`` stores ``object`` and ``int``. The name must be bound nowhere else
    in the file (a body that binds it again, or a ``global`` a called function rebinds, may make it
    anything); a use in a nested function or class, which may run when the name holds something
    else or nothing, is left out."""
    every_binding: dict[str, int] = {}
    star_lines: list[int] = []
    for node in every_node(tree):
        for name in names_bound_at(node):  # (``global name`` counts: a function may rebind it)
            if name == "*":
                star_lines.append(node.lineno)
            else:
                every_binding[name] = every_binding.get(name, 0) + 1
    found: dict[int, tuple[str, ...]] = {}
    for loop in every_node(tree):
        if not isinstance(loop, ast.For) or not isinstance(loop.iter, (ast.List, ast.Tuple, ast.Set)):
            continue
        # A star import may bind any name, but it runs where it stands, at the module's level: one
        # outside the loop cannot rebind the loop's name while the loop runs (lightning-bolts'
        # ``from pl_bolts.__about__ import *`` before its ``setattr(numpy, tp_name, tp_ins)`` loop).
        if any(loop.lineno <= line <= (loop.end_lineno or loop.lineno) for line in star_lines):
            continue
        for name, values in _written_strings(loop.target, loop.iter.elts).items():
            if every_binding.get(name) != 1:
                continue
            for use in walk_outside_scopes(loop):  # after the loop too: its last value
                if isinstance(use, ast.Name) and use.id == name and isinstance(use.ctx, ast.Load):
                    found[id(use)] = values
    return found


def _written_strings(target: ast.expr, elements: list[ast.expr]) -> dict[str, tuple[str, ...]]:
    """Loop target name -> the strings it takes, where every element writes one at its place."""
    if isinstance(target, ast.Name):
        if elements and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elements):
            return {target.id: tuple(e.value for e in elements)}
        return {}
    if not isinstance(target, (ast.Tuple, ast.List)) or any(isinstance(t, ast.Starred) for t in target.elts):
        return {}
    width = len(target.elts)
    if not all(isinstance(e, (ast.Tuple, ast.List)) and len(e.elts) == width
               and not any(isinstance(x, ast.Starred) for x in e.elts) for e in elements):
        return {}
    found: dict[str, tuple[str, ...]] = {}
    for place, part in enumerate(target.elts):
        found.update(_written_strings(part, [e.elts[place] for e in elements]))
    return found


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
DYNAMIC_ACCESS = frozenset({"getattr", "getattr_static", "attrgetter", "methodcaller", "__getattribute__", "__getattr__",
                            "getmembers"})


def dynamic_access(tree: ast.Module) -> ast.AST | None:
    """The first place of the file that may reach an attribute by a name made at run time:
    ``getattr(x, name)`` with a name that is not a literal, ``operator.attrgetter``/``methodcaller``,
    ``__getattribute__``, ``x.__dict__`` (a class's holds its methods); None where there is none.
    The namespace argparse makes (``args = parser.parse_args()``) holds only its options: its
    ``vars(args)`` and ``args.__dict__`` reach nothing else."""
    parsed = _argparse_namespaces(tree)
    for node in every_node(tree):
        if isinstance(node, ast.Attribute) and node.attr == "__dict__" and not _a_parsed_namespace(node.value, parsed):
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
    # ``vars(type(self))``, ``vars(Model)``: a class's namespace holds its methods.
    for node in every_node(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" and node.args \
                and not _a_parsed_namespace(node.args[0], parsed):
            return node
    return None


#: argparse's methods that hand back the namespace and the arguments left over.
_PARSES_KNOWN = frozenset({"parse_known_args", "parse_known_intermixed_args"})


def _a_parsed_namespace(node: ast.expr, parsed: frozenset[str]) -> bool:
    """``args`` of ``_argparse_namespaces``, or the namespace a call makes there
    (``vars(self.parse_args(*a))``): it holds the options alone."""
    if isinstance(node, ast.Name):
        return node.id in parsed
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "parse_args"


def _argparse_namespaces(tree: ast.Module) -> frozenset[str]:
    """Names the file binds only to a namespace of argparse (``args = parser.parse_args()``,
    ``args, rest = parser.parse_known_args()``, ``args = argparse.Namespace(lr=0.1)``):
    every binding of the name in the file is such an assignment (a parameter or another
    assignment of that name, in any scope, may hold anything)."""
    def compute():
        imports = ImportTable.from_tree(tree)
        parsed, other, targets = set(), set(), set()
        for n in every_node(tree):
            if not (isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)):
                continue
            func, names_only = n.value.func, all(isinstance(t, ast.Name) for t in n.targets)
            method = func.attr if isinstance(func, ast.Attribute) else None
            if names_only and (method == "parse_args" or imports.qualify(func) == "argparse.Namespace"):
                named = n.targets
            elif method in _PARSES_KNOWN and all(isinstance(t, ast.Tuple) and len(t.elts) == 2 and isinstance(
                    t.elts[0], ast.Name) for t in n.targets):  # ``args, rest = parser.parse_known_args()``
                named = [t.elts[0] for t in n.targets]
            else:
                continue
            parsed.update(t.id for t in named)
            targets.update(id(t) for t in named)
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
