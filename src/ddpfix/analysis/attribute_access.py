"""How a program reaches attributes other than by writing their names: the stores on objects other
than ``self`` (``Head.forward = f``, ``setattr(obj, name, v)``) and the reads by a name made at run
time (``getattr(x, name)``, ``vars(type(self))``). Asked of the file a rule reads and, parsed when
their text names such a thing, of the program's other files (``ProjectFacts``)."""

from __future__ import annotations

import ast

from ddpfix.analysis.ast_shapes import every_node, parent_map, scope_map
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
    # ``nn.Module.__setattr__(obj, name, v)`` called: a ``setattr`` (not ``self.__setattr__(...)``,
    # the class's own, nor one handed around)
    called_setattrs = {id(n.func) for n in walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                       and n.func.attr == "__setattr__" and not _own(n.func.value) and len(n.args) == 3}
    for node in walk(tree):  # a parent before its children
        if writes_other_namespaces(node, shown):  # ``sys.modules["data"] = remote``, ``builtins.__import__ = f``
            found.setdefault("*", node.lineno)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            found.setdefault(node.attr, node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == "__dict__" and id(node) in shown:
            continue  # ``f"{config.__dict__}"``, ``print(vars_.__dict__)``, ``cfg.__dict__.items()``
        elif isinstance(node, ast.Attribute) and node.attr == "__setattr__" and not _own(node.value) \
                and id(node) in called_setattrs:
            continue  # ``object.__setattr__(obj, "name", v)``: read as the ``setattr`` it is, below
        elif isinstance(node, ast.Attribute) and node.attr in ("__setattr__", "__dict__") and not _own(node.value) \
                and not _a_parsed_namespace(node.value, parsed):  # (an argparse namespace holds options alone)
            found.setdefault("*", node.lineno)
        elif isinstance(node, ast.Call) and (_names_setattr(node.func) or id(node.func) in called_setattrs):
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
        in_functions = _in_functions(tree)
        found = next((node.lineno for node in every_node(tree) if isinstance(node, ast.Call) and (
            _the_files_namespace(node) and id(node) not in shown
            and (node.func.id == "globals" or id(node) not in in_functions)
            or isinstance(node.func, ast.Name) and node.func.id == "exec" and not _own_namespace_given(node))), 0)
        tree._ddpfix_writes_its_globals = found
    return found or None


def _in_functions(tree: ast.Module) -> set[int]:
    """The nodes a function or lambda of the file evaluates in its own frame (``scope_map``: not its
    defaults, decorators or annotations, which run where the ``def`` stands: ``def alias(name,
    target, namespace=locals())`` at the top is handed the file's namespace, helper-56 l1d). There
    ``locals()`` and ``vars()`` are the frame's namespace, not the file's (helper-55, f06:
    ``self.__dict__.update(locals())`` in a data module's ``__init__`` binds none of its globals). A
    class body's is the class's: it binds no global either, but it is counted, and read as the
    class's own question (``fills_its_namespace``)."""
    scopes = scope_map(tree)
    return {key for key, scope in scopes.items() if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))}


def fills_its_namespace(cls: ast.ClassDef) -> ast.AST | None:
    """The first place that the class's body evaluates in its own namespace (``scope_map``: not its
    methods' bodies; their defaults, decorators and annotations, yes) that may bind names of the
    class by names made at run time: ``locals()`` or ``vars()`` not only read
    (``locals()[f"on_{stage}_batch_start"] = hook``: helper-57, a8), ``exec`` or ``eval``; None
    where there is none."""
    shown = _only_read(cls)
    scopes = scope_map(cls)
    return next((node for statement in cls.body for node in walk(statement)
                 if scopes.get(id(node)) is cls and isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                 and (node.func.id in ("locals", "vars") and not node.args and not node.keywords and id(node) not in shown
                      or node.func.id in ("exec", "eval"))), None)


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
    return expression.attr in ("f_globals", "f_locals") or _sys_modules(expression)


#: Builtins that only read the namespace they are handed (to show, count or copy it).
_READS_A_NAMESPACE = frozenset({"print", "str", "repr", "len", "sorted", "format", "dict", "list", "tuple", "set",
                                "frozenset", "iter", "enumerate"})
#: A namespace's methods that read it.
_NAMESPACE_READS = frozenset({"items", "keys", "values", "get", "copy", "__contains__"})


def _only_read(tree: ast.AST) -> set[int]:
    """``_reads_only`` of the tree, kept on it (asked once per line a proof reads)."""
    found = tree.__dict__.get("_ddpfix_only_read")
    if found is None:
        found = tree._ddpfix_only_read = _reads_only(tree)
    return found


