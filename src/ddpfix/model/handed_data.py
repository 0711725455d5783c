"""What data the program hands Lightning, and whether each data module among it is read up to
Lightning's own class: a data module's hooks (``transfer_batch_to_device``,
``on_before_batch_transfer``, ``on_after_batch_transfer``) decide what a batch is and where, before
the module's hooks see it. A data module of a library (``torchgeo``'s, ``pl_bolts``'), a class of
the program deriving from one, or data the text does not show (a parameter, a function's result)
may move batches its own way, and its code is not read.

Asked of each file that may run with the module: the data of each ``fit``/``validate``/``test``/
``predict`` call (``datamodule=``, and the data passed by position, which Lightning also takes for a
data module) and a ``LightningCLI``'s data module class. A loader (``torch.utils.data``; a
library's loader class is not read, whatever its name), Lightning's own
``LightningDataModule.from_datasets(...)``, or a class of the program whose every base is
``LightningDataModule`` or such a class (read through ``model.class_files``) is known; a name is
known where every binding of it in its scope is. Anything else is unknown, with where it is.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable

from ddpfix.analysis.ast_shapes import every_node, parent_map
from ddpfix.analysis.attribute_access import names_stored_on_self_at, writes_its_globals
from ddpfix.analysis.call_paths import parameters_bound
from ddpfix.analysis.class_decorators import inner_decorator, returns_its_class
from ddpfix.analysis.lightning import lightning_name, names_bound_by
from ddpfix.analysis.names import names_bound_at, pattern_names
from ddpfix.imports import ImportTable
from ddpfix.model.class_files import ClassFiles, bound_at_all, bound_once, imported_once, imports_that_run
from ddpfix.model.program import program_root

#: The Trainer's methods that take data, and the keyword of the data module.
DATA_METHODS = frozenset({"fit", "validate", "test", "predict"})
#: What a data class may derive from besides Lightning's data module and the program's classes.
_INERT_BASES = frozenset({"object", "abc.ABC", "builtins.object"})
MAX_DEPTH = 8


def unread_data(path: str, tree: ast.Module, imports: ImportTable, classes: ClassFiles, where: str,
                named_elsewhere: Callable[[str], str | None] = lambda _name: None,
                stored: Callable[[str], str | None] = lambda _name: None,
                module: tuple[str, str, frozenset[str]] | None = None, frames_kept: bool = False) -> str | None:
    """Why data the file at ``path`` (``where``: its name for a reason) hands Lightning may be a
    data module that is not read, naming it and its line; None where every piece is known.
    ``stored(name)``: where a file of the program stores an attribute ``name`` on anything
    (``data.Local = EuroSATDataModule``: a module's class rebound). ``named_elsewhere(name)``: where
    another file of the program names ``name`` (it may call a
    function of this file with anything). Fails closed: a ``fit``-like method handed around
    (``partial(trainer.fit)``, ``getattr(trainer, stage)``), ``*``/``**`` arguments, a
    ``LightningCLI`` used otherwise than called with a data module class it reads, are unknown.
    ``module``: (real path, class name, its methods' names) of the module whose batches are asked
    about: a call that provably trains another model (``trains_another_model``) hands it nothing.
    ``frames_kept``: no code of the program may write a frame's namespace (``FRAME_WRITES``), so a
    function's ``locals()`` holds its own names alone."""
    context = _Context(path, tree, imports, classes, named_elsewhere, stored, frames_kept)
    called = {id(c.func) for c in _parents_calls(tree)}
    for node in every_node(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and len(node.args) > 1 and not (isinstance(node.args[1], ast.Constant)
                                                and node.args[1].value not in DATA_METHODS) \
                and not _not_a_trainer(node.args[0], node, context) and not _a_library(node.args[0], context) \
                and not _only_inspected(node, context):
            # (a Trainer may come from another file: the file need not name Lightning)
            return f"{where}:{node.lineno}: `getattr` may call a Trainer's `fit` by a name made at run time"
        if isinstance(node, ast.Attribute) and node.attr in DATA_METHODS and isinstance(node.ctx, ast.Load) \
                and id(node) not in called \
                and not _not_a_trainer(node.value, node, context):
            return f"{where}:{node.lineno}: `{ast.unparse(node)[:40]}` is handed around, not called: what it is handed is not read"
        if lightning_name(imports, node) == "LightningCLI" if isinstance(node, (ast.Name, ast.Attribute)) else False:
            problem = _cli_problem(node, context)
            if problem is not None:
                return f"{where}:{node.lineno}: {problem}"
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in DATA_METHODS and not _not_a_trainer(func.value, node, context) \
                and not (module is not None and trains_another_model(node, module, context)):
            if any(k.arg is None for k in node.keywords):
                return f"{where}:{node.lineno}: `{ast.unparse(func)[:40]}(...)` is handed `**` arguments, not read"
            trainer = _trainer_problem(func.value, node, context)
            if trainer is not None:
                return f"{where}:{node.lineno}: {trainer}"
            # The first positional argument is the model, unless a ``*`` may fill it (then all is data).
            first = 1 if node.args and not isinstance(node.args[0], ast.Starred) else 0
            handed = [*node.args[first:], *(k.value for k in node.keywords if k.arg not in (
                "model", "ckpt_path", "verbose", "return_predictions", "weights_only"))]
            for value in handed:
                problem = _data_problem(value, node, context)
                if problem is not None:
                    return f"{where}:{value.lineno}: {problem}"
    return None


class _Context:
    """The file a question is asked in, and what it may ask of the program."""

    def __init__(self, path: str, tree: ast.Module, imports: ImportTable, classes: ClassFiles,
                 named_elsewhere: Callable[[str], str | None], stored: Callable[[str], str | None],
                 frames_kept: bool = False):
        self.path, self.tree, self.imports, self.classes = path, tree, imports, classes
        self.named_elsewhere, self.stored, self.frames_kept = named_elsewhere, stored, frames_kept

    def at(self, path: str, tree: ast.Module, imports: ImportTable) -> _Context:
        return _Context(path, tree, imports, self.classes, self.named_elsewhere, self.stored, self.frames_kept)


def _parents_calls(tree: ast.Module) -> list[ast.Call]:
    calls = tree.__dict__.get("_ddpfix_handed_calls")
    if calls is None:
        calls = tree._ddpfix_handed_calls = [n for n in every_node(tree) if isinstance(n, ast.Call)]
    return calls


#: Calls that look at what they are handed and never call it.
_INSPECTING = frozenset({"isinstance", "issubclass", "hasattr", "callable", "type", "id", "repr", "str",
                         "print", "len", "inspect.getsourcefile", "inspect.getsourcelines", "inspect.getfile",
                         "inspect.getsource", "inspect.getmodule", "inspect.isclass", "inspect.isfunction",
                         "inspect.ismethod", "inspect.isroutine", "inspect.signature"})


def _only_inspected(call: ast.Call, context: _Context) -> bool:
    """What ``getattr`` reaches is looked at, never called: it is bound to a local name that is only
    handed to ``_INSPECTING`` calls or compared, or to ``getattr`` again into the same name
    (``getattr(method, "__wrapped__", method)`` hands back what it is given: review helper-47, c04), in a function that
    declares it neither ``global`` nor ``nonlocal`` (Sphinx's ``linkcode_resolve``: ``obj =
    getattr(obj, part)``, then ``inspect.getsourcefile(obj)``). A ``fit`` it may reach so never runs."""
    parents = parent_map(context.tree)
    holder = parents.get(id(call))
    if not (isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name)):
        return False
    name = holder.targets[0].id
    scope = parents.get(id(holder))
    while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        scope = parents.get(id(scope))
    if scope is None:
        return False  # a module's name: another file may import it
    for node in every_node(scope):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        user = parents.get(id(node))
        if isinstance(user, ast.Compare):
            continue
        if not (isinstance(user, ast.Call) and node in user.args):
            return False
        called = context.imports.qualify(user.func) or (user.func.id if isinstance(user.func, ast.Name) else "")
        if called == "getattr":
            # ``getattr(obj, part)`` (or its default) hands back what it reaches: only into the same name
            into = parents.get(id(user))
            if not (isinstance(into, ast.Assign) and len(into.targets) == 1 and isinstance(into.targets[0], ast.Name)
                    and into.targets[0].id == name):
                return False
        elif called not in _INSPECTING:
            return False
    return True


#: Libraries that hold no Lightning Trainer: what ``getattr`` reaches on them (``getattr(optim,
#: name)``, ``getattr(nn, act)``) is theirs.
_NO_TRAINERS = frozenset({"torch", "torchvision", "torchaudio", "torchmetrics", "numpy", "math", "operator",
                          "functools", "builtins", "timm", "transformers", "sklearn", "scipy", "pandas"})


def _a_library(receiver: ast.expr, context: _Context) -> bool:
    """``receiver`` names one of ``_NO_TRAINERS`` or an object of it, through the file's imports (a
    name the file binds otherwise is not this)."""
    qualified = context.imports.qualify(receiver) or ""
    return qualified.split(".", 1)[0] in _NO_TRAINERS


#: Packages whose objects' ``fit`` takes no data module (scikit-learn's estimators and the like).
_OTHER_FITS = ("sklearn.", "xgboost.", "lightgbm.", "catboost.", "statsmodels.", "umap.", "hdbscan.", "scipy.",
               "skorch.", "keras.", "tensorflow.")


def _not_a_trainer(receiver: ast.expr, at: ast.AST, context: _Context) -> bool:
    """The receiver of a ``fit``-like call is certainly no Trainer: a literal, ``self`` or
    ``super()`` (a class's own method), or a name every binding of which builds an object of a
    package whose ``fit`` takes no data module (``clf = Ridge()``). Anything else may be one: a
    Trainer under any name, a subclass, a builder's result."""
    if isinstance(receiver, ast.Constant):
        return True
    if isinstance(receiver, ast.Name) and receiver.id == "self":
        return True
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super":
        return True
    if isinstance(receiver, ast.Call):
        return (context.imports.qualify(receiver.func) or "").startswith(_OTHER_FITS)
    if isinstance(receiver, ast.Name):
        # (its own methods, ``clf.fit(X, y)`` itself, change the object, not what it was built as)
        bound = _bindings(receiver.id, at, context.tree, through_methods=False)
        return bool(bound) and all(isinstance(v, ast.Call) and (context.imports.qualify(v.func) or "").startswith(_OTHER_FITS)
                                   for v in bound)
    return False


#: Packages whose classes cannot be, nor derive from, a class of the program.
_LIBRARY_MODELS = ("lightning.", "pytorch_lightning.", "torch.", "lightning_fabric.")


def trains_another_model(call: ast.Call, module: tuple[str, str, frozenset[str]], context: _Context) -> bool:
    """The ``fit``-like ``call`` provably hands its batches to no hook of ``module`` ((real path,
    class name, its methods' names)): its model is built, in every binding, by a class of the
    program that is not ``module``'s class nor below it (its bases read up to Lightning's or torch's
    classes), and whose body, and its bases' bodies, never name ``module``'s class, never call one of
    its methods on anything but ``self`` (a LightningModule holding it as a child could run its
    ``validation_step`` with this call's batches; Lightning itself runs only the top module's hooks),
    and reach no method by a name made at run time. pl_bolts' ``cli_main`` of ``LinearRegression``
    hands its loaders to no ``MNISTModule``."""
    if any(context.stored(name) is not None for name in sorted(module[2])):
        return False  # a store of a logging method's name on some object (``setattr(model, name, hook)``)
    model = _model_of(call)
    if model is None:
        # ``trainer.test(datamodule=dm)``: the model the same Trainer was handed before, in this scope
        # (a Trainer bound once there); each of its calls that names a model must name another.
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        bound = _bindings(receiver.id, call, context.tree, through_methods=False) if isinstance(receiver, ast.Name) else None
        if not bound or len(bound) != 1 or not isinstance(bound[0], ast.Call) or not _builds_a_trainer(bound[0], context):
            return False  # a Trainer handed over may have been handed this module before
        scope = next(iter(_enclosing_functions(call, context.tree)), context.tree)
        if not any(isinstance(n, ast.Name) and n.id == receiver.id and isinstance(n.ctx, ast.Store)
                   for n in _scope_nodes(scope)):
            return False  # bound in an outer scope, whose calls may hand it this module
        parents = parent_map(context.tree)
        for use in every_node(scope):  # (nested functions too: they may fit it another module)
            if isinstance(use, ast.Name) and use.id == receiver.id and isinstance(use.ctx, ast.Load):
                holder = parents.get(id(use))
                if not (isinstance(holder, ast.Attribute) and holder.attr in DATA_METHODS
                        and isinstance(parents.get(id(holder)), ast.Call) and parents[id(holder)].func is holder) \
                        or _enclosing_functions(use, context.tree)[:1] != _enclosing_functions(call, context.tree)[:1]:
                    return False  # handed on (``distill(trainer)``), or used by a nested function
        others = [c for c in _scope_nodes(scope) if isinstance(c, ast.Call) and c is not call
                  and isinstance(c.func, ast.Attribute) and c.func.attr in DATA_METHODS
                  and isinstance(c.func.value, ast.Name) and c.func.value.id == receiver.id]
        return bool(others) and all(_model_of(c) is not None and trains_another_model(c, module, context) for c in others)
    # (a store on it of another name than the module's methods, ``model.datamodule = dm``, runs none of them)
    built = [model] if isinstance(model, ast.Call) else (
        _bindings(model.id, call, context.tree, through_methods=False, stores_kept=module[2])
        if isinstance(model, ast.Name) else None)
    if not built:
        return False
    return all(isinstance(value, ast.Call) and _another_class(value.func, module, context, 0) for value in built)


def _model_of(call: ast.Call) -> ast.expr | None:
    """The model a ``fit``-like call is handed (its first argument, or ``model=``)."""
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "model"), None)


