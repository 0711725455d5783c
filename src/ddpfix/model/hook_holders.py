"""Which objects of the program Lightning may call a batch hook on.

Lightning calls ``transfer_batch_to_device``, ``on_before_batch_transfer``, ``on_after_batch_transfer``
and the batch-start hooks on four objects only: the LightningModule it trains, the data module it is
handed, its callbacks and its strategy (``batch_to_device``). What a method stores on ``self`` by a
name made at run time (``setattr(self, key, value)``, ``self.__dict__.update(config)``, ``vars(self)``)
may install such a hook on its instance, so DDP004's proof that no code it cannot read moves a batch
counts it, unless the class can never be one of those four: a plain class of the program whose
every base is torch's (torch derives nothing from Lightning), Python's own, or such a class of the
program, read through ``model.class_files``, with no decorator or metaclass, and from which no class
of the program derives together with another base (``class Lit(Config, LightningModule)`` would put
its stores on a module). A darknet ``nn.Module`` reading its config into ``self.__dict__``, a
``Dataset`` keeping its arguments, or an LR scheduler's ``load_state_dict`` then installs nothing
Lightning calls.

A method's ``self`` is its class's instance only where nothing calls the method otherwise: the
class (and every class deriving from it) is used only to build it, derive from it, test against it
or import it (``Options.__init__(dm, **kw)`` or ``update = Options.update`` in a data module would
fill the data module: review helper-50, c01/c02/c05), and the class body binds the method by its
``def`` alone (``fill = staticmethod(fill)``). A subclass of ``type`` makes classes, which may be
Lightning's: no plain base (c03).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable

from ddpfix.ast_walk import walk
from ddpfix.imports import ImportTable
from ddpfix.analysis.lightning import names_bound_by
from ddpfix.model.class_files import ClassFiles, bound_once

#: Bases that are no Lightning class and derive from none (besides torch's, by their qualified name).
_PLAIN_BASES = frozenset({"abc.ABC", "typing.Generic", "typing.Protocol", "collections.abc.Mapping",
                          "enum.Enum", "dataclasses.dataclass"})
#: (not ``type``: its subclasses make classes, which may be Lightning's: review helper-50, c03)
_BUILTIN_CLASSES = frozenset(name for name in dir(builtins)
                             if isinstance(getattr(builtins, name), type) and not issubclass(getattr(builtins, name), type))
MAX_DEPTH = 8


def store_on_a_plain_object(classes: ClassFiles, path: str, line: int,
                            mixed_into: Callable[[str, str], str | None],
                            used_otherwise: Callable[[str, str], str | None]) -> bool:
    """Whether the text at ``line`` of the file at ``path`` lies in a method of a class that
    Lightning never calls a batch hook on (see the module's docstring), so that a store on ``self``
    there installs none. ``mixed_into(name, path)``: where a class of the program derives from the
    class ``name`` together with another base (``ProjectFacts.mixed_into``); ``used_otherwise(name,
    path)``: where the program uses it, or a class deriving from it, otherwise than to build it,
    derive from it or test against it (``ProjectFacts.class_used_otherwise``)."""
    parsed = classes.parsed(path)
    if parsed is None:
        return False
    tree, imports = parsed
    owner = _method_owner(tree, line)
    return owner is not None and plain_class(classes, path, tree, imports, owner) \
        and mixed_into(owner.name, path) is None and used_otherwise(owner.name, path) is None


def _method_owner(tree: ast.Module, line: int) -> ast.ClassDef | None:
    """The top-level class whose method, taking ``self`` first and never binding it again (no
    nested function or lambda taking a ``self`` of its own either), holds ``line``."""
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or not cls.lineno <= line <= (cls.end_lineno or cls.lineno):
            continue
        for method in cls.body:
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and method.lineno <= line <= (method.end_lineno or method.lineno):
                bound = [s for s in cls.body if method.name in names_bound_by(s)]
                return cls if _self_is_the_instance(method) and bound == [method] else None
        return None
    return None


def _self_is_the_instance(method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    positional = [*method.args.posonlyargs, *method.args.args]
    if not positional or positional[0].arg != "self" or method.decorator_list:
        return False  # (a staticmethod's or classmethod's ``self`` is whatever it is handed)
    for node in walk(method):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not method:
            inner = node.args
            if any(a.arg == "self" for a in [*inner.posonlyargs, *inner.args, *inner.kwonlyargs,
                                              *filter(None, (inner.vararg, inner.kwarg))]):
                return False
        if isinstance(node, ast.Name) and node.id == "self" and not isinstance(node.ctx, ast.Load):
            return False
    return True


def plain_class(classes: ClassFiles, path: str, tree: ast.Module, imports: ImportTable, cls: ast.ClassDef,
                depth: int = 0) -> bool:
    """Whether ``cls`` (of the file at ``path``) is provably no Lightning class: undecorated, no
    metaclass or class keywords, every base torch's, Python's own (not ``type``) or a plain class of
    the program."""
    if depth > MAX_DEPTH or cls.decorator_list or cls.keywords:
        return False
    return all(_plain_base(classes, path, tree, imports, base, depth) for base in cls.bases)


def _plain_base(classes: ClassFiles, path: str, tree: ast.Module, imports: ImportTable, base: ast.expr,
                depth: int) -> bool:
    if isinstance(base, ast.Subscript):  # ``Dataset[int]``, ``Generic[T]``
        base = base.value
    if not isinstance(base, (ast.Name, ast.Attribute)):
        return False
    qualified = imports.qualify(base)
    if qualified is not None:
        if qualified == "torch" or qualified.startswith("torch.") or qualified in _PLAIN_BASES:
            return True
        found = (classes.class_of(path, tree, base.id) if isinstance(base, ast.Name)
                 else classes.attribute_definition(path, tree, imports, base, ast.ClassDef))
        return found is not None and plain_class(classes, found[0], found[1], found[2], found[3], depth + 1)
    if not isinstance(base, ast.Name):
        return False
    own = [s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == base.id]
    if own:
        return len(own) == 1 and bound_once(tree, base.id) \
            and plain_class(classes, path, tree, imports, own[0], depth + 1)
    # A builtin class the file never binds (``object``, ``dict``).
    return base.id in _BUILTIN_CLASSES and not any(
        isinstance(n, ast.Name) and n.id == base.id and not isinstance(n.ctx, ast.Load) for n in walk(tree)) \
        and not _imported(tree, base.id)


def _imported(tree: ast.Module, name: str) -> bool:
    return any(isinstance(n, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name.split(".")[0]) == name
                                                                   for a in n.names) for n in walk(tree))
