"""``_names`` on CPython's tree: which names a statement reads, binds and may change, and whether it
can leave its block, for the rules' ``check``. Each function answers exactly what its LibCST
counterpart answers for the same source (``tests/test_tree_names.py`` compares them statement by
statement); the docstrings say where the two trees differ and how that is bridged."""

from __future__ import annotations

import ast
from dataclasses import field

from ddpfix.analysis.ast_shapes import every_node
from ddpfix.ast_walk import child_nodes, walk
from ddpfix.records import record


@record
class StatementNames:
    reads: set[str] = field(default_factory=set)
    binds: set[str] = field(default_factory=set)
    #: binds, plus the roots of assigned attributes/items (``dm.x = 1`` assigns ``dm``).
    assigns: set[str] = field(default_factory=set)
    #: assigns, plus the objects the statement may mutate: roots of method-call receivers
    #: (``dm.setup()``) and of call arguments (``f(dm)``).
    writes: set[str] = field(default_factory=set)


# Methods that read their receiver without changing it; the receiver of any other method may change.
READ_ONLY_METHODS = frozenset({
    "item", "tolist", "numpy", "cpu", "detach", "mean", "sum", "max", "min", "std", "var", "size", "dim",
    "numel", "float", "double", "half", "long", "int", "bool", "norm", "abs", "any", "all", "argmax", "argmin",
    "keys", "values", "items", "get", "copy", "clone", "format", "startswith", "endswith", "join", "split",
    "strip", "lower", "upper", "log", "log_dict", "print",
})
# Callables that do not change their arguments.
PURE_CALLEES = frozenset({
    "print", "len", "str", "repr", "float", "int", "bool", "round", "abs", "min", "max", "sum", "isinstance",
    "format", "sorted", "list", "tuple", "set", "dict", "type", "id", "hash", "any", "all", "range", "enumerate",
    "zip", "getattr", "hasattr",
})


#: ``Name`` nodes in LibCST's tree, constants to Python: nothing can bind or change them, so a
#: statement that passes ``None`` to a call does not conflict with one that reads it.
CONSTANTS = frozenset({"True", "False", "None"})


def settled(names: StatementNames) -> StatementNames:
    """Each set with what it implies (binds are assigns, assigns are writes), constants left out."""
    names.assigns |= names.binds
    names.writes |= names.assigns
    for found in (names.reads, names.binds, names.assigns, names.writes):
        found -= CONSTANTS
    return names


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _nodes(node) -> list[ast.AST]:
    """A node, or the statements of a line (a tuple or list of them), as a list."""
    return list(node) if isinstance(node, (list, tuple)) else [node]