def _class_source(func: ast.expr, context: _Context):
    """(path, tree, imports, class) of the program's class a name means: one the file defines once at
    its top, or another file's through the imports (re-exports too); None otherwise."""
    if isinstance(func, ast.Name):
        # (not a class a function defines: what it reads through the function, its closures and
        # the values they are handed, is not read: review helper-52, f3g-f3i2. A function's import
        # that is the file's one binding of the name means the module's class, as one at the top:
        # bolts' ``cli_main`` imports its data modules.)
        if not _reads_its_functions_import(func, context.tree) and (
                imported_once(context.tree, func.id)  # (the one import is in another function or a class body)
                or any(func.id in names_bound_at(node) for outer in _enclosing_functions(func, context.tree)
                       for node in _scope_nodes(outer))):
            return None
        defined = [s for s in context.tree.body if isinstance(s, ast.ClassDef) and s.name == func.id]
        if len(defined) == 1 and bound_once(context.tree, func.id):
            return context.path, context.tree, context.imports, defined[0]
        return None if defined else context.classes.class_of(context.path, context.tree, func.id)
    if isinstance(func, ast.Attribute):
        return context.classes.attribute_definition(context.path, context.tree, context.imports, func, ast.ClassDef)
    return None


def _reads_its_functions_import(use: ast.Name, tree: ast.Module) -> bool:
    """``use`` reads one of the file's bindings of its name, all of them a ``from ... import`` of one
    name of one module (``imported_once``): the nearest function around ``use`` (its own code, or a
    closure's) that binds the name holds such an import, or none does and one stands at the top (not
    in a class body). A class body between them reads its own namespace first, which ``locals()`` may
    fill (review helper-53, c16). Where no scope the use reads binds the name, it is a global the
    file never binds (c01: the import sits in another function)."""
    if not imported_once(tree, use.id):
        return False
    parents = parent_map(tree)
    homes: set[int] = set()  # the scopes (functions, the module) that hold an import of the name
    for node in imports_that_run(tree, use.id):  # (one under ``if TYPE_CHECKING:`` binds nothing: f01)
        home = parents.get(id(node))
        while home is not None and not isinstance(home, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            home = parents.get(id(home))
        if isinstance(home, ast.ClassDef):
            return False  # (a class attribute; a use in a method reads another name)
        homes.add(id(home) if home is not None else id(tree))
    node = parents.get(id(use))
    while node is not None:
        if isinstance(node, ast.ClassDef):
            return False
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and id(node) in homes:
            return True  # (its local, or a closure's cell: that import's object)
        node = parents.get(id(node))
    return id(tree) in homes


def _another_class(func: ast.expr, module: tuple[str, str, frozenset[str]], context: _Context, depth: int) -> bool:
    """The class ``func`` names is a class of the program other than ``module``'s, none of whose
    bases is ``module``'s or below it, and none of whose bodies names ``module``'s class."""
    if depth > MAX_DEPTH:
        return False
    source = _class_source(func, context)
    if source is None:
        return False
    other_path, other_tree, other_imports, cls = source
    path, name, methods = module
    if cls.name == name and os.path.realpath(other_path) == path:
        return False
    if cls.keywords or context.stored(cls.name) is not None:
        return False  # a metaclass; a name another file may rebind
    if not _decorators_keep(cls, context.at(other_path, other_tree, other_imports)):
        return False
    if _changes_what_it_builds(cls, other_tree, context.frames_kept):
        return False
    if any(name in methods for statement in cls.body if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
           for name in names_bound_by(statement)):
        return False  # ``test_step = test_protocol``: a logging method's name bound to code not read here (review helper-48, c04)
    inner = context.at(other_path, other_tree, other_imports)
    names, foreign, dynamic = _what_the_class_reaches(cls, inner)
    if name in names:
        return False  # it may build the module's class, as a child
    if foreign & methods:
        return False  # ``self.inner.validation_step(batch)``: a child's hook, run with this batch
    if dynamic & (methods | {None}):
        return False  # a method reached by a name made at run time (not of a library: ``getattr(torchvision.models, name)``)
    if any(alias.name.rsplit(".", 1)[-1] == name for n in other_tree.body if isinstance(n, ast.ImportFrom)
           for alias in n.names if alias.asname):
        return False
    for base in cls.bases:
        qualified = other_imports.qualify(base) or ""
        if qualified.startswith(_LIBRARY_MODELS) or qualified in _INERT_BASES:
            continue
        if not _another_class(base, module, inner, depth + 1):
            return False
    return True


#: Builtins a class body may call without reaching its namespace: any other call may fill it
#: through the calling frame (``locals().update(...)``, ``sys._getframe(1).f_locals``, ``exec``).
_CLASS_BODY_CALLS = frozenset({"staticmethod", "classmethod", "property", "frozenset", "set", "dict", "list", "tuple",
                               "str", "int", "float", "bool", "range", "len", "sorted", "min", "max", "abs", "round"})
#: What a class may bind that changes which object building it gives, or what its attributes are.
_IDENTITY_DUNDERS = frozenset({"__new__", "__class__", "__getattribute__", "__getattr__", "__init_subclass__",
                               "__class_getitem__", "__bases__", "__dict__"})


def _changes_what_it_builds(cls: ast.ClassDef, tree: ast.Module, frames_kept: bool = False) -> bool:
    """The class binds ``__new__``, ``__getattribute__``... in its body by any means (``__new__ =
    _registered``), or its code stores ``x.__class__`` (``self.__class__ = chosen``) or ``__bases__``:
    building it may give an object of another class (review helper-48, c02/c03/c03b). Or its body
    calls code other than a few builtins, which may bind any name through the calling frame. A
    store on its own instance by names the code gives (``self.__dict__.update(locals())`` in its
    ``__init__``: review helper-55, f06; ``attribute_access.names_stored_on_self_at``, in ``tree``,
    with ``locals()`` read where ``frames_kept``) stores those names, none of which may be such a
    name (an entry ``__class__`` of the instance's ``__dict__`` changes nothing of its class)."""
    if any(name in _IDENTITY_DUNDERS for statement in cls.body for name in names_bound_by(statement)):
        return True
    if any(isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _CLASS_BODY_CALLS)
           for statement in cls.body if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
           for node in ast.walk(statement)):
        return True  # a call in the class body may bind any name in it (review helper-51, c02)
    return any((isinstance(node, ast.Attribute) and (node.attr == "__dict__" or node.attr in _IDENTITY_DUNDERS
                                                     and not isinstance(node.ctx, ast.Load))
                or isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (node.func.id == "vars" or (
                    node.func.id == "setattr" and len(node.args) > 1
                    and not (isinstance(node.args[1], ast.Constant) and node.args[1].value not in _IDENTITY_DUNDERS))))
               and not _stores_known_names(node, tree, frames_kept)
               for node in every_node(cls))  # (``self.__dict__.update(kw)``, ``setattr(self, k, v)``: any name)


