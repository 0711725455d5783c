"""What data the program hands Lightning, and whether each data module among it is read up to
Lightning's own class: a data module's hooks (``transfer_batch_to_device``,
``on_before_batch_transfer``, ``on_after_batch_transfer``) decide what a batch is and where, before
the module's hooks see it. A data module of a library (``torchgeo``'s, ``pl_bolts``'), a class of
the program deriving from one, or data the text does not show (a parameter, a function's result)
may move batches its own way, and its code is not read.

Asked of each file that may run with the module: the data of each ``fit``/``validate``/``test``/
``predict`` call (``datamodule=``, and the data passed by position, which Lightning also takes for a
data module) and a ``LightningCLI``'s data module class. A loader (``torch.utils.data``), Lightning's
own ``LightningDataModule.from_datasets(...)``, or a class of the program whose every base is
``LightningDataModule`` or such a class (read through ``model.class_files``) is known; a name is
known where every binding of it in its scope is. Anything else is unknown, with where it is.
"""

from __future__ import annotations

import ast
import os
from ddpfix.analysis.ast_shapes import every_node
from ddpfix.analysis.call_paths import parameters_bound
from ddpfix.analysis.lightning import lightning_name
from ddpfix.imports import ImportTable
from ddpfix.model.class_files import ClassFiles

#: The Trainer's methods that take data, and the keyword of the data module.
DATA_METHODS = frozenset({"fit", "validate", "test", "predict"})
#: What a data class may derive from besides Lightning's data module and the program's classes.
_INERT_BASES = frozenset({"object", "abc.ABC", "builtins.object"})
MAX_DEPTH = 8


def unread_data(path: str, tree: ast.Module, imports: ImportTable, classes: ClassFiles, where: str) -> str | None:
    """Why data the file at ``path`` (``where``: its name for a reason) hands Lightning may be a
    data module that is not read, naming it and its line; None where every piece is known."""
    for call in (n for n in every_node(tree) if isinstance(n, ast.Call)):
        func = call.func
        handed: list[ast.expr] = []
        if isinstance(func, ast.Attribute) and func.attr in DATA_METHODS and _trainer_like(func.value, call, tree, imports):
            handed = [a for a in call.args[1:]] + [k.value for k in call.keywords
                                                   if k.arg in ("datamodule", "train_dataloaders", "val_dataloaders",
                                                                "dataloaders")]
        elif lightning_name(imports, func) == "LightningCLI":
            handed = [a for a in call.args[1:2]] + [k.value for k in call.keywords if k.arg == "datamodule_class"]
            if not handed:
                return (f"{where}:{call.lineno}: `LightningCLI` may build any data module its configuration names, "
                        "whose code is not read")
            for value in handed:
                problem = _class_problem(value, path, tree, imports, classes, 0)
                if problem is not None:
                    return f"{where}:{call.lineno}: {problem}"
            continue
        for value in handed:
            problem = _data_problem(value, call, path, tree, imports, classes)
            if problem is not None:
                return f"{where}:{value.lineno}: {problem}"
    return None


def _trainer_like(receiver: ast.expr, at: ast.AST, tree: ast.Module, imports: ImportTable) -> bool:
    """The receiver of a ``fit``-like call is a Trainer: a name every binding of which builds one
    (``trainer = L.Trainer(...)``), or one called ``trainer`` (a parameter, ``self.trainer``)
    whatever binds it. Another ``fit`` (scikit-learn's ``clf.fit(X, y)``) takes no data module."""
    last = receiver.attr if isinstance(receiver, ast.Attribute) else receiver.id if isinstance(receiver, ast.Name) else None
    if last is not None and "trainer" in last.lower():
        return True
    if isinstance(receiver, ast.Call):
        return lightning_name(imports, receiver.func) == "Trainer"
    if isinstance(receiver, ast.Name):
        bound = _bindings(receiver.id, at, tree)
        return bool(bound) and all(isinstance(v, ast.Call) and lightning_name(imports, v.func) == "Trainer" for v in bound)
    return False