def _reads_only(tree: ast.AST) -> set[int]:
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
            elif isinstance(node.func, ast.Attribute) and (node.func.attr in _NAMESPACE_READS or
                                                           node.func.attr in _REMOVALS and _sys_modules(node.func.value)):
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
        elif isinstance(node, ast.Subscript) and (isinstance(node.ctx, ast.Load) or
                                                  isinstance(node.ctx, ast.Del) and _sys_modules(node.value)):
            read.add(id(node.value))
    return read


#: A namespace's methods that take entries out and put none in. Only ``sys.modules`` is read so
#: (``sys.modules.pop("lightly.api", None)``, ``del sys.modules[k]``): a module taken out of it binds
#: nothing, and the next import of it runs its file again, code the program's reading holds. A name
#: taken out of a frame's or a module's namespace may leave its uses to a global, a builtin or a
#: module ``__getattr__``.
_REMOVALS = frozenset({"pop", "popitem", "clear"})


def _sys_modules(expression: ast.expr) -> bool:
    return isinstance(expression, ast.Attribute) and expression.attr == "modules" \
        and isinstance(expression.value, ast.Name) and expression.value.id == "sys"


def _loop_names(tree: ast.AST) -> dict[int, tuple[str, ...]]:
    """``_names_of_loops`` of the tree, kept on it."""
    found = tree.__dict__.get("_ddpfix_loop_names")
    if found is None:
        found = tree._ddpfix_loop_names = _names_of_loops(tree)
    return found


def _names_of_loops(tree: ast.AST) -> dict[int, tuple[str, ...]]:
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


def dynamic_access(tree: ast.Module, asked: str | None = None) -> ast.AST | None:
    """The first place of the file that may reach an attribute by a name made at run time:
    ``getattr(x, name)`` with a name that is not a literal, ``operator.attrgetter``/``methodcaller``,
    ``__getattribute__``, ``x.__dict__`` (a class's holds its methods); None where there is none.
    The namespace argparse makes (``args = parser.parse_args()``) holds only its options: its
    ``vars(args)`` and ``args.__dict__`` reach nothing else. ``asked``: the attribute in question;
    an instance's own namespace only stored into by known names, ``asked`` not among them
    (``self.__dict__.update(locals())``: ``stored_names``), does not reach it (what may write a
    frame's namespace elsewhere is the caller's question: ``FRAME_WRITES``)."""
    parsed = _argparse_namespaces(tree)
    for node in every_node(tree):
        if isinstance(node, ast.Attribute) and node.attr == "__dict__" and not _a_parsed_namespace(node.value, parsed):
            if asked is not None and _own_namespace(node) is not None:
                known = stored_names(tree, node, reads_count=True)
                if known is not None and asked not in known:
                    continue
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
            if asked is not None and _own_namespace(node) is not None:
                known = stored_names(tree, node, reads_count=True)
                if known is not None and asked not in known:
                    continue
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