def _stores_known_names(node: ast.AST, tree: ast.Module, frames_kept: bool) -> bool:
    """``node`` (``self.__dict__``, ``vars(self)``, ``setattr(self, ...)``) stores on the instance only
    names its line's code gives, none of which decides what the class builds."""
    setting = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
    own = (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name)
           and node.value.id == "self") or (isinstance(node, ast.Call) and len(node.args) >= 1
                                            and isinstance(node.args[0], ast.Name) and node.args[0].id == "self")
    if not own:
        return False
    names = names_stored_on_self_at(tree, node.lineno, frames_kept)
    return names is not None and not names & (_IDENTITY_DUNDERS if setting else _IDENTITY_DUNDERS - {"__class__"})


def _decorators_keep(cls: ast.ClassDef, context: _Context) -> bool:
    """Every decorator of the class (read in its own file, ``context``) is a function of the program
    that hands back the class it is given (``analysis.class_decorators``), or a factory of the
    program (``@under_review()``) that returns one."""
    for decorator in cls.decorator_list:
        factory = isinstance(decorator, ast.Call)
        source = _function_source(decorator.func if factory else decorator, context)
        if source is None:
            return False
        _path, _tree, imports, function = source
        if factory:
            function = inner_decorator(function)
        if function is None or not returns_its_class(function, imports.qualify):
            return False
    return True