def _data_problem(value: ast.expr, at: ast.Call, path: str, tree: ast.Module, imports: ImportTable,
                  classes: ClassFiles, depth: int = 0) -> str | None:
    """Why ``value`` (handed to Lightning at ``at``) may be a data module that is not read."""
    if isinstance(value, ast.Constant) and value.value is None:
        return None
    if isinstance(value, (ast.List, ast.Tuple)):
        return next((p for p in (_data_problem(e, at, path, tree, imports, classes, depth)
                                 for e in value.elts) if p is not None), None)
    if isinstance(value, ast.Dict):
        return next((p for p in (_data_problem(v, at, path, tree, imports, classes, depth)
                                 for v in value.values) if p is not None), None)
    if isinstance(value, ast.Starred):
        return _data_problem(value.value, at, path, tree, imports, classes, depth)
    if isinstance(value, ast.Subscript):  # ``loaders()[0]``, ``splits["train"]``: a piece of what is read
        return _data_problem(value.value, at, path, tree, imports, classes, depth)
    if isinstance(value, ast.Call):
        source = _function_source(value.func, path, tree, imports, classes)
        if source is not None and depth < MAX_DEPTH:
            # A function of the program (``*loaders()``, ``mnist()`` of another file): what each
            # of its ``return``s hands back, read in its own file.
            function_path, function_tree, function_imports, function = source
            returns = [n for n in every_node(function) if isinstance(n, ast.Return)]
            if function.decorator_list or not returns or any(
                    isinstance(n, (ast.Yield, ast.YieldFrom)) for n in every_node(function)):
                return f"`{function.name}` ({os.path.basename(function_path)}:{function.lineno}) is not read"
            for r in returns:
                problem = _data_problem(r.value, r, function_path, function_tree, function_imports, classes, depth + 1)
                if problem is not None:
                    return problem
            return None
        qualified = imports.qualify(value.func) or ""
        if qualified.startswith("torch.utils.data.") or _a_loader(qualified):
            return None  # a loader: it has none of a data module's hooks
        if isinstance(value.func, ast.Attribute) and value.func.attr == "from_datasets" \
                and lightning_name(imports, value.func.value) == "LightningDataModule":
            return None
        return _class_problem(value.func, path, tree, imports, classes, 0)
    if isinstance(value, ast.Name) and depth < MAX_DEPTH:
        function = _parameter_of(value.id, at, tree)
        if function is not None:
            # A parameter of a function of the file: what each of its calls there hands it.
            calls = _calls_of(function, tree)
            if calls is None:
                return (f"`{value.id}` is a parameter of `{function.name}` (line {function.lineno}), which its "
                        "file does not only call: another file may hand it anything")
            for call in calls:
                bound = parameters_bound(function, call, instance=False)
                if bound is None or value.id not in bound:
                    return f"what `{function.name}(...)` (line {call.lineno}) hands `{value.id}` is not read"
                problem = _data_problem(bound[value.id], call, path, tree, imports, classes, depth + 1)
                if problem is not None:
                    return problem
            return None
        bound = _bindings(value.id, at, tree)
        if bound is None:
            return f"`{value.id}` is bound otherwise than by an assignment there (a loop, a `with`, an import): not read"
        for bound_value in bound:
            problem = _data_problem(bound_value, at, path, tree, imports, classes, depth + 1)
            if problem is not None:
                return problem
        return None
    return f"`{ast.unparse(value)[:40]}` is not read"


def _bindings(name: str, at: ast.AST, tree: ast.Module) -> list[ast.expr] | None:
    """The value of every binding of ``name`` in the scope of ``at`` (the innermost function that
    binds it, else the module): None where one is not an assignment (a parameter, a loop or
    ``with`` target, an import), or where none is seen. An unpacking (``train, val = loaders()``)
    gives the whole value: every piece of it is then asked about."""
    scopes = [n for n in every_node(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
              and any(m is at for m in every_node(n))]
    for scope in [*sorted(scopes, key=lambda s: -s.lineno), tree]:
        if not isinstance(scope, ast.Module):
            arguments = scope.args
            if name in {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                        *(x for x in (arguments.vararg, arguments.kwarg) if x is not None)]}:
                return None
        values: list[ast.expr] = []
        assigned: set[int] = set()
        nodes = every_node(scope)
        for node in nodes:
            if isinstance(node, ast.Assign):
                targets = [t for target in node.targets for t in every_node(target)
                           if isinstance(t, ast.Name) and t.id == name]
                if targets:
                    values.append(node.value)
                    assigned.update(id(t) for t in targets)
        for node in nodes:
            if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load) \
                    and id(node) not in assigned:
                return None  # a loop, ``with`` or walrus target, ``del``: not read
            if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    (alias.asname or alias.name).split(".")[0] == name for alias in node.names):
                return None
        if values:
            return values
    return None