def names_stored_on_self_at(tree: ast.Module, line: int, frames_kept: bool = True) -> frozenset[str] | None:
    """The names that the code of ``line`` may store on its own instance by names it does not spell
    as attributes (``self.__dict__.update(...)``, ``vars(self)[k] = v``, ``setattr(self, k, v)``);
    None where they may be any. Read so:
    - ``self.__dict__`` or ``vars(self)`` only read (``self.__dict__.items()``, ``print(vars(self))``)
      stores nothing;
    - ``.update(...)`` stores the keys of what it is handed: a dict written out with string keys,
      ``dict(k=v)``, keywords, or ``locals()`` in a function (``self.__dict__.update(locals())`` in an
      ``__init__`` stores its parameters): the names the function reads or binds, where nothing in it
      can put other keys into its frame's namespace (no other ``locals()``, ``exec``, ``eval``, frame)
      and, ``frames_kept``, no code elsewhere does (the caller's question: ``FRAME_WRITES``; not
      ``frames_kept``: any name);
    - ``[k] = v`` and ``setattr(self, k, v)`` store a literal ``k``, or each string a loop over
      written strings gives it (``_loop_names``).
    Any other use (handed to a call, bound to a name) may store any name, and so may another
    object's namespace or ``setattr`` on the line. A place with no such code (a comment's words)
    stores nothing; a string that spells it, on one line or over several, may be run (``exec``): any."""
    shown = _only_read(tree)
    looped = _loop_names(tree)
    parents = parent_map(tree)
    by_line, spelled = _nodes_by_line(tree)
    if any(first <= line <= last for first, last in spelled):
        return None
    found: set[str] = set()
    for node in by_line.get(line, ()):
        namespace = _own_namespace(node)
        setting = isinstance(node, ast.Call) and _names_setattr(node.func)
        # ``self.__setattr__(k, v)``, ``super().__setattr__(k, v)``, ``nn.Module.__setattr__(self, k, v)``
        dunder = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__setattr__"
        if isinstance(node, ast.Attribute) and node.attr == "__setattr__" and _own(node.value) \
                and not (isinstance(parents.get(id(node)), ast.Call) and parents[id(node)].func is node):
            return None  # handed around, called elsewhere (``put = self.__setattr__``: helper-57, a1-a3)
        if namespace is None and not setting and not dunder:
            if isinstance(node, ast.Attribute) and node.attr == "__dict__" or isinstance(node, ast.Call) \
                    and isinstance(node.func, ast.Name) and node.func.id == "vars":
                return None  # (``myself.__dict__``: another object's, read where stores on objects are)
            continue
        if namespace is None:  # setattr(self, k, v) and its spellings
            arguments = node.args
            if dunder and _own(node.func.value):
                arguments = [node.func.value, *arguments]
            if not (arguments and _own(arguments[0])):
                return None
            if len(arguments) != 3 or node.keywords or any(isinstance(a, ast.Starred) for a in arguments):
                return None
            name = arguments[1]
            if _forwards_its_own_name(node, name, tree):
                continue  # (what ``obj.x = v`` stores anywhere, each read there: helper-57, r1/r2)
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                found.add(name.value)
            elif id(name) in looped:
                found.update(looped[id(name)])
            else:
                return None
            continue
        if id(namespace) in shown:
            continue  # only read: shown, copied, iterated, subscripted, asked through a reading method
        stored = stored_names(tree, namespace, frames_kept=frames_kept)
        if stored is None:
            return None
        found.update(stored)
    return frozenset(found)


def stored_names(tree: ast.Module, namespace: ast.expr, reads_count: bool = False,
                 frames_kept: bool = True) -> frozenset[str] | None:
    """The names a use of an instance's own namespace (``self.__dict__``, ``vars(self)``: ``namespace``)
    stores: ``.update(...)`` of known keys or ``[k] = v`` (``names_stored_on_self_at``); None for any
    other use. ``reads_count``: a read of it (``self.__dict__["x"]``, ``.items()``) reaches any of its
    values (None); else a read stores nothing."""
    stored = _keys_stored_into(namespace, parent_map(tree), _loop_names(tree), tree, reads_count, frames_kept)
    return None if stored is None else frozenset(stored)