def _what_the_class_reaches(cls: ast.ClassDef, context: _Context) -> tuple[frozenset, frozenset, frozenset]:
    """(the names and attribute names the class's code reads, the attributes it reaches on anything
    but ``self``/``cls``/``super()``, the literal names it hands ``getattr``/``methodcaller`` on such
    objects, None for a name made at run time), kept on the class's node."""
    kept = cls.__dict__.get("_ddpfix_reaches")
    if kept is None:
        names: set[str] = set()
        foreign: set[str] = set()
        dynamic: set[str | None] = set()
        for node in every_node(cls):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
                if not _own_receiver(node.value):
                    foreign.add(node.attr)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "methodcaller"):
                if node.func.id == "getattr" and node.args and (_own_receiver(node.args[0]) or _a_library(node.args[0], context)):
                    continue
                place = 1 if node.func.id == "getattr" else 0  # ``methodcaller(name, ...)``
                literal = len(node.args) > place and isinstance(node.args[place], ast.Constant) \
                    and isinstance(node.args[place].value, str)
                dynamic.add(node.args[place].value if literal else None)
        kept = cls._ddpfix_reaches = (frozenset(names), frozenset(foreign), frozenset(dynamic))
    return kept


#: A strategy's or plugin's methods that move or convert a batch.
_BATCH_MOVES = frozenset({"batch_to_device", "convert_input", "process_dataloader"})
#: A callback's hooks handed the batch after Lightning moved it, which may move part of it back.
_BATCH_START_HOOKS = frozenset({"on_train_batch_start", "on_validation_batch_start", "on_test_batch_start",
                                "on_predict_batch_start"})


#: Library callbacks read for their hooks: none is handed a batch (optuna's pruning callback, in
#: every version: ``on_fit_start``, ``on_validation_end``, and EarlyStopping's epoch-end checks).
_CALLBACKS_WITHOUT_BATCH_HOOKS = frozenset({
    "optuna.integration.PyTorchLightningPruningCallback", "optuna_integration.PyTorchLightningPruningCallback",
    "optuna.integration.pytorch_lightning.PyTorchLightningPruningCallback",
    "optuna_integration.pytorch_lightning.PyTorchLightningPruningCallback"})