def _class_problem(func: ast.expr, path: str, tree: ast.Module, imports: ImportTable, classes: ClassFiles,
                   depth: int) -> str | None:
    """Why the class ``func`` names (in the file at ``path``) may not derive from Lightning's data
    module through classes of the program alone, read: None where it does (or is a loader)."""
    qualified = imports.qualify(func) or ""
    if qualified.startswith("torch.utils.data.") or lightning_name(imports, func) == "LightningDataModule":
        return None
    if depth > MAX_DEPTH:
        return f"`{ast.unparse(func)[:40]}` is not read"
    if isinstance(func, ast.Name):
        defined = [s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == func.id]
        source = None
        if len(defined) == 1 and func.id not in imports.targets:
            source = (path, tree, imports, defined[0])
        elif not defined:
            source = classes.class_of(path, tree, func.id)
    elif isinstance(func, ast.Attribute):
        source = classes.attribute_definition(path, tree, imports, func, ast.ClassDef)
    else:
        source = None
    if source is not None:
        other_path, other_tree, other_imports, cls = source
        if cls.decorator_list or cls.keywords:
            return f"`{cls.name}` ({os.path.basename(other_path)}:{cls.lineno}) has a decorator or a metaclass"
        for base in cls.bases:
            if other_imports.qualify(base) in _INERT_BASES or (isinstance(base, ast.Name) and base.id == "object"):
                continue
            problem = _class_problem(base, other_path, other_tree, other_imports, classes, depth + 1)
            if problem is not None:
                return problem
        return None
    shown = qualified or ast.unparse(func)[:40]
    return f"`{shown}` is a class or function the program does not define, whose batch hooks are not read"


def _file_function(func: ast.expr, tree: ast.Module, imports: ImportTable) -> ast.FunctionDef | None:
    """The top-level function of the file a call's name means, defined once and bound no other
    way (not imported, not assigned); None otherwise."""
    if not isinstance(func, ast.Name) or func.id in imports.targets:
        return None
    defined = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
               and s.name == func.id]
    assigned = any(isinstance(n, ast.Name) and n.id == func.id and not isinstance(n.ctx, ast.Load)
                   for n in every_node(tree))
    if len(defined) != 1 or assigned or not isinstance(defined[0], ast.FunctionDef) or defined[0].decorator_list:
        return None
    return defined[0]


def _a_loader(qualified: str) -> bool:
    """A library's loader class, by its name (``torch_geometric.loader.DataLoader``): a loader has
    none of a data module's hooks, and libraries name their data modules ``...DataModule``."""
    last = qualified.rsplit(".", 1)[-1]
    return "." in qualified and last.endswith("Loader") and "Module" not in last


def _parameter_of(name: str, at: ast.AST, tree: ast.Module) -> ast.FunctionDef | None:
    """The top-level function of the file, not a method, whose parameter ``name`` is, where ``at``
    is in it and the function never binds the name again; None otherwise."""
    for function in tree.body:
        if isinstance(function, ast.FunctionDef) and any(n is at for n in every_node(function)):
            arguments = function.args
            if name not in {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}:
                return None
            rebound = any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                          for n in every_node(function))
            return None if rebound else function
    return None


def _calls_of(function: ast.FunctionDef, tree: ast.Module) -> list[ast.Call] | None:
    """Every call of the file's function ``function`` (by its name), where the file calls it and
    uses its name only so, and binds it once; None otherwise (it may be handed around, or called
    from another file: ``from train import run``)."""
    if _file_function(ast.Name(id=function.name), tree, ImportTable({})) is None:
        return None
    calls, uses = [], 0
    for node in every_node(tree):
        if isinstance(node, ast.Name) and node.id == function.name and isinstance(node.ctx, ast.Load):
            uses += 1
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == function.name:
            calls.append(node)
    return calls if calls and uses == len(calls) else None


def _function_source(func: ast.expr, path: str, tree: ast.Module, imports: ImportTable, classes: ClassFiles):
    """(path, tree, imports, definition) of the program's function a call's name means: one of the
    file (``_file_function``), or one another file of the program defines (``from .data import
    loaders``, ``model.class_files``); None otherwise."""
    function = _file_function(func, tree, imports)
    if function is not None:
        return path, tree, imports, function
    if isinstance(func, ast.Name):
        return classes.function_of(path, tree, func.id)
    if isinstance(func, ast.Attribute):
        return classes.attribute_definition(path, tree, imports, func, ast.FunctionDef)
    return None
