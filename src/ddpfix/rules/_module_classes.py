"""DDP004: whether calling a module a LightningModule holds (``self.head(x)``) gives this rank's own
value, on the rank's GPU: the module is built by a call every part of which is read.

A call builds a known module when it is

* a ``torch.nn`` layer (``nn.Linear(4, 8)``); a container (``nn.Sequential``, ``nn.ModuleList``,
  ``nn.ModuleDict``) or a transformer stack only of known modules, written out in its arguments;
* a module class of the program (of this file, or of another file that a name of this one
  certainly means: ``model.class_files``) read whole: no class decorator, metaclass or
  ``__call__``, nothing but constants bound in its body, bases ``torch.nn.Module`` (or a
  non-container ``torch.nn`` layer, or LightningModule) through classes of its file; no word of a
  collective and nothing that may make a CPU tensor in its methods or in the functions of its file
  they call; every module it calls (``self.proj(x)``) itself built by a known call in its own code
  (not handed in: ``self.scorer = scorer``); and no file of the program replaces a ``forward`` or
  ``__call__`` (``Head.forward = f``);
* a call, in a class's ``__init__``, of a parameter that the construction being read hands a class
  (``act_fn()`` with ``act_fn=nn.GELU``, by the call or the parameter's default): that class, read
  with what its own parameters hold there (``ClassValue``; each class read once per such set).

Anything else is unknown: its value may be global already, or a CPU tensor.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import field

from ddpfix.analysis import lightning as tree_lightning
from ddpfix.analysis.ast_shapes import every_node
from ddpfix.ast_walk import walk
from ddpfix.analysis.lightning import LIGHTNING_MODULE_ATTRIBUTES, is_torch_nn_module, lightning_name
from ddpfix.analysis.call_paths import parameters_bound
from ddpfix.analysis.names import bound_names
from ddpfix.analysis.values import TENSOR_METHODS
from ddpfix.imports import ImportTable
from ddpfix.model.constructions import binding_scope, names_reached, object_problem, object_scope, parent_map
from ddpfix.records import record
from ddpfix.rules._device_evidence import cpu_evidence, registered_with_the_module, registrations

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: ``torch.nn`` classes whose ``forward`` runs the modules they are given.
CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict", "Transformer", "TransformerEncoder",
                        "TransformerDecoder", "DataParallel"})
PLAIN_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
#: torch's functions that return the module they are handed with one of torch's own
#: parametrizations or hooks (weight and spectral normalisation).
NORM_WRAPPERS = frozenset({
    "torch.nn.utils.weight_norm", "torch.nn.utils.spectral_norm", "torch.nn.utils.parametrizations.weight_norm",
    "torch.nn.utils.parametrizations.spectral_norm", "torch.nn.utils.parametrizations.orthogonal",
})
#: ``torch.nn`` layers that run code they are handed: the argument's name, and its position.
CALLABLE_ARGUMENTS = {
    "TransformerEncoderLayer": {"activation": 4},
    "TransformerDecoderLayer": {"activation": 4},
    "Transformer": {"activation": 6, "custom_encoder": 7, "custom_decoder": 8},
}
#: ``torch.nn`` layers whose ``forward`` runs a collective (SyncBatchNorm's statistics while training).
COLLECTIVE_LAYERS = frozenset({"SyncBatchNorm"})
MAX_DEPTH = 6


@record
class FileView:
    """One file of the program as the reader needs it."""

    path: str | None
    tree: ast.Module
    imports: ImportTable
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    hidden: Callable[[str], bool] = lambda _name: False

    @classmethod
    def of(cls, path: str | None, tree: ast.Module, imports: ImportTable, hidden=None) -> FileView:
        cached = tree.__dict__.get("_ddpfix_file_view")
        if cached is None:
            classes = {c.name: c for c in tree_lightning.classes(tree)}
            functions = {s.name: s for s in tree.body if isinstance(s, FUNCTIONS)}
            cached = tree._ddpfix_file_view = cls(path, tree, imports, classes, functions,
                                                  hidden or _hidden_names(tree))
        return cached


@record(frozen=True, eq=False)
class ClassValue:
    """The class a parameter holds at one construction (``act_fn=nn.GELU``, ``block=Bottleneck``, or
    the parameter's default): a ``torch.nn`` layer (``qualified``), or a module class of the program
    (``cls``, read in ``view``). Calling the parameter builds that class."""

    qualified: str | None = None
    cls: ast.ClassDef | None = None
    view: FileView | None = None

    @property
    def key(self) -> object:
        return self.qualified if self.qualified is not None else (id(self.cls), self.view.path or "")


#: Parameter -> the class it holds, for the parameters of a class's ``__init__`` that a construction
#: binds to a known class.
Bound = dict[str, ClassValue]


def own_init(cls: ast.ClassDef) -> ast.FunctionDef | None:
    return next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)


class ModuleReader:
    """Reads the module classes a LightningModule holds; each class read once per run (once per
    set of classes its class-valued parameters hold)."""

    def __init__(self, class_files=None, patched: Callable[[str], str | None] | None = None,
                 collective_word: Callable[[ast.AST, ImportTable], tuple[str, int] | None] | None = None,
                 registered: Callable[[], str | None] | None = None,
                 global_reached: Callable[[str, str], str | None] | None = None):
        """``class_files``: ``model.class_files.ClassFiles`` (a class of another file), or None;
        ``patched(name)``: where a file of the program stores an attribute ``name`` on anything
        (``Head.forward = f``), or None; ``collective_word``: the collective test of the proof;
        ``registered()``: where the program adds a model to a library's registry (``@register_model``,
        ``AutoModel.register(...)``), which the library's builders then build by name; None: not
        asked (a library model is then not known); ``global_reached(name, path)``: where another file
        may import the global ``name`` of ``path`` (a registry of classes), or None."""
        self.class_files, self.patched, self.collective_word = class_files, patched, collective_word
        self.registered, self.global_reached = registered, global_reached
        self._problems: dict[tuple[int, str], str | None] = {}
        #: The classes each call that was read builds (the proof follows their ``forward``).
        self.classes_of: dict[int, list[tuple[ast.ClassDef, FileView]]] = {}

    def call_problem(self, call: ast.Call, view: FileView, depth: int = 0, bound: Bound | None = None) -> str | None:
        """None when ``call`` builds a known module (see the module's docstring); else why not.
        ``bound``: the classes the parameters of the ``__init__`` that makes the call hold
        (``act_fn()`` builds the class handed as ``act_fn``)."""
        if depth > MAX_DEPTH:
            return "modules nested deeper than are read"
        func = call.func
        # ``nn.Linear(...)``, ``Head(...)``: what the name is bound to when it runs; a store of that
        # name anywhere in the program (``setattr(nn, "Linear", Mine)``, ``model.Head = Other``)
        # may bind another class there.
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if called is not None and self.patched is not None:
            place = self.patched(called)
            if place is not None:
                return f"{place} may bind `{called}` to another class"
        place = self.registered() if self.registered is not None else "the program's registries and global hooks are not read"
        if place is not None:
            return f"{place} may add a model a library builds by name, or hook every module"
        if isinstance(func, ast.Name) and bound and func.id in bound:
            value = bound[func.id]
            if value.qualified is not None:
                # a torch.nn layer that is neither a container nor a collective (``class_value``)
                layer = value.qualified.rsplit(".", 1)[-1]
                return self._handed_code_problem(layer, call, view, depth, bound) if layer in CALLABLE_ARGUMENTS else None
            self.classes_of.setdefault(id(call), []).append((value.cls, value.view))
            return self.class_problem(value.cls, value.view, depth + 1, self.arguments(value.cls, value.view, call, view, bound))
        if self.patched is not None and (_library_model(call, view.imports.qualify(func) or "")
                                         or is_torch_nn_module(view.imports, func)):
            # ``nn.Linear.forward = f``, ``nn.Module.__call__ = g``: a library class's code replaced.
            for method in ("forward", "__call__"):
                place = self.patched(method)
                if place is not None:
                    return f"{place} may replace a `{method}`"
        if _library_model(call, view.imports.qualify(func) or ""):
            return None
        if (view.imports.qualify(func) or "") in NORM_WRAPPERS:
            # ``weight_norm(nn.Conv1d(...))``: the module it is handed, with torch's own parametrization
            if len(call.args) < 1 or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return f"`{ast.unparse(func)[:40]}` (line {call.lineno}) is not handed a module built where it is read"
            return self._part_problem(call.args[0], view, depth + 1, bound)
        if is_torch_nn_module(view.imports, func):
            layer = (view.imports.qualify(func) or "").rsplit(".", 1)[-1]
            if layer in COLLECTIVE_LAYERS:
                return f"`{layer}` (line {call.lineno}) runs a collective in its forward while training"
            if layer in CALLABLE_ARGUMENTS:
                problem = self._handed_code_problem(layer, call, view, depth, bound)
                if problem is not None:
                    return problem
            if layer not in CONTAINERS:
                return None
            for argument in [*call.args, *(k.value for k in call.keywords)]:
                problem = self._part_problem(argument, view, depth + 1, bound)
                if problem is not None:
                    return problem
            return None
        found = self._class_of(func, view)
        if found is None and isinstance(func, ast.Name) and func.id in view.functions and not view.hidden(func.id):
            return self._factory_problem(view.functions[func.id], view, depth + 1)
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name):
            return self._registry_problem(func.value, view, depth + 1)
        if found is None:
            return f"`{ast.unparse(func)[:40]}` is not a module class that is read"
        cls, where = found
        self.classes_of.setdefault(id(call), []).append((cls, where))
        return self.class_problem(cls, where, depth + 1, self.arguments(cls, where, call, view, bound))

    def _handed_code_problem(self, layer: str, call: ast.Call, view: FileView, depth: int,
                             bound: Bound | None) -> str | None:
        """A torch layer that runs what it is handed (``TransformerEncoderLayer(activation=f)``,
        ``Transformer(custom_encoder=m)``): each such argument absent, a string (``"gelu"``), one of
        torch's own functions, or a known module; None then."""
        for name, position in CALLABLE_ARGUMENTS[layer].items():
            given = next((k.value for k in call.keywords if k.arg == name), None)
            if given is None and len(call.args) > position:
                given = call.args[position]
            if given is None and (any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)):
                return f"`{layer}` (line {call.lineno}) may be handed `{name}=` through `*args` or `**kwargs`"
            if given is None or (isinstance(given, ast.Constant) and (given.value is None or isinstance(given.value, str))):
                continue
            qualified = view.imports.qualify(given) or ""
            if qualified.startswith("torch.nn.functional.") or (qualified.startswith("torch.") and qualified.count(".") == 1):
                continue
            if isinstance(given, ast.Call) and self._part_problem(given, view, depth + 1, bound) is None:
                continue
            return f"`{layer}` (line {call.lineno}) runs `{name}={ast.unparse(given)[:40]}`, code that is not read"
        return None

    def class_value(self, node: ast.expr, view: FileView, bound: Bound | None = None) -> ClassValue | None:
        """The class ``node`` (read in ``view``) certainly names, as a parameter may hold it: a
        parameter of the enclosing ``__init__`` that holds one (``bound``), a ``torch.nn`` layer that
        is neither a container (it runs what it is given) nor a collective and that no file of the
        program replaces, or a module class of the program; None for anything else."""
        if isinstance(node, ast.Name) and bound and node.id in bound:
            return bound[node.id]
        if is_torch_nn_module(view.imports, node):
            layer = (view.imports.qualify(node) or "").rsplit(".", 1)[-1]
            if layer in CONTAINERS or layer in COLLECTIVE_LAYERS:
                return None
            if self.patched is not None and any(self.patched(n) is not None for n in (layer, "forward", "__call__")):
                return None
            return ClassValue(qualified=view.imports.qualify(node))
        found = self._class_of(node, view) if isinstance(node, ast.Name) else None
        if found is None:
            return None
        if self.patched is not None and self.patched(node.id) is not None:
            return None
        return ClassValue(cls=found[0], view=found[1])

    def arguments(self, cls: ast.ClassDef, where: FileView, call: ast.Call, view: FileView,
                  bound: Bound | None = None) -> Bound:
        """The class-valued parameters of ``cls``'s own ``__init__`` as ``call`` (read in ``view``,
        within an ``__init__`` whose parameters hold ``bound``) binds them: what it passes, or the
        default (read in the class's own file). Only parameters the ``__init__`` never binds again;
        only values that certainly name a class (``class_value``)."""
        init = own_init(cls)
        if init is None:
            return {}
        passed = parameters_bound(init, call)
        if not passed:
            return {}
        defaults = {id(d) for d in [*init.args.defaults, *init.args.kw_defaults] if d is not None}
        rebound = set().union(*(bound_names(statement) for statement in init.body))
        found: Bound = {}
        for name, value in passed.items():
            if name in rebound or not isinstance(value, (ast.Name, ast.Attribute)):
                continue
            resolved = self.class_value(value, where) if id(value) in defaults else self.class_value(value, view, bound)
            if resolved is not None:
                found[name] = resolved
        return found

    def _registry_problem(self, registry: ast.Name, view: FileView, depth: int) -> str | None:
        """None when ``REGISTRY[name](...)`` builds a known module whatever the name: ``REGISTRY``
        is a global of the file every binding of which is a dict display of its classes and every
        change a store of one of them under a key (``model_dict["ResNet"] = ResNet``); the file
        otherwise only builds from it, tests a key (``name in model_dict``) or reads its keys; no
        other file imports it; and each class is a known module."""

        name = registry.id
        refused = f"`{name}[...]` (line {registry.lineno}) may hold what is not a known module class"
        if binding_scope(view.tree, registry, name) is not view.tree:
            return refused
        if self.global_reached is None or view.path is None:
            return refused
        elsewhere = self.global_reached(name, view.path)
        if elsewhere is not None:
            return f"{elsewhere} may import `{name}` and change it"
        if names_reached(view.tree, name) is not None:
            return refused  # ``globals()["MODELS"]``, a star import, a ``match`` capture
        parents = parent_map(view.tree)
        classes: list[ast.expr] = []
        for node in every_node(view.tree):
            if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
                return refused
            if not isinstance(node, ast.Name) or node.id != name or binding_scope(view.tree, node, name) is not view.tree:
                continue
            parent = parents.get(id(node))
            if isinstance(node.ctx, ast.Store):
                if not (isinstance(parent, ast.Assign) and parent.targets == [node] and isinstance(parent.value, ast.Dict)
                        and all(k is not None for k in parent.value.keys)):
                    return refused
                classes += parent.value.values
                continue
            if isinstance(node.ctx, ast.Del):
                return refused
            if isinstance(parent, ast.Subscript) and parent.value is node:
                above = parents.get(id(parent))
                if isinstance(parent.ctx, ast.Store) and isinstance(above, ast.Assign) and above.targets == [parent]:
                    classes.append(above.value)
                    continue
                if isinstance(parent.ctx, ast.Load) and isinstance(above, ast.Call) and above.func is parent:
                    continue  # built from it
                return refused
            if isinstance(parent, ast.Compare) and node in parent.comparators and all(
                    isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops):
                continue  # ``model_name in model_dict``
            if isinstance(parent, ast.Attribute) and parent.attr == "keys" and isinstance(parents.get(id(parent)), ast.Call) \
                    and parents[id(parent)].func is parent:
                continue  # ``model_dict.keys()``
            return refused
        if not classes:
            return refused
        for value in classes:
            found = self._class_of(value, view) if isinstance(value, ast.Name) else None
            if found is None:
                return f"`{name}` holds `{ast.unparse(value)[:40]}` (line {value.lineno}), not a module class that is read"
            problem = self.class_problem(found[0], found[1], depth)
            if problem is not None:
                return problem
        return None

    def _factory_problem(self, function, view: FileView, depth: int) -> str | None:
        """None when every ``return`` of a function of the file builds a known module: a call that
        builds one, or a local name every binding of which builds one and every use of which leaves
        it as built (``model = resnet18(num_classes=10)``, ``model.fc = nn.Identity()``, ``return
        model``: ``model.constructions.object_problem``)."""

        name = function.name
        if function.decorator_list or not isinstance(function, ast.FunctionDef):
            return f"`{name}` is decorated or asynchronous: what it returns is not read"
        returns = [n for n in every_node(function) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom))
                   and _enclosing_function(view.tree, n) is function]
        if not returns or any(not isinstance(r, ast.Return) or r.value is None for r in returns):
            return f"`{name}` (line {function.lineno}) may return what is not a module built where it is read"
        for returned in returns:
            value = returned.value
            if isinstance(value, ast.Call):
                problem = self.call_problem(value, view, depth)
            elif isinstance(value, ast.Name) and object_scope(view.tree, value) is view.tree:
                problem = f"`{name}` returns the global `{value.id}` (line {returned.lineno}), one object every caller shares"
            elif isinstance(value, ast.Name):
                found = object_problem(view.tree, value, lambda node, value=value: node is value,
                                       lambda call: self.call_problem(call, view, depth), self.patched)
                problem = None if found is None else f"`{name}` returns `{value.id}`: {found[0]}"
            else:
                problem = f"`{name}` returns `{ast.unparse(value)[:40]}` (line {returned.lineno}), not built where it is read"
            if problem is not None:
                return problem
        return None

    def _part_problem(self, node: ast.expr, view: FileView, depth: int, bound: Bound | None = None) -> str | None:
        if isinstance(node, ast.Starred):
            node = node.value
            if isinstance(node, ast.Name):
                return self._list_problem(node, view, depth, bound)
        if isinstance(node, ast.Call) and (view.imports.qualify(node.func) or "") in ("collections.OrderedDict", "typing.OrderedDict") \
                and not node.keywords and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)) \
                and (self.patched is None or self.patched("OrderedDict") is None):
            # ``nn.Sequential(OrderedDict([("fc", nn.Linear(4, 4)), ...]))``: each pair's module
            pairs = node.args[0].elts
            if not all(isinstance(p, ast.Tuple) and len(p.elts) == 2 and isinstance(p.elts[0], ast.Constant) for p in pairs):
                return f"a container holds `{ast.unparse(node)[:40]}`, not built where it is read"
            return next((q for q in (self._part_problem(p.elts[1], view, depth, bound) for p in pairs) if q is not None), None)
        if isinstance(node, ast.Call):
            return self.call_problem(node, view, depth, bound)
        if isinstance(node, (ast.List, ast.Tuple)):
            return next((p for p in (self._part_problem(e, view, depth, bound) for e in node.elts) if p is not None), None)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and not any(g.is_async for g in node.generators):
            # ``nn.Sequential(*(Block(d) for _ in range(n)))``: each element is built by the same
            # call, however many times the loop runs.
            return self._part_problem(node.elt, view, depth, bound)
        if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
            return next((p for p in (self._part_problem(v, view, depth, bound) for v in node.values) if p is not None), None)
        if isinstance(node, ast.Constant):
            return None
        return f"a container holds `{ast.unparse(node)[:40]}`, not built where it is read"

    def _list_problem(self, name: ast.Name, view: FileView, depth: int, bound: Bound | None = None) -> str | None:
        """``nn.Sequential(*layers)``: ``layers`` is a list of the function that holds the call,
        every binding of which is a list display of known modules and every change of which appends
        or extends it with known modules (``layers.append(nn.Linear(...))`` in a loop)."""
        function = _enclosing_function(view.tree, name)
        parents = parent_map(view.tree)
        refused = f"a container holds `*{name.id}`, not a list of known modules built where it is read"
        if function is None:
            return refused
        arguments = function.args
        if name.id in {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                       *filter(None, [arguments.vararg, arguments.kwarg])]}:
            return refused  # handed in: ``nn.Sequential(*layers)`` with ``layers`` a parameter
        if not any(isinstance(n, ast.Name) and n.id == name.id and isinstance(n.ctx, ast.Store) for n in every_node(function)) \
                or any(isinstance(n, (ast.Global, ast.Nonlocal)) and name.id in n.names for n in every_node(function)):
            return refused  # a global, or a name of an enclosing function
        for node in every_node(function):
            if isinstance(node, ast.Name) and node.id == name.id and node is not name:
                parent = parents.get(id(node))
                if isinstance(node.ctx, ast.Store):
                    whole = (isinstance(parent, ast.Assign) and parent.targets == [node]) or (
                        isinstance(parent, ast.AnnAssign) and parent.target is node)
                    if not (whole and isinstance(parent.value, ast.List)):
                        return refused
                    problem = self._part_problem(parent.value, view, depth, bound)
                elif isinstance(parent, ast.Attribute) and parent.attr in ("append", "extend"):
                    call = parents.get(id(parent))
                    if not (isinstance(call, ast.Call) and call.func is parent and len(call.args) == 1 and not call.keywords):
                        return refused
                    problem = self._part_problem(call.args[0], view, depth, bound)
                elif isinstance(parent, ast.Starred) and isinstance(parents.get(id(parent)), ast.Call) \
                        and is_torch_nn_module(view.imports, parents.get(id(parent)).func):
                    problem = None  # another container built from it, read on its own
                else:
                    return refused
                if problem is not None:
                    return problem
        return None

    def _class_of(self, func: ast.expr, view: FileView) -> tuple[ast.ClassDef, FileView] | None:
        if not isinstance(func, ast.Name):
            return None
        if func.id in view.classes and not view.hidden(func.id):
            return view.classes[func.id], view
        if self.class_files is None or view.path is None:
            return None
        found = self.class_files.class_of(view.path, view.tree, func.id)
        if found is None:
            return None
        path, tree, imports, cls = found
        return cls, FileView.of(path, tree, imports)

    def class_problem(self, cls: ast.ClassDef, view: FileView, depth: int = 0, arguments: Bound | None = None) -> str | None:
        """None when every call of an instance of ``cls`` is known (see the module's docstring).
        ``arguments``: the classes its ``__init__``'s parameters hold in the construction asked
        about (``ModuleReader.arguments``)."""
        arguments = arguments or {}
        key = (id(cls), view.path or "", frozenset((name, value.key) for name, value in arguments.items()))
        if key not in self._problems:
            self._problems[key] = f"`{cls.name}` holds itself"  # a cycle, while asked
            self._problems[key] = self._class_problem(cls, view, depth, arguments)
        return self._problems[key]

    def _class_problem(self, cls: ast.ClassDef, view: FileView, depth: int, arguments: Bound) -> str | None:
        lineage, pending, reaches_module = [], [cls], False
        while pending:
            current = pending.pop()
            if any(current is c for c in lineage):
                continue
            lineage.append(current)
            if current.decorator_list:
                return f"`{current.name}` has a class decorator"
            if current.keywords:
                return f"`{current.name}` has a metaclass"
            for statement in current.body:
                if isinstance(statement, FUNCTIONS) and statement.name == "__call__":
                    return f"`{current.name}` defines `__call__`"
                if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None \
                        and not _constant(statement.value):
                    return f"`{current.name}` binds `{ast.unparse(statement)[:40]}` in its body"
            for base in current.bases:
                qualified = view.imports.qualify(base) or ""
                if qualified in PLAIN_BASES or lightning_name(view.imports, base) == "LightningModule":
                    reaches_module = True
                elif is_torch_nn_module(view.imports, base) and qualified.rsplit(".", 1)[-1] in COLLECTIVE_LAYERS:
                    # ``class GroupBN(_SBN)`` with ``from torch.nn import SyncBatchNorm as _SBN``
                    return f"`{current.name}` derives from `{qualified}`, which runs a collective in its forward while training"
                elif is_torch_nn_module(view.imports, base) and qualified.rsplit(".", 1)[-1] not in CONTAINERS:
                    reaches_module = True
                elif isinstance(base, ast.Name) and base.id in view.classes and not view.hidden(base.id):
                    pending.append(view.classes[base.id])
                else:
                    return f"`{current.name}` derives from `{ast.unparse(base)[:40]}`, which is not read"
        if not reaches_module:
            return f"`{cls.name}` is not a torch.nn module"
        if self.patched is not None:
            # Any method the instance's code may call (``Head._project = f``), not only ``forward``.
            names = {"forward", "__call__"} | {s.name for c in lineage for s in c.body if isinstance(s, FUNCTIONS)}
            for name in sorted(names):
                place = self.patched(name)
                if place is not None:
                    return f"{place} may replace a `{name}`"
        methods = {s.name for c in lineage for s in c.body if isinstance(s, FUNCTIONS)}
        # Every function and class of the file that this code names is code it may run, called or
        # not (``map(_share, xs)``, ``Gather.apply(x)``, ``Mean()(x)``): read along. A global object
        # of the file it names (``_STATS.apply(x)``) is not read.
        code: list[ast.AST] = []
        pending: list[ast.AST] = list(lineage)
        # A class that is the default of a parameter of the class's own ``__init__``
        # (``block=Block``) is built only where that parameter is called, and read there with what
        # its own parameters hold (``arguments``); a call of the parameter anywhere else is refused.
        init = own_init(cls)
        defaults = {id(d) for d in ([*init.args.defaults, *init.args.kw_defaults] if init is not None else [])
                    if isinstance(d, ast.Name) and d.id in view.classes}
        while pending:
            node = pending.pop()
            if any(node is c for c in code):
                continue
            code.append(node)
            for name in _global_names(node, defaults):
                if view.hidden(name):
                    continue
                if name in view.functions:
                    pending.append(view.functions[name])
                elif name in view.classes:
                    pending.append(view.classes[name])
                elif name in _file_objects(view.tree):
                    return f"`{cls.name}` reads `{name}`, an object its file makes (line {_file_objects(view.tree)[name]}), which is not read"
        # What ``__init__`` computes runs once, to build: a NumPy function there makes a shape or a
        # constant (``int(np.prod(img_shape))``), never what ``forward`` returns.
        building = {id(n) for c in lineage for s in c.body if isinstance(s, FUNCTIONS) and s.name == "__init__"
                    for n in every_node(s) if isinstance(n, ast.Call)}
        # (``Net.register_buffer = keep``: registering made the program's own, from outside the class)
        registering_patched = self.patched is not None and any(
            self.patched(name) is not None for name in ("register_buffer", "register_parameter", "__setattr__"))
        moved = frozenset() if registering_patched else frozenset().union(*(
            registered_with_the_module(s, view.imports, lineage) for c in lineage for s in c.body
            if isinstance(s, FUNCTIONS) and s.name == "__init__"))
        for c in lineage:
            for n in every_node(c):
                if isinstance(n, ast.Name) and n.id == "self" and isinstance(n.ctx, ast.Load) \
                        and not _keeps_self(parent_map(view.tree).get(id(n))):
                    return f"`{cls.name}` hands `self` on (line {n.lineno}): code not read may change it"
        code_problem = _code_not_read(code, lineage, methods, view)
        if code_problem is not None:
            return f"`{cls.name}` {code_problem}"
        # ``act_fn()`` in ``__init__``, ``act_fn`` a parameter that holds a known class here: that
        # class is built (and read as any module it builds).
        in_init = {id(n) for n in every_node(init)} if init is not None and arguments else set()
        handed = {id(n): n for n in every_node(init) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                  and n.func.id in arguments} if in_init else {}
        for made in handed.values():
            problem = self.call_problem(made, view, depth + 1, arguments)
            if problem is not None:
                return problem
        for node in code:
            unread = _unread_call(node, view, building, set(handed))
            if unread is not None:
                return f"`{cls.name}` calls `{unread[0]}` (line {unread[1]}), which is not read"
            if self.collective_word is not None:
                collective = self.collective_word(node, view.imports)
                if collective is not None:
                    return f"`{cls.name}` names a collective (`{collective[0]}`, line {collective[1]})"
            cpu = cpu_evidence(node, view.imports, moved)
            if cpu is not None:
                return f"`{cls.name}` may make a CPU tensor (`{cpu[0]}`, line {cpu[1]})"
        return self._held_problem(cls, lineage, methods, view, depth, arguments, in_init)

    def _held_problem(self, cls, lineage, methods: set[str], view: FileView, depth: int, arguments: Bound,
                      in_init: set[int]) -> str | None:
        """Every module the class calls (``self.proj(x)``) is built in its own code by a known call,
        and by nothing else."""
        # ``self.proj(x)``, and any call through what it holds (``self.tokenizer.encode(...)``).
        called = set()
        tensors = _registered_tensors(lineage, view.imports)
        for c in lineage:
            for n in every_node(c):
                if not isinstance(n, ast.Call):
                    continue
                chain = n.func
                if isinstance(chain, ast.Attribute) and isinstance(chain.value, ast.Attribute) \
                        and isinstance(chain.value.value, ast.Name) and chain.value.value.id == "self" \
                        and chain.value.attr in tensors and chain.attr in TENSOR_METHODS:
                    continue  # ``self.cls_token.repeat(b, 1, 1)``: a parameter's method makes a new tensor
                while isinstance(chain, ast.Attribute) and not (isinstance(chain.value, ast.Name) and chain.value.id == "self"):
                    chain = chain.value
                if isinstance(chain, ast.Attribute) and chain.attr not in methods \
                        and chain.attr not in LIGHTNING_MODULE_ATTRIBUTES:
                    called.add(chain.attr)
        if not called:
            return None
        built: dict[str, list[ast.expr]] = {}
        for c in lineage:
            for n in every_node(c):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr":
                    return f"`{cls.name}` calls `setattr`"
                if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                    for target in targets:
                        for part in ast.walk(target):
                            if (isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name)
                                    and part.value.id == "self" and part.attr in called):
                                whole = isinstance(n, ast.Assign) and target is part
                                built.setdefault(part.attr, []).append(n.value if whole else None)
        for name in sorted(called):
            changed = changed_in_place(lineage, name)
            if changed is not None:
                return f"`self.{name}` of `{cls.name}` is changed after it is built (line {changed})"
            values = built.get(name)
            if not values:
                return f"`self.{name}` of `{cls.name}` is not built in its code (it may be handed in)"
            for value in values:
                if not isinstance(value, ast.Call):
                    return f"`self.{name}` of `{cls.name}` holds what is not built where it is read"
                problem = self.call_problem(value, view, depth + 1, arguments if id(value) in in_init else None)
                if problem is not None:
                    return problem
        return None