def _builds_a_trainer(call: ast.Call, context: _Context) -> bool:
    """``call`` builds a new Trainer: ``L.Trainer(...)``, ``Trainer.from_argparse_args(...)``."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "from_argparse_args":
        func = func.value
    return lightning_name(context.imports, func) == "Trainer"


#: Strategy names Lightning knows itself (2.x's registry, and 1.x's); a library may register others
#: when it is imported (review helper-49, c07).
_LIGHTNING_STRATEGIES = frozenset({
    "auto", "dp", "ddp", "ddp2", "ddp_cpu", "ddp_spawn", "ddp_fork", "ddp_notebook", "ddp_sharded", "ddp_sharded_spawn",
    "ddp_fully_sharded", "deepspeed", "deepspeed_stage_1", "deepspeed_stage_2", "deepspeed_stage_2_offload",
    "deepspeed_stage_3", "deepspeed_stage_3_offload", "deepspeed_stage_3_offload_nvme", "fsdp", "fsdp_cpu_offload",
    "fsdp_native", "horovod", "single_device", "single_tpu", "single_xla", "tpu_spawn", "xla", "xla_debug",
    *(f"{base}_find_unused_parameters_{flag}" for base in ("ddp", "ddp_spawn", "ddp_fork", "ddp_notebook")
      for flag in ("true", "false"))})
#: What a script may read off its Trainer without changing what it runs.
_TRAINER_READS = frozenset({"callback_metrics", "logged_metrics", "progress_bar_metrics", "current_epoch", "global_step",
                            "is_global_zero", "global_rank", "local_rank", "world_size", "num_devices", "state",
                            "checkpoint_callback", "save_checkpoint", "log_dir", "default_root_dir", "lightning_module",
                            "interrupted", "sanity_checking", "training", "testing", "validating", "predicting",
                            "logger", "loggers", "checkpoint_callbacks", "early_stopping_callback", "max_epochs",
                            "num_nodes", "precision", "estimated_stepping_batches", "ckpt_path"})


def _trainer_problem(receiver: ast.expr, call: ast.Call, context: _Context) -> str | None:
    """Why the Trainer a ``fit``-like call runs on may run batch code that is not read (review
    helper-49): it must be built in the call's scope, once, by Lightning's ``Trainer(...)`` without
    ``**`` (not a subclass, a ``partial``, a factory of the program or a library's), then used there
    only for its data calls and its readings (not handed on, not changed: ``trainer.callbacks.append``),
    with every strategy, plugin and callback it is given read (``_trainer_part_problem``)."""
    if isinstance(receiver, ast.Call) and _builds_a_trainer(receiver, context):
        built = receiver  # ``L.Trainer(...).fit(model)``
        if not _keywords_read(built, context):
            return f"`{ast.unparse(built.func)[:40]}(...)` (line {built.lineno}) is handed `**` arguments: its callbacks, plugins and strategy are not read"
        return _trainer_part_problem(built, context)
    if not isinstance(receiver, ast.Name):
        return f"`{ast.unparse(receiver)[:40]}` is a Trainer this code does not build, whose callbacks and strategy are not read"
    bound = _bindings(receiver.id, call, context.tree, through_methods=False)
    if not bound or not all(isinstance(b, ast.Call) and _builds_a_trainer(b, context) for b in bound):
        return (f"`{receiver.id}` is not built here by Lightning's `Trainer(...)`: its callbacks, plugins and strategy "
                "are not read")
    scope = next(iter(_enclosing_functions(call, context.tree)), context.tree)
    for built in bound:  # (a notebook builds a Trainer in several cells: each is read)
        if not _keywords_read(built, context):
            return f"`{ast.unparse(built.func)[:40]}(...)` (line {built.lineno}) is handed `**` arguments: its callbacks, plugins and strategy are not read"
        if not any(n is built for n in _scope_nodes(scope)):
            return f"`{receiver.id}` is built in another scope, which may change it"
    parents = parent_map(context.tree)
    inner = _enclosing_functions(call, context.tree)[:1]
    uses = [n for n in every_node(scope) if isinstance(n, ast.Name) and n.id == receiver.id and isinstance(n.ctx, ast.Load)]
    data_calls = [u for u in uses if isinstance(parents.get(id(u)), ast.Attribute) and parents[id(u)].attr in DATA_METHODS]

    def in_a_loop(node: ast.AST) -> bool:
        node = parents.get(id(node))
        while node is not None and node is not scope:
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While, *_SCOPES)):
                return True
            node = parents.get(id(node))
        return False

    straight = not any(in_a_loop(u) for u in uses)
    last = max((u.lineno for u in data_calls), default=0)
    for use in uses:
        if straight and use.lineno > last and _enclosing_functions(use, context.tree)[:1] == inner:
            continue  # after its last data call, in code that runs once: it changes nothing they ran
        holder = parents.get(id(use))
        above = parents.get(id(holder))
        called = isinstance(above, ast.Call) and above.func is holder
        if isinstance(holder, ast.Call) and use in holder.args and lightning_name(context.imports, holder.func) is not None:
            continue  # handed to Lightning's own code (``Tuner(trainer)``)
        if _enclosing_functions(use, context.tree)[:1] == inner and isinstance(holder, ast.Attribute) and (
                (holder.attr in DATA_METHODS and called) or holder.attr in _TRAINER_READS):
            continue  # (``trainer.logger.log_hyperparams(...)``: its logger's, which no batch meets)
        return (f"`{receiver.id}` (line {use.lineno}) is used otherwise than for its data calls and readings: "
                "what it runs may be changed")
    return next((p for p in (_trainer_part_problem(built, context) for built in bound) if p is not None), None)


#: The Trainer's arguments that may bring batch code (``_trainer_part_problem``).
_BATCH_CODE_ARGUMENTS = frozenset({"strategy", "callbacks", "plugins"})


def _keywords_read(call: ast.Call, context: _Context) -> bool:
    """Every argument of the call is read: no ``*``, and ``**`` only of a dict display whose keys are
    strings written out (``Trainer(**{"devices": 2})``), or of a call of the program's function that
    provably gives none of ``_BATCH_CODE_ARGUMENTS`` (``**settings()``: ``_gives_no_batch_code``)."""
    # A call that names its strategy itself takes none from ``**settings()`` (Python refuses a
    # keyword given twice). What else such settings give is not read: callbacks or plugins built by
    # a function the program does not define (the differential harness's ``probe.trainer_kwargs()``;
    # a gap the closing note of 2026-11-30 names).
    named = any(k.arg == "strategy" for k in call.keywords)
    return not any(isinstance(a, ast.Starred) for a in call.args) and all(
        k.arg is not None or (isinstance(k.value, ast.Dict) and all(
            isinstance(key, ast.Constant) and isinstance(key.value, str) for key in k.value.keys))
        or _gives_no_batch_code(k.value, context)
        or (named and isinstance(k.value, ast.Call) and _function_source(k.value.func, context) is None)
        for k in call.keywords)


def _gives_no_batch_code(value: ast.expr, context: _Context) -> bool:
    """``value`` calls a function of the program every return of which is a dict it builds in its own
    code: ``dict(key=...)`` or a display with string keys, then only items stored under string keys
    or ``.update(extra)`` of its ``**extra`` parameter; and neither those keys nor the call's own
    keywords (what ``extra`` holds) name a strategy, callbacks or plugins."""
    if not isinstance(value, ast.Call) or any(k.arg is None for k in value.keywords) \
            or any(k.arg in _BATCH_CODE_ARGUMENTS for k in value.keywords):
        return False
    source = _function_source(value.func, context)
    if source is None:
        return False
    function = source[3]
    extra = function.args.kwarg.arg if function.args.kwarg is not None else None
    returns = [n for n in _scope_nodes(function) if isinstance(n, ast.Return)]
    if function.decorator_list or not returns or not all(isinstance(r.value, ast.Name) for r in returns):
        return False
    name = returns[0].value.id
    if any(r.value.id != name for r in returns):
        return False
    keys: set[str] = set()
    built = 0
    parents = parent_map(source[1])
    for node in _scope_nodes(function):
        if isinstance(node, ast.Name) and node.id == name:
            holder = parents.get(id(node))
            if isinstance(node.ctx, ast.Store):
                if not (isinstance(holder, ast.Assign) and len(holder.targets) == 1 and holder.targets[0] is node):
                    return False
                made = holder.value
                if isinstance(made, ast.Call) and isinstance(made.func, ast.Name) and made.func.id == "dict" \
                        and not made.args and all(k.arg is not None for k in made.keywords):
                    keys |= {k.arg for k in made.keywords}
                elif isinstance(made, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in made.keys):
                    keys |= {k.value for k in made.keys}
                else:
                    return False
                built += 1
            elif isinstance(holder, ast.Return):
                continue
            elif isinstance(holder, ast.Subscript) and isinstance(holder.ctx, ast.Store) \
                    and isinstance(holder.slice, ast.Constant) and isinstance(holder.slice.value, str):
                keys.add(holder.slice.value)
            elif isinstance(holder, ast.Attribute) and holder.attr == "update" and extra is not None:
                call = parents.get(id(holder))
                if not (isinstance(call, ast.Call) and call.func is holder and len(call.args) == 1 and not call.keywords
                        and isinstance(call.args[0], ast.Name) and call.args[0].id == extra):
                    return False
            else:
                return False
    return built == 1 and not keys & _BATCH_CODE_ARGUMENTS


def _keywords_of(call: ast.Call) -> list[tuple[str, ast.expr]]:
    """(name, value) of each keyword, a ``**`` dict display's entries too (``_keywords_read``)."""
    found = []
    for keyword in call.keywords:
        if keyword.arg is not None:
            found.append((keyword.arg, keyword.value))
        elif isinstance(keyword.value, ast.Dict):
            found += [(key.value, value) for key, value in zip(keyword.value.keys, keyword.value.values)
                      if isinstance(key, ast.Constant)]
    return found


def _trainer_part_problem(call: ast.Call, context: _Context) -> str | None:
    """Why a Trainer built here may run batch code that is not read: a ``strategy=`` (its
    ``batch_to_device``), ``plugins=`` or ``callbacks=`` object of a library other than Lightning
    (review helper-48, c07/c08), or a callback class of the program with a batch-start hook, which
    is handed the moved batch and may move part of it back. A string, Lightning's own classes, and
    the program's classes otherwise (their definitions are read where they are asked) are known."""
    if not _builds_a_trainer(call, context):
        return None
    for name, given in _keywords_of(call):
        if name not in _BATCH_CODE_ARGUMENTS:
            continue
        values = given.elts if isinstance(given, (ast.List, ast.Tuple)) else [given]
        for value in values:
            problem = _trainer_object_problem(value, name, call, context, listed=value is given)
            if problem is not None:
                return problem
    return None


def _trainer_object_problem(value: ast.expr, role: str, at: ast.AST, context: _Context, listed: bool = False,
                            depth: int = 0) -> str | None:
    """``listed``: ``value`` is the keyword's whole value (a name there may be a list of them)."""
    if depth > MAX_DEPTH:
        return f"`{role}=` holds `{ast.unparse(value)[:40]}`, which is not read"
    if isinstance(value, ast.Constant):
        if role == "strategy" and isinstance(value.value, str) and value.value not in _LIGHTNING_STRATEGIES:
            return f"`strategy={value.value!r}` is not one of Lightning's own strategies: a library may register it"
        return None
    built = [value]
    if isinstance(value, ast.Name):
        built = (_list_contents(value.id, at, context) if listed
                 else _bindings(value.id, at, context.tree, through_methods=False)) or []
        if not built:
            return f"`{role}=` holds `{value.id}`, which is not read"
    for made in built:
        if isinstance(made, ast.Constant):
            continue
        if isinstance(made, (ast.List, ast.Tuple)):
            problem = next((p for p in (_trainer_object_problem(e, role, at, context, depth=depth + 1)
                                        for e in made.elts) if p), None)
            if problem is not None:
                return problem
            continue
        if isinstance(made, ast.Name) and made is not value:
            # an item of a gathered list bound to a name (``checkpoint = ModelCheckpoint(...)`` then
            # ``callbacks.append(checkpoint)``): read where the name is read (a nested function's
            # parameter is not the outer scope's name: review helper-50, c21); a name of a list
            # (``callbacks.extend(monitoring)``) with what is put into it (c20)
            bound = _bindings(made.id, made, context.tree, through_methods=False)
            listed_too = bound is None or not all(isinstance(b, ast.Call) for b in bound)
            problem = _trainer_object_problem(made, role, made, context, listed=listed_too, depth=depth + 1)
            if problem is not None:
                return problem
            continue
        if not isinstance(made, ast.Call) or not isinstance(made.func, (ast.Name, ast.Attribute)):
            return f"`{role}=` holds `{ast.unparse(made)[:40]}`, which is not read"
        if lightning_name(context.imports, made.func) is not None \
                or (context.imports.qualify(made.func) or "") in _CALLBACKS_WITHOUT_BATCH_HOOKS:
            continue  # Lightning's own strategies, plugins and callbacks
        source = _class_source(made.func, context)
        if source is None:
            return (f"`{role}=` holds a `{ast.unparse(made.func)[:40]}`, a class the program does not define where it "
                    "is named (a library's, or one a function defines), whose batch code (a strategy's "
                    "`batch_to_device`, a callback's batch-start hooks) is not read")
        if role == "callbacks" and _class_defines(source, _BATCH_START_HOOKS, context, 0):
            return (f"the callback `{source[3].name}` ({os.path.basename(source[0])}:{source[3].lineno}) has a batch-start "
                    "hook: it is handed the moved batch, and may move part of it back")
        if role != "callbacks" and _class_defines(source, _BATCH_MOVES, context, 0):
            return (f"the {role} `{source[3].name}` ({os.path.basename(source[0])}:{source[3].lineno}) may move batches "
                    "itself, or derives from a class not read (review helper-49, c08)")
    return None


def _list_contents(name: str, at: ast.AST, context: _Context) -> list[ast.expr] | None:
    """What a local list handed to the Trainer holds: each binding's value, and what the scope puts
    into it (``callbacks.append(x)``, ``.extend([...])``, ``+= [...]``); None where it may hold
    anything else (another method, a store, handed to other code)."""
    bound = _bindings(name, at, context.tree, through_methods=False)
    if bound is None:
        return None
    scope = next(iter(_enclosing_functions(at, context.tree)), context.tree)
    if not any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in _scope_nodes(scope)):
        return None  # a list of an outer scope: what else puts into it is not read here
    parents = parent_map(context.tree)
    items = list(bound)
    for use in every_node(scope):  # (nested functions too: they may put anything into it)
        if not (isinstance(use, ast.Name) and use.id == name and isinstance(use.ctx, ast.Load)):
            continue
        holder = parents.get(id(use))
        call = parents.get(id(holder))
        if isinstance(holder, ast.Attribute) and holder.attr in ("append", "extend") and isinstance(call, ast.Call) \
                and call.func is holder and len(call.args) == 1 and not call.keywords:
            items.append(call.args[0])  # (an ``extend``'s sequence: each of its elements is read)
            continue
        if isinstance(holder, ast.keyword) and isinstance(parents.get(id(holder)), ast.Call) \
                and _builds_a_trainer(parents[id(holder)], context):
            continue  # a Trainer call (Lightning's own callbacks may be added to it there)
        return None
    for statement in _scope_nodes(scope):
        if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name) and statement.target.id == name:
            return None
    return items