def _nodes_by_line(tree: ast.Module) -> tuple[dict[int, list[ast.AST]], list[tuple[int, int]]]:
    """The file's nodes by the line they start on, and the lines of each string that spells a store
    by a computed name (``__dict__``, ``setattr``, ``vars``), kept on the tree."""
    kept = tree.__dict__.get("_ddpfix_nodes_by_line")
    if kept is None:
        by_line: dict[int, list[ast.AST]] = {}
        spelled: list[tuple[int, int]] = []
        for node in every_node(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and any(word in node.value for word in ("__dict__", "setattr", "vars")):
                spelled.append((node.lineno, node.end_lineno or node.lineno))
            if hasattr(node, "lineno"):
                by_line.setdefault(node.lineno, []).append(node)
        kept = tree._ddpfix_nodes_by_line = (by_line, spelled)
    return kept


def _forwards_its_own_name(call: ast.Call, name: ast.expr, tree: ast.Module) -> bool:
    """``call`` stores on the instance under the name a class's own ``__setattr__(self, name,
    value)`` was handed, never bound again there (``super().__setattr__(name, value)`` after a
    check): it adds no store to the ``obj.attr = v`` and ``setattr`` calls that reach the method."""
    scopes = scope_map(tree)
    function = scopes.get(id(call))
    if not isinstance(function, ast.FunctionDef) or function.name != "__setattr__" \
            or not isinstance(scopes.get(id(function)), ast.ClassDef):
        return False
    positional = [*function.args.posonlyargs, *function.args.args]
    if len(positional) != 3 or not isinstance(name, ast.Name) or name.id != positional[1].arg:
        return False
    return not any(name.id in names_bound_at(node) for node in walk(function) if not isinstance(node, ast.arg))


def _own_namespace(node: ast.AST) -> ast.expr | None:
    """``node`` where it is ``self.__dict__`` or ``vars(self)``."""
    if isinstance(node, ast.Attribute) and node.attr == "__dict__" and isinstance(node.ctx, ast.Load) \
            and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" \
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Name) and node.args[0].id == "self":
        return node
    return None


def _keys_stored_into(namespace: ast.expr, parents: dict[int, ast.AST], looped: dict[int, tuple[str, ...]],
                      tree: ast.Module, reads_count: bool = False, frames_kept: bool = True) -> set[str] | None:
    """The keys a use of an instance's namespace stores: ``namespace.update(...)`` or
    ``namespace[k] = v`` (``del namespace[k]`` stores none; a read stores none, or is None where
    ``reads_count``); None for any other use."""
    above = parents.get(id(namespace))
    if isinstance(above, ast.Subscript) and above.value is namespace:
        if isinstance(above.ctx, ast.Del) or isinstance(above.ctx, ast.Load) and not reads_count:
            return set()
        if isinstance(above.ctx, ast.Load):
            return None
        key = above.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return {key.value}
        return set(looped[id(key)]) if id(key) in looped else None
    call = parents.get(id(above))
    if not (isinstance(above, ast.Attribute) and above.attr == "update" and isinstance(call, ast.Call) and call.func is above):
        return None
    if len(call.args) > 1 or any(k.arg is None for k in call.keywords):
        return None
    keys = {k.arg for k in call.keywords if k.arg is not None}
    if not call.args:
        return keys
    given = call.args[0]
    if isinstance(given, ast.Dict):
        if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in given.keys):
            return None  # (a ``**`` entry's key is None)
        return keys | {k.value for k in given.keys}
    if isinstance(given, ast.Call) and isinstance(given.func, ast.Name) and given.func.id == "dict" and not given.args \
            and all(k.arg is not None for k in given.keywords):
        return keys | {k.arg for k in given.keywords}
    # ``{k: v for k, v in locals().items() if k != "self"}``: some of them (helper-56, f1)
    if isinstance(given, ast.DictComp) and len(given.generators) == 1 and not given.generators[0].is_async:
        loop = given.generators[0]
        target = loop.target
        if isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name) \
                and isinstance(given.key, ast.Name) and given.key.id == target.elts[0].id \
                and isinstance(loop.iter, ast.Call) and not loop.iter.args and not loop.iter.keywords \
                and isinstance(loop.iter.func, ast.Attribute) and loop.iter.func.attr == "items":
            given = loop.iter.func.value
    if _the_files_namespace(given) and given.func.id == "locals" and frames_kept:
        function = _enclosing_function(given, tree)
        held = None if function is None else _function_locals(function, given)
        return None if held is None else keys | held
    return None


def _enclosing_function(node: ast.AST, tree: ast.Module) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function whose own frame evaluates ``node`` (``scope_map``); None at the module's or a
    class body's level, or in a lambda."""
    scope = scope_map(tree).get(id(node))
    return scope if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


#: Names through which a function's own code may put keys into its frame's namespace (a frame
#: reached from elsewhere, ``sys._getframe(1).f_locals``, is the program's question: ``FRAME_WRITES``).
_FRAME_WRITERS = frozenset({"exec", "eval", "_getframe", "currentframe", "f_locals", "f_back"})
#: The program's text where code may write another frame's namespace, or trace every frame: a
#: frame's ``f_locals``, ``inspect.getargvalues(frame).locals`` (the same dict: review helper-55,
#: c08), a tracer or profiler (handed every frame), C's frame API through ``ctypes``.
FRAME_WRITES = rb"f_locals|\bgetargvalues\b|\bsettrace\b|\bsetprofile\b|PyFrame_|PyEval_GetLocals"


def _function_locals(function: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call) -> set[str] | None:
    """Every key ``locals()`` (``call``) may give in ``function``: its parameters and each name its
    code (nested scopes too: their free names are its cells) reads or binds, and ``__class__``.
    None where the function may put other keys into its namespace (another ``locals()``, ``exec``,
    ``eval``, a frame)."""
    # (``__class__`` where the function's ``super()`` or ``__class__`` makes it a cell of its own)
    names = {"__class__"} if any(isinstance(n, ast.Name) and n.id in ("super", "__class__") for n in walk(function)) \
        else set()
    # ``vars(x)`` reads ``x``'s namespace; ``vars()``, another ``locals()`` or either handed around
    # reaches the frame's
    reading = {id(n.func) for n in walk(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
               and n.func.id == "vars" and len(n.args) == 1}
    for node in walk(function):
        if isinstance(node, ast.Name):
            if node.id in _FRAME_WRITERS or (node.id == "locals" and node is not call.func) \
                    or (node.id == "vars" and id(node) not in reading):
                return None
            if node is not call.func:
                names.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in _FRAME_WRITERS:
            return None
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not function:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names