#: Builtins a module's code may call: they compute on their arguments.
SAFE_BUILTINS = frozenset({"len", "range", "float", "int", "bool", "min", "max", "sum", "abs", "round", "isinstance",
                           "zip", "enumerate", "list", "tuple", "dict", "set", "super", "print", "reversed", "sorted",
                           "any", "all", "map", "hasattr", "divmod", "pow"})
#: Packages whose functions a module's code may call (``torch.cat``, ``F.relu``, ``math.sqrt``,
#: ``einops.rearrange``); their CPU makers and collectives are found by their own tests.
SAFE_PACKAGES = ("torch.", "math.", "einops.", "typing.")


#: Torch's own paths that run operators no proof reads (``torch.ops._c10d_functional.*``: the
#: collectives ``torch.distributed`` is built on) or that are collectives by name.
_OPERATOR_PATHS = ("torch.ops.", "torch.distributed", "torch._C._distributed", "torch._dynamo")


def _code_not_read(code: list[ast.AST], lineage: list[ast.ClassDef], methods: set[str], view: FileView) -> str | None:
    """What a module class's code (its classes and the file's functions and classes it names) does
    that runs code the reader does not follow: an imported name used otherwise than called (handed
    to ``checkpoint(block, x)`` or ``map``, a decorator, a stored or aliased module: ``o = ops``)
    unless it comes from a safe package; a hook or parametrization it registers
    (``self.register_forward_hook(h)``, ``register_parametrization(...)``); a method replaced on the
    instance (``self.forward = block``); torch's operator library (``torch.ops.*``)."""
    parents = parent_map(view.tree)
    for node in code:
        for n in every_node(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in view.imports.targets:
                qualified = view.imports.qualify(n) or ""
                parent = parents.get(id(n))
                called = isinstance(parent, ast.Call) and parent.func is n
                chained = isinstance(parent, ast.Attribute) and parent.value is n
                if qualified.startswith(_OPERATOR_PATHS) and not qualified.startswith("torch.distributed.fsdp"):
                    return f"reads `{n.id}` (`{qualified}`, line {n.lineno}), operators no proof reads"
                if not called and not chained and not qualified.startswith(SAFE_PACKAGES) \
                        and not (n.id in view.classes or n.id in view.functions):
                    return f"hands on `{n.id}` (line {n.lineno}), imported code not read"
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load):
                qualified = view.imports.qualify(n) or ""
                if qualified.startswith("torch.ops."):
                    return f"calls `{ast.unparse(n)[:40]}` (line {n.lineno}), operators no proof reads"
                if (n.attr.startswith("register_") and ("hook" in n.attr or "parametrization" in n.attr)) \
                        or n.attr in ("register_parametrization", "convert_sync_batchnorm"):
                    return f"registers code on a module (`{n.attr}`, line {n.lineno})"
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name) \
                    and n.value.id == "self" and (n.attr in methods or n.attr in ("forward", "__call__", "_call_impl")):
                return f"replaces its method `{n.attr}` on the instance (line {n.lineno})"
    return None


def _keeps_self(parent: ast.AST | None) -> bool:
    """A use of ``self`` that hands the instance to no other code: its attribute (``self.fc``),
    ``super(Net, self)``, ``nn.Module.__init__(self)``, ``isinstance(self, ...)``."""
    if isinstance(parent, ast.Attribute):
        return True
    if isinstance(parent, ast.Call):
        func = parent.func
        return (isinstance(func, ast.Name) and func.id in ("super", "isinstance")) or (
            isinstance(func, ast.Attribute) and func.attr == "__init__")
    return False


def _global_names(node: ast.AST, skip: set[int] = frozenset()) -> set[str]:
    """The names ``node``'s code reads from its module's globals: read (not bound) in each function
    or class body where they are not bound locally (over-approximated for nested scopes); the Name
    nodes of ``skip`` left out."""
    found: set[str] = set()
    scopes = [n for n in every_node(node) if isinstance(n, (*FUNCTIONS, ast.Lambda))]
    local: set[str] = set()
    for scope in scopes:
        arguments = scope.args
        local.update(a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs])
        local.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
        local.update(n.id for n in every_node(scope) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))
    for n in every_node(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in local and id(n) not in skip:
            found.add(n.id)
    return found


def _file_objects(tree: ast.Module) -> dict[str, int]:
    """Names the module binds at its top level to something other than a constant (``_STATS =
    Stats()``, ``TABLE = {...}``), with the line: objects whose methods are code of the program."""
    found = tree.__dict__.get("_ddpfix_file_objects")
    if found is None:
        found = {}
        for statement in tree.body:
            if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and statement.value is not None \
                    and not _constant(statement.value):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                for target in targets:
                    for n in walk(target):
                        if isinstance(n, ast.Name):
                            found.setdefault(n.id, statement.lineno)
        tree._ddpfix_file_objects = found
    return found


#: NumPy functions a module's ``__init__`` may call to compute sizes and constants: arithmetic on
#: numbers and arrays, none of which calls code it is handed (``apply_along_axis``, ``vectorize``,
#: ``frompyfunc``, ``fromfunction``, ``piecewise`` do: not here).
NUMPY_SIZE_FUNCTIONS = frozenset(f"numpy.{name}" for name in (
    "prod", "sum", "mean", "sqrt", "log", "log2", "log10", "exp", "ceil", "floor", "round", "abs", "power",
    "maximum", "minimum", "max", "min", "cumsum", "cumprod", "arange", "linspace", "zeros", "ones", "array",
    "asarray"))


def _unread_call(node: ast.AST, view: FileView, building: set[int] = frozenset(),
                 read: set[int] = frozenset()) -> tuple[str, int] | None:
    """(its name, its line) of the first call by name in ``node`` that the reader does not read: not a
    function or class of the file, a safe builtin, or a function of a safe package (or, for the calls
    of ``building``, a NumPy function of ``NUMPY_SIZE_FUNCTIONS``); the calls of ``read`` are read
    elsewhere (a class a parameter holds)."""
    for n in every_node(node):
        if not isinstance(n, ast.Call) or id(n) in read:
            continue
        func = n.func
        if id(n) in building and (view.imports.qualify(func) or "") in NUMPY_SIZE_FUNCTIONS:
            continue
        if isinstance(func, ast.Name):
            if func.id in view.functions or func.id in view.classes:
                if not view.hidden(func.id):
                    continue
            elif func.id in SAFE_BUILTINS and not view.hidden(func.id) and view.imports.qualify(func) is None:
                continue
            qualified = view.imports.qualify(func) or ""
            if qualified.startswith(SAFE_PACKAGES):
                continue
            return func.id, n.lineno
        if isinstance(func, ast.Attribute):
            qualified = view.imports.qualify(func)
            if qualified is not None and not qualified.startswith(SAFE_PACKAGES):
                return ast.unparse(func)[:40], n.lineno
    return None


#: Model classes of well-known libraries whose ``forward`` computes on the device of its inputs,
#: with no collective: Hugging Face ``transformers`` models (``AutoModelForSequenceClassification
#: .from_pretrained(...)``; not a tokenizer or processor, whose call makes CPU tensors), torchvision's
#: model builders, ``timm.create_model``.
_NOT_MODELS = ("Tokenizer", "Processor", "FeatureExtractor", "ImageProcessor", "Config", "Pipeline")


#: Keywords through which a builder is handed code or a placement it does not choose itself.
_HANDING_KEYWORDS = frozenset({"norm_layer", "block", "backbone", "model", "device_map", "custom_objects"})
_PLAIN_CALLS = frozenset({"len", "int", "float", "str", "bool", "dict", "list", "tuple"})


#: Keywords of library builders that take data, not code: sizes, flags, weights, names, configs.
_DATA_KEYWORDS = frozenset({
    "num_classes", "pretrained", "weights", "weights_backbone", "progress", "in_chans", "in_channels", "num_labels",
    "drop_rate", "drop_path_rate", "dropout", "aux_logits", "transform_input", "init_weights", "width_mult",
    "features_only", "out_indices", "output_stride", "global_pool", "pretrained_cfg", "img_size", "image_size",
    "num_channels", "config", "cache_dir", "revision", "torch_dtype", "dtype", "low_cpu_mem_usage",
    "local_files_only", "token", "use_auth_token", "num_hidden_layers", "hidden_size", "output_hidden_states",
    "output_attentions", "id2label", "label2id", "ignore_mismatched_sizes", "problem_type", "model_name",
    "pretrained_model_name_or_path", "num_keypoints", "min_size", "max_size", "trainable_backbone_layers",
    "checkpoint_path", "scriptable", "exportable", "no_jit",
})


def _literal_argument(node: ast.expr) -> bool:
    """An argument that is data whatever the program binds: literals, f-strings, arithmetic and
    displays of them (``_plain_argument`` without names)."""
    return _plain_argument(node, names=False)


def _plain_argument(node: ast.expr, names: bool = True) -> bool:
    """A builder's argument that cannot be a module: a constant, a name or attribute (a model name,
    ``ResNet18_Weights.DEFAULT``), a subscript, an f-string, ``len(...)``, arithmetic or a display
    of these; with ``names`` False, no name, attribute, subscript or call."""
    if isinstance(node, (ast.Constant, ast.JoinedStr)):
        return True
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        return names
    if isinstance(node, ast.BinOp):  # a size computed from sizes: ``num_classes=4 * hidden_dim``
        return _plain_argument(node.left, names) and _plain_argument(node.right, names)
    if isinstance(node, ast.UnaryOp):
        return _plain_argument(node.operand, names)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_plain_argument(e, names) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(v is not None and (k is None or _plain_argument(k, names)) and _plain_argument(v, names)
                   for k, v in zip(node.keys, node.values)) and (names or None not in node.keys)
    return names and isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _PLAIN_CALLS \
        and all(_plain_argument(a) for a in node.args)


#: torchvision's packages of model builders (``torchvision.models.resnet18``, ``.detection.fasterrcnn_...``);
#: not its tools that wrap a model they are given (``feature_extraction.create_feature_extractor``).
_TORCHVISION_BUILDERS = ("torchvision.models.", "torchvision.models.detection.", "torchvision.models.segmentation.",
                         "torchvision.models.video.", "torchvision.models.optical_flow.")


def _library_model(call: ast.Call, qualified: str) -> bool:
    """The call builds a well-known library's model from nothing it is handed: literal arguments,
    and names (``_plain_argument``: ``ResNet18_Weights.DEFAULT``, ``num_labels=len(labels)``) only
    as the model's name first or under a keyword that takes data (``_DATA_KEYWORDS``); no module,
    class or placement handed in (``norm_layer=``, ``activation=``, ``device_map=``) and no
    ``trust_remote_code`` (code downloaded with the model, not read)."""
    if any(k.arg is None or k.arg in _HANDING_KEYWORDS or (k.arg == "trust_remote_code" and not (
            isinstance(k.value, ast.Constant) and k.value.value is False)) for k in call.keywords):
        return False
    # A name may hold a class or a function a builder builds or runs (``activation=CrossReplicaSiLU``,
    # ``act_layer=``, ``stem_type=``, ``blocks=[...]``): only under a keyword known to take data (a
    # size, a flag, weights, a model's name), or as the model's name first; else only literals.
    if any(not _literal_argument(a) and not (i == 0 and _plain_argument(a)) for i, a in enumerate(call.args)):
        return False
    if any(not _literal_argument(k.value) and not (k.arg in _DATA_KEYWORDS and _plain_argument(k.value))
           for k in call.keywords):
        return False
    parts = qualified.split(".")
    if qualified.startswith("transformers.") and len(parts) >= 3 and parts[-1] in ("from_pretrained", "from_config"):
        name = parts[-2]
        return ("Model" in name or "For" in name) and not name.startswith(("TF", "Flax")) \
            and not any(word in name for word in _NOT_MODELS)
    if any(qualified.startswith(p) and "." not in qualified[len(p):] for p in _TORCHVISION_BUILDERS):
        return parts[-1][:1].islower() and not parts[-1].startswith(("get_", "list_"))
    return qualified == "timm.create_model"


def _enclosing_function(tree: ast.Module, node: ast.AST) -> ast.AST | None:
    parents = parent_map(tree)
    current = parents.get(id(node))
    while current is not None and not isinstance(current, FUNCTIONS):
        current = parents.get(id(current))
    return current


#: Methods of a module that read it or set its training state, and change neither what it holds,
#: its device nor what runs around its ``forward``: the only ones called on a held module
#: (``self.net.<method>(...)``) that keep it known. Any other (``append``, ``add_module``,
#: ``register_forward_hook``, ``cpu``, ``to``, a method of the user's own) may change it.
MODULE_READS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules",
                          "children", "named_children", "state_dict", "train", "eval", "requires_grad_", "zero_grad",
                          "forward", "extra_repr", "get_submodule", "get_parameter"})
#: Methods that change a module in place where a call reaches it deeper (``self.net.fc.cpu()``,
#: ``self.net[0].append(m)``): what it holds, its device, its hooks. A tensor's own methods
#: (``self.net.fc.weight.data.normal_()``) are not among them.
CHANGERS = frozenset({"append", "extend", "insert", "add_module", "register_module", "update", "__setitem__",
                      "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook", "apply",
                      "pop", "setdefault", "cpu", "cuda", "to", "type", "half", "float", "double", "bfloat16",
                      "to_empty", "load_state_dict", "set_submodule"})


def _registered_tensors(classes: list[ast.ClassDef], imports) -> set[str]:
    """Attributes that only ever hold a parameter or buffer the classes' ``__init__`` registers
    (``registrations``): tensors that move with the module, whose tensor methods
    (``TENSOR_METHODS``, none in place) make new ones. Any other store of the name, or a
    ``setattr``, and it is not one."""
    registered: dict[str, set[int]] = {}
    for owner in classes:
        for statement in owner.body:
            if isinstance(statement, FUNCTIONS) and statement.name == "__init__":
                for name, _made, binder in registrations(statement, imports):
                    registered.setdefault(name, set()).add(id(binder))
    binders = set().union(*registered.values())
    other: set[str] = set()
    for owner in classes:
        for n in every_node(owner):
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)) and id(n) not in binders:
                other.add(n.attr)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr":
                return set()
    return set(registered) - other


def changed_in_place(classes: list[ast.ClassDef], name: str, harmless: Callable[[ast.Call], bool] | None = None,
                     known_store: Callable[[ast.expr], bool] | None = None) -> int | None:
    """The line where the classes' code may change what ``self.<name>`` holds in place
    (``self.net.append(m)``, ``self.net.cpu()``, ``self.net[0] = m``, ``self.net.fc = m``,
    ``self.net.fc.to("cpu")``); None where none does. ``harmless(call)``: a call on it that changes
    nothing it runs (``self.net.apply(init_weights)``), or None; ``known_store(target)``: a store
    into one of its parts that leaves it a known module (a known module put in ``__init__``), or None."""
    for owner in classes:
        for node in every_node(owner):
            target = None
            if isinstance(node, ast.Call) and harmless is not None and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "apply" and harmless(node):
                continue
            if known_store is not None and isinstance(node, (ast.Attribute, ast.Subscript)) \
                    and isinstance(node.ctx, ast.Store) and known_store(node):
                continue
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                receiver = node.func.value
                direct = isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) \
                    and receiver.value.id == "self"
                if (direct and node.func.attr not in MODULE_READS) or (not direct and node.func.attr in CHANGERS):
                    target = receiver
            elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                target = node.value
            while isinstance(target, (ast.Attribute, ast.Subscript)) and not (
                    isinstance(target.value, ast.Name) and target.value.id == "self"):
                target = target.value
            if isinstance(target, ast.Attribute) and target.attr == name:
                return node.lineno
    return None


def _constant(node: ast.expr) -> bool:
    return all(isinstance(n, (ast.Constant, ast.Tuple, ast.List, ast.Load, ast.UnaryOp, ast.USub)) for n in ast.walk(node))


def _hidden_names(tree: ast.Module) -> Callable[[str], bool]:
    """Whether a use of a name may mean something the file binds otherwise than by its class or
    function statement (an assignment, a parameter, a second definition; any, with a star import)."""
    nodes = list(every_node(tree))
    if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in nodes):
        return lambda _name: True
    counts: dict[str, int] = {}
    for n in nodes:
        name = (n.id if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) else
                n.arg if isinstance(n, ast.arg) else
                n.name if isinstance(n, (*FUNCTIONS, ast.ClassDef, ast.MatchAs, ast.MatchStar)) else
                n.rest if isinstance(n, ast.MatchMapping) else None)
        if name is not None:
            counts[name] = counts.get(name, 0) + 1
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for alias in n.names:
                local = alias.asname or alias.name.split(".")[0]
                counts[local] = counts.get(local, 0) + 1
    return lambda name: counts.get(name, 0) > 1