def _class_defines(source, names: frozenset[str], context: _Context, depth: int) -> bool:
    """The class, or a base of it of the program, binds one of ``names`` (a base not read may)."""
    path, tree, imports, cls = source
    if depth > MAX_DEPTH or cls.keywords or any(names_bound_by(statement) & names for statement in cls.body):
        return True  # (a metaclass may give the class any method: review helper-50, c03)
    inner = context.at(path, tree, imports)
    if _changes_what_it_builds(cls, tree, context.frames_kept) or not _decorators_keep(cls, inner):
        return True  # ``__new__``, ``locals().update(...)``, a decorator: any method (review helper-52, f4f-f4h)
    for base in cls.bases:
        if lightning_name(imports, base) is not None or (imports.qualify(base) or "") in _INERT_BASES:
            continue
        found = _class_source(base, inner)
        if found is None or _class_defines(found, names, inner, depth + 1):
            return True
    return False


def _own_receiver(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id in ("self", "cls")) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super")


def _cli_problem(node: ast.expr, context: _Context) -> str | None:
    """Why a mention of ``LightningCLI`` may build a data module that is not read: anything but a
    call that names the data module class it reads, without ``subclass_mode_data`` (a
    configuration may then name any subclass), is unknown (a subclass of it, a configuration's
    data module)."""
    call = next((c for c in _parents_calls(context.tree) if c.func is node), None)
    if call is None:
        return "`LightningCLI` is used otherwise than called (a subclass of it): its data module is not read"
    if any(k.arg == "subclass_mode_data" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
           for k in call.keywords) or any(k.arg is None for k in call.keywords) \
            or any(isinstance(a, ast.Starred) for a in call.args):
        return "`LightningCLI` may build any subclass of its data module that a configuration names"
    handed = [a for a in call.args[1:2]] + [k.value for k in call.keywords if k.arg == "datamodule_class"]
    if not handed:
        return "`LightningCLI` may build any data module its configuration names, whose code is not read"
    return next((p for p in (_class_problem(v, context, 0) for v in handed) if p is not None), None)