def name_of(node: ast.AST) -> str | None:
    """A name as LibCST spells it: ``True``, ``False`` and ``None`` are ``Name`` nodes there,
    ``Constant`` nodes here."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and (node.value is None or type(node.value) is bool):
        return str(node.value)
    return None


def root_name(node: ast.AST) -> str | None:
    """``_names.root_name``: ``dm`` for ``dm``, ``dm.x.y``, ``dm[0]``, ``dm.f().x``; None for
    anything else (``None.x`` roots at ``None``, a ``Name`` in LibCST's tree)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return name_of(node)


def statement_names(node) -> StatementNames:
    """``_names.statement_names`` of a node, or of a line of statements (a tuple or list).

    LibCST visits every ``Name`` node (in a nested function too) and counts it read unless it
    stands where a name is bound. Binding is read from the binding nodes, as LibCST's visitor does,
    not from ``ast``'s store contexts: a ``with ... as (a, b)`` target handed alone binds nothing
    there, and its names are read. Names that are plain strings here are ``Name`` nodes there:
    ``global x``, ``match`` captures and keyword patterns are read; parameters, attribute and
    keyword names and the dotted paths of imports are neither, here as there."""
    names = StatementNames()
    bound: set[int] = set()  # the ``Name`` nodes that bind: not reads

    def bind(target: ast.AST) -> None:
        if isinstance(target, ast.Name):
            names.binds.add(target.id)
            bound.add(id(target))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                bind(element)
        elif isinstance(target, ast.Starred):
            bind(target.value)
        else:
            root = root_name(target)
            if root is not None:
                names.assigns.add(root)

    for top in _nodes(node):
        for n in walk(top):  # parents before children: a target is bound before it is seen
            if isinstance(n, (ast.Assign, ast.Delete)):
                for target in n.targets:
                    bind(target)
            elif isinstance(n, (ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr)):
                bind(n.target)
            elif isinstance(n, ast.AugAssign):
                bind(n.target)
                root = root_name(n.target)
                if root is not None:
                    names.reads.add(root)  # ``x += 1`` reads ``x`` (a store context here)
            elif isinstance(n, ast.withitem):
                if isinstance(n.optional_vars, (ast.Name, ast.Tuple, ast.List)):
                    bind(n.optional_vars)
            elif isinstance(n, ast.Import):
                names.binds.update(a.asname or a.name.split(".", 1)[0] for a in n.names)
            elif isinstance(n, ast.ImportFrom):
                names.binds.update(a.asname or a.name for a in n.names if a.name != "*")
            elif isinstance(n, _DEFINITIONS):
                names.binds.add(n.name)
            elif isinstance(n, ast.ExceptHandler):
                if n.name is not None:
                    names.binds.add(n.name)
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                names.reads.update(n.names)  # LibCST's ``NameItem`` holds a ``Name``, which is read
            elif isinstance(n, (ast.MatchAs, ast.MatchStar)):
                if n.name is not None:
                    names.reads.add(n.name)
            elif isinstance(n, ast.MatchMapping):
                if n.rest is not None:
                    names.reads.add(n.rest)
            elif isinstance(n, ast.MatchClass):
                names.reads.update(n.kwd_attrs)
            elif isinstance(n, ast.MatchSingleton):
                names.reads.add(str(n.value))  # ``case None:``: a ``Name`` pattern in LibCST's tree
            elif isinstance(n, ast.Call):
                _call_writes(n, names)
            elif isinstance(n, (ast.Name, ast.Constant)) and id(n) not in bound:
                name = name_of(n)
                if name is not None:
                    names.reads.add(name)
    return settled(names)


def _call_writes(call: ast.Call, names: StatementNames) -> None:
    """``_names._Collect.visit_Call``: the receiver of a method that may change it, and the
    arguments of a callee that may change them (``*a`` and ``**k`` are LibCST ``Arg`` values)."""
    func = call.func
    callee = func.attr if isinstance(func, ast.Attribute) else name_of(func)
    if isinstance(func, ast.Attribute) and callee not in READ_ONLY_METHODS:
        root = root_name(func.value)
        if root is not None:
            names.writes.add(root)
    if callee in PURE_CALLEES or callee in READ_ONLY_METHODS:
        return
    for arg in [*call.args, *call.keywords]:
        root = root_name(arg.value if isinstance(arg, (ast.Starred, ast.keyword)) else arg)
        if root is not None:
            names.writes.add(root)


# LibCST's ``yield from`` is a ``Yield`` (its value a ``From``).
_EXIT_WORDS = {ast.Return: "return", ast.Raise: "raise", ast.Break: "break", ast.Continue: "continue",
               ast.Yield: "yield", ast.YieldFrom: "yield"}


def exit_in(node) -> str | None:
    """``_names.exit_in`` of a node, or of a line or block of statements (a tuple or list): the
    first return/raise/break/continue/yield in LibCST's visiting order (depth first, in source
    order, as ``ast.iter_child_nodes`` goes), not in a function, lambda or class defined there."""
    pending = list(reversed(_nodes(node)))
    while pending:
        current = pending.pop()
        if isinstance(current, (*_DEFINITIONS, ast.Lambda)):
            continue
        word = _EXIT_WORDS.get(type(current))
        if word:
            return word
        pending.extend(reversed(child_nodes(current)))
    return None


def bound_names(node) -> frozenset[str]:
    """Every name bound anywhere in ``node`` (assignments, loop, ``with`` and ``except`` targets,
    definitions, parameters, imports, ``global``/``nonlocal``): what may shadow a builtin or an
    import there. An over-approximation on purpose: a name it holds is never taken for the builtin.
    Kept on the node (and not copied: it is asked once per class of a file, and read only):
    several rules' safety checks ask it of the same module and methods."""
    known = getattr(node, "_ddpfix_bound", None)
    if known is None:
        known = node._ddpfix_bound = frozenset(_bound_names(node))
    return known


def _bound_names(node) -> set[str]:
    return {name for n in every_node(node) for name in names_bound_at(n)}


def names_bound_at(node: ast.AST) -> list[str]:
    """The names ``node`` itself binds, in every way Python binds one: a store or ``del``, a
    ``def`` or ``class``, an import's alias (``*`` for a star import), a parameter, ``global`` or
    ``nonlocal``, ``except ... as``, a ``match`` capture."""
    if isinstance(node, ast.Name):
        return [node.id] if isinstance(node.ctx, (ast.Store, ast.Del)) else []
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.alias):
        return [(node.asname or node.name).split(".")[0]]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    if isinstance(node, ast.ExceptHandler):
        return [node.name] if node.name else []
    return pattern_names(node)


def pattern_names(node: ast.AST) -> list[str]:
    """The names a ``match`` pattern node binds itself (``case {"split": stage}``, ``case [x, *rest]``,
    ``case Point(x=px) as p``): a capture stores a name as a string, not as an ``ast.Name``."""
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []
