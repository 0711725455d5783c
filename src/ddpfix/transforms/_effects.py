"""Which expressions and statements are known to be free of effects that matter when statements are
reordered, or moved out of a device context (``init_module()``, ``with torch.device(...)``).

An ALLOWLIST, not a denylist. A call that is not listed here is *unknown*: it may draw random
numbers (and so shift every later draw), read or write files, change global state (seeds, the
default device or dtype), build a model, or create tensors whose device and dtype depend on the
context it runs in. A denylist of known dangers (``torch.manual_seed``, ``torch.randn``, ...) can
never prove that an unknown call is harmless, so it proves nothing; this module only answers "yes,
known to be free of such effects" or "not known" (with the expression that was not known).

"Pure" here means: evaluating it draws no random numbers, does no I/O, changes no global state,
builds no ``nn.Module`` and creates no tensor (so its result is the same on whichever default device
or dtype it runs). It may raise (``TensorDataset`` checks sizes); a raise keeps its place when the
statement keeps its order among the statements that could observe it. Attribute reads, subscripts,
arithmetic and ``len``/``min``/... on user objects are taken as pure: they run ``__getattr__``,
``__len__``, ``__add__`` of the user's classes, which the name analysis, too, takes for reads (a
property that draws random numbers is not seen).

Listed calls, and why each is pure:
- builtins ``len``, ``range``, ``list``, ``tuple``, ``dict``, ``set``, ``frozenset``, ``int``,
  ``float``, ``str``, ``bool``, ``min``, ``max``, ``abs``, ``round``, ``sorted``, ``zip``,
  ``enumerate``, ``isinstance``, ``sum``: build Python values from their arguments; only when the
  file binds no name of that spelling (else the call is the file's own function).
- ``os.path.join``/``basename``/``dirname``/``splitext``/``normpath``, ``os.fspath``,
  ``pathlib.Path``/``PurePath`` (construction only): string manipulation, no file system access.
- ``math.ceil``/``floor``/``sqrt``/``log``/``prod``: arithmetic.
- ``torch.Generator()`` without arguments, and ``.manual_seed(n)`` called on it: a new CPU
  generator (a class, not one of the factories a device context redirects: it stays on the CPU under
  ``with torch.device(...)``), seeded; no global random state is touched.
- ``torch.utils.data`` constructors that only store their arguments and check them (torch 2.13
  sources): ``DataLoader`` (makes a ``RandomSampler``/``SequentialSampler``/``BatchSampler``; the
  shuffle draw, the base-seed draw and worker start happen in ``__iter__``, not here),
  ``TensorDataset`` (stores the given tensors, checks their first dimension), ``Subset``,
  ``ConcatDataset`` (``len`` of each part), ``SequentialSampler``, ``RandomSampler`` (stores the
  generator; ``len`` of the data), ``SubsetRandomSampler``, ``BatchSampler``. Not listed:
  ``WeightedRandomSampler`` (``torch.as_tensor`` of the weights: a tensor on the context's device),
  ``DistributedSampler`` (asks the process group), ``random_split`` (draws: see ``ORDERED_DATA``).

``ORDERED_DATA`` are known data calls with an effect that does not depend on the device context and
so may leave the block as long as they keep their order with every other statement:
``torch.utils.data.random_split`` draws its permutation from the CPU generator it is given
(``default_generator`` by default) whatever the default device; under a CUDA default device that
draw fails ("Expected a 'cuda' device type for generator"), on the CPU it is the same draw.

A class of the file is known data when every base is ``torch.utils.data.Dataset``/
``IterableDataset`` or ``LightningDataModule`` (whose ``__init__`` only sets attributes:
lightning 2.6 ``core/datamodule.py``, ``core/hooks.py``, ``core/mixins/hparams_mixin.py``) or another
such class of the file; it is *pure* data when, besides, it has no decorator, metaclass,
``__new__``/``__setattr__``/``__init_subclass__``, and its ``__init__`` (if any) holds only pure
statements (``super().__init__(...)`` and ``self.save_hyperparameters(...)`` allowed).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ddpfix.imports import ImportTable, dotted_name

PURE_BUILTINS = frozenset({
    "len", "range", "list", "tuple", "dict", "set", "frozenset", "int", "float", "str", "bool", "min", "max",
    "abs", "round", "sorted", "zip", "enumerate", "isinstance", "sum",
})
PURE_CALLS = frozenset({
    "os.path.join", "os.path.basename", "os.path.dirname", "os.path.splitext", "os.path.normpath", "os.fspath",
    "pathlib.Path", "pathlib.PurePath", "math.ceil", "math.floor", "math.sqrt", "math.log", "math.prod",
})
PURE_DATA = frozenset({
    "DataLoader", "TensorDataset", "Subset", "ConcatDataset", "SequentialSampler", "RandomSampler",
    "SubsetRandomSampler", "BatchSampler",
})
ORDERED_DATA = frozenset({"random_split"})
DATA_BASES = frozenset({"Dataset", "IterableDataset"})
_TORCH_DATA = ("torch.utils.data.",)
_UNSAFE_DUNDERS = frozenset({"__new__", "__setattr__", "__init_subclass__", "__class_getitem__"})


def torch_data_name(imports: ImportTable, func: ast.expr) -> str | None:
    """``DataLoader`` for ``torch.utils.data.DataLoader`` (or ``torch.utils.data.dataloader.DataLoader``)
    however the file imports it; else None."""
    qualified = imports.qualify(func)
    if qualified is None or not qualified.startswith(_TORCH_DATA):
        return None
    return qualified.rsplit(".", 1)[-1]


def bound_names(tree: ast.Module) -> set[str]:
    """Every name the file binds anywhere (assignments, definitions, parameters, imports, loops...)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                found.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
    return found


@dataclass
class Effects:
    """What one file tells about calls: its imports, its own names, its data classes."""

    imports: ImportTable
    tree: ast.Module
    lightning_name: object  # ``_lightning.lightning_name``
    bound: set[str] = field(default_factory=set)
    _classes: dict[str, list[ast.ClassDef]] = field(default_factory=dict)
    _data: dict[str, str | None] = field(default_factory=dict)  # class -> "pure"/"data"/None

    @classmethod
    def of(cls, tree: ast.Module, imports: ImportTable, lightning_name) -> Effects:
        effects = cls(imports, tree, lightning_name, bound_names(tree))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                effects._classes.setdefault(node.name, []).append(node)
        return effects

    # --- expressions ------------------------------------------------------------------------

    def unknown_in(self, node: ast.AST) -> ast.AST | None:
        """The first part of ``node`` not known to be pure (None: all of it is)."""
        if isinstance(node, ast.Call):
            if not self._pure_callee(node.func):
                return node
            if self.imports.qualify(node.func) == "torch.Generator" and (node.args or node.keywords):
                return node  # a device argument may name CUDA: ``torch.Generator()`` alone is the CPU's
            parts = [*node.args, *(k.value for k in node.keywords)]
            if not isinstance(node.func, ast.Name):
                parts.append(node.func)
            for part in parts:
                found = self.unknown_in(part)
                if found is not None:
                    return found
            return None
        if isinstance(node, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            return node
        if isinstance(node, ast.Lambda):
            return None  # building a function runs nothing of its body
        if isinstance(node, (ast.expr, ast.comprehension, ast.keyword, ast.expr_context, ast.boolop, ast.operator,
                             ast.unaryop, ast.cmpop)):
            for child in ast.iter_child_nodes(node):
                found = self.unknown_in(child)
                if found is not None:
                    return found
            return None
        return node

    def _pure_callee(self, func: ast.expr) -> bool:
        if self.imports.qualify(func) == "torch.Generator":
            return True  # arguments checked by the caller: ``torch.Generator()`` only (see below)
        if isinstance(func, ast.Attribute) and func.attr == "manual_seed" and self._new_generator(func.value):
            return True
        if isinstance(func, ast.Name) and func.id in PURE_BUILTINS and func.id not in self.bound:
            return True
        if self.imports.qualify(func) in PURE_CALLS:
            return True
        if torch_data_name(self.imports, func) in PURE_DATA:
            return True
        return isinstance(func, ast.Name) and self.data_class(func.id) == "pure"

    def _new_generator(self, node: ast.expr) -> bool:
        return (isinstance(node, ast.Call) and self.imports.qualify(node.func) == "torch.Generator"
                and not node.args and not node.keywords)

    def ordered_data_call(self, node: ast.Call) -> bool:
        """A known data call that keeps its meaning outside the block if it keeps its order."""
        return torch_data_name(self.imports, node.func) in ORDERED_DATA

    # --- statements -------------------------------------------------------------------------

    def unknown_in_statement(self, statement: ast.stmt) -> ast.AST | None:
        """The first part of ``statement`` not known to be pure (None: all of it is)."""
        if isinstance(statement, ast.Assign):
            parts = [*statement.targets, statement.value]
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
            parts = [statement.target, *([statement.value] if statement.value is not None else [])]
        elif isinstance(statement, ast.Expr):
            parts = [statement.value]
        elif isinstance(statement, ast.Pass):
            parts = []
        elif isinstance(statement, ast.If):
            parts = [statement.test]
            for inner in (*statement.body, *statement.orelse):
                found = self.unknown_in_statement(inner)
                if found is not None:
                    return found
        else:
            return statement
        for part in parts:
            found = self.unknown_in(part)
            if found is not None:
                return found
        return None

    # --- the file's classes -----------------------------------------------------------------

    def data_class(self, name: str, seen: frozenset[str] = frozenset()) -> str | None:
        """``"pure"`` (known data, construction free of effects), ``"data"`` (known data, not a
        model, but its construction is not known to be pure: it may draw random numbers or create
        tensors, whose generator and device depend on the context) or None (not known to be data)."""
        if name in self._data:
            return self._data[name]
        if name in seen:
            return None
        found = self._classes.get(name, [])
        # One class of that name, and no other binding of it (else which one a call means is unknown).
        verdict = None
        if len(found) == 1 and name not in self.imports.targets and not self._rebound(name):
            verdict = self._judge(found[0], seen | {name})
        self._data[name] = verdict
        return verdict

    def _rebound(self, name: str) -> bool:
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    (alias.asname or alias.name).split(".")[0] == name for alias in node.names):
                return True
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
                return True
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return True
        return False

    def _judge(self, node: ast.ClassDef, seen: frozenset[str]) -> str | None:
        if not node.bases:
            return None
        verdicts = []
        for base in node.bases:
            if torch_data_name(self.imports, base) in DATA_BASES:
                verdicts.append("pure")
            elif self.lightning_name(self.imports, base) == "LightningDataModule":
                verdicts.append("pure")
            elif isinstance(base, ast.Name):
                verdicts.append(self.data_class(base.id, seen))
            else:
                verdicts.append(None)
        if None in verdicts:
            return None
        if node.decorator_list or node.keywords:
            return "data"
        methods = {s.name: s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if set(methods) & _UNSAFE_DUNDERS or "data" in verdicts:
            return "data"
        init = methods.get("__init__")
        if init is None:
            return "pure"
        if init.decorator_list or isinstance(init, ast.AsyncFunctionDef):
            return "data"
        for statement in init.body:
            if _is_docstring(statement) or self._allowed_in_init(statement):
                continue
            if self.unknown_in_statement(statement) is not None:
                return "data"
        return "pure"

    def _allowed_in_init(self, statement: ast.stmt) -> bool:
        """``super().__init__(...)``, ``self.save_hyperparameters(...)`` with pure arguments."""
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
            return False
        call = statement.value
        func = call.func
        if not isinstance(func, ast.Attribute):
            return False
        arguments = [*call.args, *(k.value for k in call.keywords)]
        if any(self.unknown_in(a) is not None for a in arguments):
            return False
        if func.attr == "__init__" and isinstance(func.value, ast.Call) and dotted_name(func.value.func) == "super" \
                and "super" not in self.bound and not func.value.args:
            return True
        return func.attr == "save_hyperparameters" and dotted_name(func.value) == "self"


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)