def _data_problem(value: ast.expr, at: ast.AST, context: _Context, depth: int = 0) -> str | None:
    """Why ``value`` (read where ``at`` is) may be a data module that is not read."""
    if depth > MAX_DEPTH:
        return f"`{ast.unparse(value)[:40]}` is not read (too deep)"
    if isinstance(value, ast.Constant) and value.value is None:
        return None
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return next((p for p in (_data_problem(e, at, context, depth) for e in value.elts) if p is not None), None)
    if isinstance(value, ast.Dict):
        if any(k is None for k in value.keys):  # ``{**other}``
            return f"`{ast.unparse(value)[:40]}` is not read"
        return next((p for p in (_data_problem(v, at, context, depth) for v in value.values) if p is not None), None)
    if isinstance(value, ast.Starred):
        return _data_problem(value.value, at, context, depth)
    if isinstance(value, ast.Subscript):  # ``loaders()[0]``, ``splits["train"]``: a piece of what is read
        return _data_problem(value.value, at, context, depth)
    if isinstance(value, ast.Call):
        source = _function_source(value.func, context, stores_checked=False)
        if source is not None:
            # A function of the program (``*loaders()``, ``mnist()`` of another file): what each
            # of its ``return``s hands back, read in its own file.
            function_path, function_tree, function_imports, function = source
            rebound = context.stored(function.name)
            if rebound is not None:  # ``datasets.make_datamodule = _cluster_datamodule`` (review helper-47, c06)
                return f"{rebound} may bind `{function.name}` to another function, whose data is not read"
            returns = [n for n in _scope_nodes(function) if isinstance(n, ast.Return)]
            if function.decorator_list or not returns or any(
                    isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _scope_nodes(function)):
                return f"`{function.name}` ({os.path.basename(function_path)}:{function.lineno}) is not read"
            inner = context.at(function_path, function_tree, function_imports)
            for r in returns:
                if r.value is None:
                    continue
                problem = _data_problem(r.value, r, inner, depth + 1)
                if problem is not None:
                    return problem
            return None
        if isinstance(value.func, ast.Attribute) and value.func.attr == "from_datasets" \
                and lightning_name(context.imports, value.func.value) == "LightningDataModule":
            return None
        if isinstance(value.func, ast.Attribute) and value.func.attr in _BUILT_BY_ITS_CLASS:
            return _builder_problem(value.func.value, value.func.attr, at, context)
        return _class_problem(value.func, context, 0)
    if isinstance(value, ast.Name):
        function = _parameter_of(value.id, at, context.tree)
        if function is not None:
            # A parameter of a function of the file: what each of its calls hands it, where no
            # other file names the function (it may call it with anything).
            elsewhere = context.named_elsewhere(function.name)
            calls = _calls_of(function, context.tree)
            if elsewhere is not None or calls is None:
                where = f" ({elsewhere})" if elsewhere is not None else ""
                return (f"`{value.id}` is a parameter of `{function.name}` (line {function.lineno}), which other "
                        f"code may call with anything{where}")
            for call in calls:
                bound = parameters_bound(function, call, instance=False)
                if bound is None or value.id not in bound:
                    return f"what `{function.name}(...)` (line {call.lineno}) hands `{value.id}` is not read"
                problem = _data_problem(bound[value.id], call, context, depth + 1)
                if problem is not None:
                    return problem
            return None
        bound = _bindings(value.id, at, context.tree)
        if bound is None:
            return (f"`{value.id}` is bound or changed otherwise than by an assignment (a loop, an import, a "
                    "container's method): not read")
        for bound_value in bound:
            problem = _data_problem(bound_value, at, context, depth + 1)
            if problem is not None:
                return problem
        return None
    return f"`{ast.unparse(value)[:40]}` is not read"


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _scope_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of ``scope``'s own code: nested functions, lambdas and classes are not entered
    (their names, defaults and decorators are the scope's; their bodies are theirs). Kept on the
    scope's node."""
    kept = scope.__dict__.get("_ddpfix_scope_nodes")
    if kept is not None:
        return kept
    found: list[ast.AST] = []
    scope._ddpfix_scope_nodes = found
    todo = list(reversed(list(ast.iter_child_nodes(scope))))
    while todo:
        node = todo.pop()
        found.append(node)
        if isinstance(node, _SCOPES):
            inner = [*getattr(node, "decorator_list", ()), *getattr(getattr(node, "args", None), "defaults", ()),
                     *getattr(node, "bases", ())]
            todo.extend(reversed(inner))
            continue
        todo.extend(reversed(list(ast.iter_child_nodes(node))))
    return found


def _bindings(name: str, at: ast.AST, tree: ast.Module, through_methods: bool = True,
              stores_kept: frozenset[str] | None = None) -> list[ast.expr] | None:
    """The value of every binding of ``name`` in the scope that ``at`` reads it from (the innermost
    function that binds it, else the module): None where one is not a plain assignment (a loop or
    ``with`` target, an import, ``global``), where the name's object is changed through it (``dms.append(x)``,
    ``dms[0] = x``, ``d.update(...)``: a method call or a store on it; ``through_methods=False``: a
    store only, where what is asked is the class the object was built of), or where none is seen.
    An unpacking (``train, val = loaders()``) gives the whole value: every piece is asked about.
    ``stores_kept``: where only the class the object was built of is asked, a store of an attribute
    not among these names (``model.datamodule = dm``) leaves it the same."""
    scopes = _enclosing_functions(at, tree)
    declared = tree.__dict__.get("_ddpfix_declared_global")
    if declared is None:
        declared = tree._ddpfix_declared_global = {name for n in every_node(tree)
                                                   if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    if name in declared or name in _walrus_names(tree):
        return None  # (``:=`` in a lambda or comprehension binds the enclosing function's name)
    for scope in [*scopes, tree]:
        if scope is tree and writes_its_globals(tree) is not None:
            return None  # ``globals()["dm"] = other`` or ``exec(code)``, at the top or in a function
        nodes = _scope_nodes(scope)
        if not isinstance(scope, ast.Module):
            arguments = scope.args
            if name in {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                        *(x for x in (arguments.vararg, arguments.kwarg) if x is not None)]}:
                return None
        values: list[ast.expr] = []
        assigned: set[int] = set()
        for node in nodes:
            if isinstance(node, ast.Assign):
                targets = [t for target in node.targets for t in every_node(target)
                           if isinstance(t, ast.Name) and t.id == name and isinstance(t.ctx, ast.Store)]
                if targets:
                    values.append(node.value)
                    assigned.update(id(t) for t in targets)
        binds = False
        called = {id(c.func) for c in nodes if isinstance(c, ast.Call)}
        for node in nodes:
            if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load) \
                    and id(node) not in assigned:
                return None  # a loop, ``with`` or walrus target, ``del``
            if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    (alias.asname or alias.name).split(".")[0] in (name, "*") for alias in node.names):
                return None  # (``from m import *`` may bind any name)
            if isinstance(node, ast.pattern) and name in pattern_names(node):
                return None  # a ``match`` capture (``case [dm]:``: review helper-53, c15)
            if isinstance(node, _SCOPES) and getattr(node, "name", None) == name:
                binds = True
            if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.value, ast.Name) \
                    and node.value.id == name and (not isinstance(node.ctx, ast.Load)
                                                   or (through_methods and id(node) in called)):
                if stores_kept is not None and isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                        and node.attr not in stores_kept and not node.attr.startswith("__"):  # (``__class__``)
                    continue
                return None  # ``dms.append(dm)``, ``dms[0] = dm``: changed through the name
        if binds:
            return None
        if values:
            return values
    return None


#: Lightning's class methods of a data module that build an instance of the class they are called
#: on (``cls(**kwargs)``): 1.x's ``from_argparse_args``. Not ``load_from_checkpoint``: a checkpoint
#: (or an hparams file) that names a class path builds that subclass instead, where the class's
#: ``__init__`` takes ``**kwargs`` (``LightningDataModule``'s does), as LightningCLI's saves do.
_BUILT_BY_ITS_CLASS = ("from_argparse_args",)


def _builder_problem(receiver: ast.expr, method: str, at: ast.AST, context: _Context) -> str | None:
    """Why ``<receiver>.<method>(...)`` (``_BUILT_BY_ITS_CLASS``) may not build a data module that is
    read: each class the receiver may be (a class's name, or a local name every binding of which
    names one: ``dm_cls = CIFAR10DataModule`` in each branch) must be read up to Lightning's, with
    no class on the way that defines ``method`` itself (which may build anything)."""
    classes = [receiver]
    if isinstance(receiver, ast.Name):
        bound = _bindings(receiver.id, at, context.tree, through_methods=False)  # (its own method is this call)
        if bound is not None:
            classes = bound
    while any(isinstance(c, ast.IfExp) for c in classes):  # ``A if cond else B``: either
        classes = [part for c in classes for part in ((c.body, c.orelse) if isinstance(c, ast.IfExp) else (c,))]
    for cls in classes:
        if not isinstance(cls, (ast.Name, ast.Attribute)):
            return f"`{ast.unparse(cls)[:40]}.{method}(...)` is not read"
        problem = _class_problem(cls, context, 0, own=method)
        if problem is not None:
            return problem
    return None


def _walrus_names(tree: ast.Module) -> frozenset[str]:
    found = tree.__dict__.get("_ddpfix_walrus_names")
    if found is None:
        found = tree._ddpfix_walrus_names = frozenset(
            n.target.id for n in every_node(tree) if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name))
    return found


def _class_problem(func: ast.expr, context: _Context, depth: int, own: str | None = None) -> str | None:
    """Why the class ``func`` names may not derive from Lightning's data module through classes of
    the program alone, read: None where it does (or is a loader). ``own``: a method no class on
    the way may define itself (a class method that builds the data module)."""
    imports = context.imports
    qualified = imports.qualify(func) or ""
    if qualified.startswith("torch.utils.data.") or lightning_name(imports, func) == "LightningDataModule":
        return None
    if depth > MAX_DEPTH:
        return f"`{ast.unparse(func)[:40]}` is not read"
    source = _class_source(func, context)
    if source is not None:
        other_path, other_tree, other_imports, cls = source
        rebound = context.stored(cls.name)
        if rebound is not None:  # ``data.Local = EuroSATDataModule``: the name may mean another class
            return f"{rebound} may bind `{cls.name}` to another class, whose batch hooks are not read"
        if cls.keywords:
            return f"`{cls.name}` ({os.path.basename(other_path)}:{cls.lineno}) has a metaclass"
        if _changes_what_it_builds(cls, other_tree, context.frames_kept):
            return (f"`{cls.name}` ({os.path.basename(other_path)}:{cls.lineno}) binds `__new__`, `__class__` or another "
                    "name that decides what building it gives, or calls code in its body that may bind any name")
        if not _decorators_keep(cls, context.at(other_path, other_tree, other_imports)):
            return f"`{cls.name}` ({os.path.basename(other_path)}:{cls.lineno}) has a decorator that may return another object or change the class"
        if own is not None and any(own in names_bound_by(statement) for statement in cls.body):
            return f"`{cls.name}` ({os.path.basename(other_path)}:{cls.lineno}) defines its own `{own}`, which is not read"
        inner = context.at(other_path, other_tree, other_imports)
        for base in cls.bases:
            if other_imports.qualify(base) in _INERT_BASES or (isinstance(base, ast.Name) and base.id == "object"):
                continue
            problem = _class_problem(base, inner, depth + 1, own)
            if problem is not None:
                return problem
        return None
    shown = qualified or ast.unparse(func)[:40]
    # (review helper-53: "the program does not define" was false where the program's class is
    # named but the name may mean another object here)
    module_file = context.classes.module_file_of(context.path, qualified) if qualified else None
    if module_file is not None:
        return (f"`{shown}` may mean another object here than what {os.path.relpath(module_file, program_root(context.path))} "
                "defines (a name bound more than once, in another scope or at run time), whose batch hooks are not read")
    if isinstance(func, ast.Name) and not qualified and bound_at_all(context.tree, func.id):
        return (f"`{shown}` may mean more than one object here (a name bound more than once, in another scope or at run "
                "time), whose batch hooks are not read")
    return f"`{shown}` is a class or function the program does not define, whose batch hooks are not read"


def _file_function(func: ast.expr, tree: ast.Module, imports: ImportTable) -> ast.FunctionDef | None:
    """The top-level function of the file a call's name means, bound once in the file; None
    otherwise."""
    if not isinstance(func, ast.Name) or func.id in imports.targets:
        return None
    defined = [s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == func.id]
    if len(defined) != 1 or defined[0].decorator_list or not bound_once(tree, func.id):
        return None
    return defined[0]


def _function_source(func: ast.expr, context: _Context, stores_checked: bool = True):
    """(path, tree, imports, definition) of the program's function a call's name means: one of the
    file (``_file_function``), or one another file of the program defines (``from .data import
    loaders``, ``data.loaders``: ``model.class_files``); None otherwise."""
    function = _file_function(func, context.tree, context.imports)
    found = None
    if function is not None:
        found = context.path, context.tree, context.imports, function
    elif isinstance(func, ast.Name):
        found = context.classes.function_of(context.path, context.tree, func.id)
    elif isinstance(func, ast.Attribute):
        found = context.classes.attribute_definition(context.path, context.tree, context.imports, func, ast.FunctionDef)
    if stores_checked and found is not None and context.stored(found[3].name) is not None:
        return None  # ``datasets.make_datamodule = _cluster_datamodule`` elsewhere: the name may mean another function
    return found


def _parameter_of(name: str, at: ast.AST, tree: ast.Module) -> ast.FunctionDef | None:
    """The top-level function of the file, not a method, whose parameter ``name`` is, where ``at``
    is in its own code and the function never binds the name again; None otherwise."""
    for function in tree.body:
        if isinstance(function, ast.FunctionDef) and any(n is at for n in every_node(function)):
            arguments = function.args
            if name not in {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}:
                return None
            if not any(n is at for n in _scope_nodes(function)):
                return None  # read in a nested function: its own scope
            rebound = any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                          for n in every_node(function))
            return None if rebound else function
    return None


def _calls_of(function: ast.FunctionDef, tree: ast.Module) -> list[ast.Call] | None:
    """Every call of the file's function ``function`` (by its name), where the file calls it and
    uses its name only so, and binds it once; None otherwise (it may be handed around)."""
    if not bound_once(tree, function.name):
        return None
    calls, uses = [], 0
    for node in every_node(tree):
        if isinstance(node, ast.Name) and node.id == function.name and isinstance(node.ctx, ast.Load):
            uses += 1
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == function.name:
            calls.append(node)
    return calls if calls and uses == len(calls) else None


def _enclosing_functions(at: ast.AST, tree: ast.Module) -> list[ast.AST]:
    """The functions and lambdas whose code holds ``at``, innermost first."""
    parents = parent_map(tree)
    found: list[ast.AST] = []
    node = parents.get(id(at))
    while node is not None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            found.append(node)  # (a lambda's parameters are names of its own)
        node = parents.get(id(node))
    return found
