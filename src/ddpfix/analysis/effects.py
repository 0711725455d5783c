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
statement keeps its order among the statements that could observe it.

Reading an attribute or an item of an object, ``len`` of it or iterating it runs code of its class
(a property, ``__getattr__``, ``__getitem__``, ``__len__``, a descriptor's ``__get__``), which may
build tensors where the statement runs (a lazy ``__len__`` built the data in the block's bf16:
review round 15; a property of another file's class computed class weights in float64: review
helper-43). Such a read is known to run nothing of the kind only where the object's class is known
(``_known_read``, ``_handed_data_known``, read by Python's scoping from the bindings the read sees):

* a Python value (``tensor_free``), an attribute path of a listed library's modules
  (``torch.float64``, ``os.environ``), an object a listed library made (``torch.randn(...)``, a
  method of one, an item of one, an operator on them; not torch's data classes, which hold the
  user's objects, nor the loaders that unpickle), a builtin's container, an ``argparse`` namespace;
* a name bound in this file only to displays of such values, ``range(...)``, torch's data classes
  over such data, or a data class of the file that defines no read of that kind computing (no
  property, ``__getattr__``, ``__getitem__``, ``__len__`` that does more than return a pure
  expression, no class attribute of that name that may be a descriptor) and is built from objects
  whose reads are known (its ``len(self.labels)`` runs theirs).

An object of a class of another file, one handed in as a parameter or made by a function, an
attribute of another object (``DataLoader(data.train_set, shuffle=True)``) is not known.

Operators are NOT pure on values that may be tensors: ``len(dataset) / counts`` with an integer
tensor ``counts`` creates a tensor in the default dtype (float64 under ``init_module()`` with
``"64-true"``, bf16 with ``"bf16-true"``, float32 outside), ``x * 0.5`` too, and a comparison with a
Python float computes in it. So arithmetic (``+``, ``/``, ``-x``, ...), comparisons (but ``is``/
``is not``), augmented assignments and the builtins that compute with their arguments (``sum``,
``min``, ``max``) are pure only when every operand is *tensor-free*: a literal, an f-string, a
display (list, tuple, set, dict) of tensor-free values, ``len``/``int``/``float``/``bool``/``str``/
``isinstance`` of anything (they return Python values), a listed call of tensor-free arguments, an
operator on tensor-free operands, or a name the file binds only (everywhere, in every scope) by
plain assignments of tensor-free values (``batch_size = 32``; a parameter, a loop variable, an
import, an unpacking or an attribute is not known).

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
draw fails ("Expected a 'cuda' device type for generator"), on the CPU it is the same draw. Only
where the generator is known to be the CPU's (absent, ``torch.Generator()`` seeded or not, or a name
bound only to one): a CUDA generator draws inside a CUDA block and fails outside it.

A class of the file is known data when every base is ``torch.utils.data.Dataset``/
``IterableDataset`` or ``LightningDataModule`` (whose ``__init__`` only sets attributes:
lightning 2.6 ``core/datamodule.py``, ``core/hooks.py``, ``core/mixins/hparams_mixin.py``) or another
such class of the file; it is *pure* data when, besides, it has no decorator, metaclass,
``__new__``/``__setattr__``/``__init_subclass__``, no decorated method (a property's setter runs on a
plain store) nor class attribute other than a tensor-free value (it may be a descriptor, whose
``__set__`` runs on a store), and its ``__init__`` (if any) only stores its
arguments: plain stores ``self.x = x`` of a parameter (or of a tensor-free value, ``self.size =
28``), ``super().__init__(...)`` and ``self.save_hyperparameters(...)`` with pure arguments.
Anything else (``self.images = images / 255``, a call, an ``if``) makes it only *data*: arithmetic
on a stored uint8 tensor gives the block's default dtype inside and float32 outside.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ddpfix.ast_walk import child_nodes, walk
from ddpfix.imports import ImportTable, dotted_name
from ddpfix.analysis.names import bound_names, names_bound_at
from ddpfix.analysis.ast_shapes import every_node, parent_map, scope_map

PURE_BUILTINS = frozenset({
    "len", "range", "list", "tuple", "dict", "set", "frozenset", "int", "float", "str", "bool", "min", "max",
    "abs", "round", "sorted", "zip", "enumerate", "isinstance", "sum",
})
# Builtins that compute with their arguments (``sum`` adds, ``min``/``max`` compare): pure only on
# tensor-free arguments, as operators are.
COMPUTING_BUILTINS = frozenset({"sum", "min", "max"})
# Builtins whose result is a Python value whatever their argument (``len`` must return an int,
# ``float(t)`` of a tensor is a float).
PYTHON_VALUE_BUILTINS = frozenset({"len", "int", "float", "bool", "str", "isinstance"})
PURE_CALLS = frozenset({
    "os.path.join", "os.path.basename", "os.path.dirname", "os.path.splitext", "os.path.normpath", "os.fspath",
    "pathlib.Path", "pathlib.PurePath", "math.ceil", "math.floor", "math.sqrt", "math.log", "math.prod",
})
PURE_DATA = frozenset({
    "DataLoader", "TensorDataset", "Subset", "ConcatDataset", "SequentialSampler", "RandomSampler",
    "SubsetRandomSampler", "BatchSampler",
})
ORDERED_DATA = frozenset({"random_split"})
#: The packages whose functions return tensors and arrays (``torch.randn``,
#: ``torch.nn.functional.one_hot``, ``numpy.arange``): what they return is read by the library's own
#: code. An allowlist: ``torch.serialization.load``, ``torch.utils.data.Subset``, a ``ModuleList`` of
#: the user's modules hold objects of any class (review helper-44, c09).
_TENSOR_FUNCTION_PACKAGES = frozenset({
    "torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special", "numpy", "numpy.random",
    "numpy.linalg", "numpy.fft",
})
#: Functions of those packages that return (or hold) objects of any class: unpickling loaders,
#: object arrays built from what they are given, compiled callables.
_RETURNS_ANY_OBJECT = frozenset({
    "torch.load", "torch.compile", "numpy.load", "numpy.loadtxt", "numpy.genfromtxt", "numpy.fromfile", "numpy.array",
    "numpy.asarray", "numpy.asanyarray", "numpy.frompyfunc", "numpy.vectorize", "numpy.fromfunction",
    "numpy.apply_along_axis", "numpy.piecewise",
})
#: Libraries whose module attributes are plain reads (``torch.float64``, ``os.environ``,
#: ``torch.utils.data.DataLoader``): an attribute path through one of their modules runs no code
#: that builds tensors.
KNOWN_LIBRARIES = frozenset({
    "torch", "numpy", "math", "os", "sys", "pathlib", "lightning", "pytorch_lightning", "lightning_fabric",
    "torchvision", "argparse", "typing", "collections", "functools", "itertools", "string", "json", "re",
})
DATA_BASES = frozenset({"Dataset", "IterableDataset"})
_TORCH_DATA = ("torch.utils.data.",)
#: Data constructors that ask the length of the data they are given (torch 2.13: ``RandomSampler``'s
#: ``num_samples``, ``ConcatDataset``'s sizes, ``random_split``'s check; ``DataLoader`` through its
#: ``RandomSampler``).
_ASKS_LENGTH = frozenset({"DataLoader", "RandomSampler", "ConcatDataset", "random_split", "SubsetRandomSampler"})
#: Methods that make a read or a store more than a plain one: ``__getattr__`` builds what a read of
#: a missing attribute returns (``self.signal`` made lazily: review helper-46, c02).
_UNSAFE_DUNDERS = frozenset({"__new__", "__setattr__", "__init_subclass__", "__class_getitem__", "__getattr__",
                             "__getattribute__", "__delattr__", "__get__", "__set__"})
#: The methods of its data argument a call runs (``len(ds)``; ``DataLoader(ds, shuffle=True)``,
#: ``RandomSampler``, ``ConcatDataset``, ``random_split`` ask the length; ``list(ds)`` iterates):
#: they run where the statement runs, inside the block with its dtype and device (review round 15:
#: a ``__len__`` that built the data lazily made it bf16 there). ``ds[i]``: ``__getitem__``.
_LENGTH_READS = frozenset({"__len__"})
_ITERATION_READS = frozenset({"__len__", "__iter__", "__getitem__"})
_ITEM_READS = frozenset({"__getitem__"})
#: What an attribute read may run besides a property of that name (``__getattr__`` when the lookup
#: fails, ``__getattribute__`` always).
_ATTRIBUTE_READS = frozenset({"__getattr__", "__getattribute__"})
#: What a builtin or an f-string may run of the object it is handed: ``float(x)`` its ``__float__``,
#: ``str(x)`` its ``__str__``, ``sorted(x)`` its iteration and comparisons.
_CONVERSION_READS = frozenset({
    "__len__", "__iter__", "__getitem__", "__float__", "__int__", "__index__", "__bool__", "__str__", "__repr__",
    "__format__", "__round__", "__abs__", "__lt__", "__gt__", "__le__", "__ge__", "__eq__", "__hash__",
    "__complex__", "__next__", "__contains__",
})
_TRUTH_READS = frozenset({"__bool__", "__len__"})
_ITERATING_BUILTINS = frozenset({"list", "tuple", "sorted", "enumerate", "zip", "set", "frozenset", "dict", "sum",
                                 "min", "max", "any", "all"})


def torch_data_name(imports: ImportTable, func: ast.expr) -> str | None:
    """``DataLoader`` for ``torch.utils.data.DataLoader`` (or ``torch.utils.data.dataloader.DataLoader``)
    however the file imports it; else None."""
    qualified = imports.qualify(func)
    if qualified is None or not qualified.startswith(_TORCH_DATA):
        return None
    return qualified.rsplit(".", 1)[-1]




@dataclass
class Effects:
    """What one file tells about calls: its imports, its own names, its data classes."""

    imports: ImportTable
    tree: ast.Module
    lightning_name: object  # ``_lightning.lightning_name``
    bound: set[str] = field(default_factory=set)
    _classes: dict[str, list[ast.ClassDef]] = field(default_factory=dict)
    _data: dict[str, str | None] = field(default_factory=dict)  # class -> "pure"/"data"/None
    _tensor_free_names: set[str] | None = None
    _computing_bound: dict[frozenset[str], set[str] | None] = field(default_factory=dict)  # ``bound_to_computing``
    _plain_reads: dict[frozenset[str], dict[tuple, bool]] = field(default_factory=dict)  # ``_plainly_read``
    #: Inside a method of a data class being judged: the name of its instance (``self``), whose
    #: attributes are what its constructor stored (``_only_returns_a_read``).
    _instance: str | None = None

    @classmethod
    def of(cls, tree: ast.Module, imports: ImportTable, lightning_name) -> Effects:
        effects = cls(imports, tree, lightning_name, bound_names(tree))
        for node in every_node(tree):
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
            if self._computing_builtin(node.func) and not all(self.tensor_free(part) for part in parts):
                return node  # ``sum(counts, 0.0)``: arithmetic on what may be tensors
            if isinstance(node.func, ast.Name) and node.func.id in PURE_BUILTINS - {"len", "isinstance"} \
                    and node.func.id not in self.bound and not all(
                        self._handed_data_known(a.value if isinstance(a, ast.Starred) else a, _CONVERSION_READS)
                        for a in node.args):
                return node  # ``float(stats)`` runs its ``__float__`` (review helper-44, c08)
            if any(isinstance(part, ast.Lambda) for part in parts) or any(
                    k.arg == "key" and not self._builtin_function(k.value) for k in node.keywords):
                return node  # ``sorted(names, key=lambda c: torch.tensor(...))``: the key runs in the call (c18)
            if self.reads_run_code(node):
                return node  # ``DataLoader(ds, shuffle=True)`` runs ``len(ds)``: a ``__len__`` that computes
            return None
        if isinstance(node, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            return node
        if isinstance(node, ast.Lambda):
            # Building a function runs nothing of its body, but evaluates its defaults then:
            # ``lambda x, w=torch.tensor([1., 4.]): ...`` makes the tensor where it is built.
            for default in (*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)):
                found = self.unknown_in(default)
                if found is not None:
                    return found
            return None
        if isinstance(node, ast.BoolOp) and not all(self._truth_known(v) for v in node.values):
            return node  # ``x or default`` takes ``x``'s truth: its ``__bool__``
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and not self._truth_known(node.operand):
            return node
        if isinstance(node, ast.IfExp) and not self._truth_known(node.test):
            return node
        if isinstance(node, ast.FormattedValue) and not self._handed_data_known(node.value, _CONVERSION_READS):
            return node  # ``f"{stats}"`` runs its ``__format__``
        if isinstance(node, ast.Subscript) and not self._known_read(node.value, _ITEM_READS):
            return node  # ``ds[0]`` runs a ``__getitem__``, which may compute (review helper-43, c15)
        if isinstance(node, ast.Attribute) and not self._known_read(node.value, frozenset({node.attr, *_ATTRIBUTE_READS})):
            return node  # ``dm.class_weights`` may run a property that computes (review helper-42, c01; helper-43, c07)
        if isinstance(node, (ast.expr, ast.comprehension, ast.keyword, ast.expr_context, ast.boolop, ast.operator,
                             ast.unaryop, ast.cmpop)):
            for child in child_nodes(node):
                found = self.unknown_in(child)
                if found is not None:
                    return found
            operands = _operands(node)
            if operands is not None and not all(self.tensor_free(operand) for operand in operands):
                return node  # ``len(dataset) / counts``: a tensor in the context's default dtype
            return None
        return node

    def _known_read(self, value: ast.expr, reads: frozenset[str]) -> bool:
        """Reading an attribute or an item of ``value`` (``reads``: the methods such a read may run)
        is known to run no code of the user's that computes: ``value`` is a Python value
        (``tensor_free``), an attribute path of a listed library (``torch.float64``, ``os.environ``),
        the result of a listed pure call, or a name bound only to objects whose class's reads are
        known (``_plainly_read``). An object of any other class may run a property, ``__getattr__``
        or ``__getitem__`` that builds tensors where the statement runs: a class of another file, an
        object handed in as a parameter or made by a function (review helper-43, c07/c11/c14/c15)."""
        if self.tensor_free(value):
            return True
        if self._instance is not None and isinstance(value, ast.Name) and value.id == self._instance:
            return True  # the judged class's own reads are judged with it (``_computing_reads_in_lineage``)
        if self._instance is not None and _instance_attribute(value, self._instance):
            return True  # ``self.images[i]``: an item of what the constructor stored, asked of the call
        qualified = self.imports.qualify(value)
        if qualified is not None and qualified.split(".", 1)[0] in KNOWN_LIBRARIES:
            return True
        if isinstance(value, ast.Call):
            return self._returns_known_objects(value) or self._plain_value(value, reads)
        return isinstance(value, ast.Name) and self._plainly_read(value, reads)

    def _returns_known_objects(self, call: ast.Call) -> bool:
        """A call of a listed library (``torch.Generator()``, ``os.path.join(...)``) or a builtin that
        builds a container or a Python value (``list(...)``, ``sorted(...)``): what it returns is an
        object of a known class. Not ``min``/``max``/``sum``/``abs``/``round``: they return (or ask)
        their arguments' objects."""
        func = call.func
        if isinstance(func, ast.Name):
            return func.id in PURE_BUILTINS - COMPUTING_BUILTINS - {"abs", "round"} and func.id not in self.bound
        return self._library_object(call, frozenset())

    def _library_object(self, node: ast.expr, seen: frozenset[str]) -> bool:
        """``node`` evaluates to a tensor or an array (``torch.randn(...)``, a method of one:
        ``x.sum(dim=1)``, an item of one: ``y[:32]``, an operator on them, a name bound only to such)
        or a ``torch.Generator``, whose reads are the library's. Not what may hold the user's objects:
        torch's data classes (``Subset`` reads its dataset; asked by ``_plain_value``), modules and
        their containers, the loaders that unpickle (``torch.load``), ``collections.defaultdict``
        (its missing keys call the user's factory), object arrays."""
        if isinstance(node, ast.Call):
            qualified = self.imports.qualify(node.func)
            if qualified is not None:
                if qualified == "torch.Generator":
                    return True
                package, _, function = qualified.rpartition(".")
                return (package in _TENSOR_FUNCTION_PACKAGES and function[:1].islower()
                        and qualified not in _RETURNS_ANY_OBJECT)
            return isinstance(node.func, ast.Attribute) and self._library_object(node.func.value, seen)
        if isinstance(node, ast.Subscript):
            return self._library_object(node.value, seen)
        operands = _operands(node)
        if operands is not None:  # ``x[:, 0] > 0``: an operator on the library's objects (or Python values)
            return any(not self.tensor_free(o) for o in operands) and all(
                self.tensor_free(o) or self._library_object(o, seen) for o in operands)
        if isinstance(node, ast.Name) and node.id not in seen:
            values = self._visible_bindings(node)
            return bool(values) and all(v is not None and self._library_object(v, seen | {node.id}) for v in values)
        return False

    def _builtin_function(self, node: ast.expr) -> bool:
        """``len``, ``str``, ``abs``...: a builtin the file does not bind, handed as a callable."""
        return isinstance(node, ast.Name) and node.id in PYTHON_VALUE_BUILTINS | {"abs", "round"} and node.id not in self.bound

    def _truth_known(self, node: ast.expr) -> bool:
        """Taking the truth of ``node`` (``if x:``, ``not x``, ``x and y``) runs no code of the
        user's: a comparison or a Boolean operation (their parts are read as operators), or an object
        whose ``__bool__``/``__len__`` are known."""
        if isinstance(node, (ast.Compare, ast.BoolOp)) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
            return True
        return self._handed_data_known(node, _TRUTH_READS)

    def operator_on_tensors(self, node: ast.AST) -> bool:
        """``node`` (an answer of ``unknown_in``) is an operator, or ``sum``/``min``/``max``, whose
        operands may be tensors (its parts are otherwise pure)."""
        if isinstance(node, ast.Call):
            return self._computing_builtin(node.func) and self._pure_callee(node.func)
        return _operands(node) is not None or isinstance(node, ast.AugAssign)

    def _computing_builtin(self, func: ast.expr) -> bool:
        return isinstance(func, ast.Name) and func.id in COMPUTING_BUILTINS and func.id not in self.bound

    # --- tensor-free values -------------------------------------------------------------------

    def tensor_free(self, node: ast.AST) -> bool:
        """``node`` is known to evaluate to a Python value that is no tensor and holds none."""
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Name):
            return node.id in self._tensor_free()
        if isinstance(node, ast.JoinedStr):
            return True  # a str, whatever it formats
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return all(self.tensor_free(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(k is None or self.tensor_free(k) for k in node.keys) and all(
                self.tensor_free(v) for v in node.values)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in PYTHON_VALUE_BUILTINS and func.id not in self.bound:
                return True
            # A listed builtin (``max(1, n)``, ``list(...)``) or call (``math.ceil``, ``os.path.join``)
            # builds a Python value from its arguments: tensor-free when they are.
            listed = (isinstance(func, ast.Name) and func.id in PURE_BUILTINS and func.id not in self.bound) \
                or self.imports.qualify(func) in PURE_CALLS
            return listed and self._arguments_tensor_free(node)
        operands = _operands(node)
        if operands is not None:
            return all(self.tensor_free(operand) for operand in operands)
        if isinstance(node, ast.BoolOp):
            return all(self.tensor_free(v) for v in node.values)
        if isinstance(node, ast.IfExp):
            return self.tensor_free(node.body) and self.tensor_free(node.orelse)
        return False

    def _arguments_tensor_free(self, call: ast.Call) -> bool:
        return all(self.tensor_free(a.value if isinstance(a, ast.Starred) else a) for a in call.args) and all(
            self.tensor_free(k.value) for k in call.keywords)

    def _tensor_free(self) -> set[str]:
        """Names the file binds only by plain assignments (``n = ...``, ``n: int = ...``, ``n += ...``)
        of tensor-free values, in whatever scope: the greatest such set (a name assigned from another
        such name stays in it). A star import may bind any name: then none."""
        if self._tensor_free_names is not None:
            return self._tensor_free_names
        values = _plain_assignments(self.tree)
        names = set() if values is None else set(values)
        self._tensor_free_names = names
        # ``tensor_free`` only grows with ``names``, so the greatest set is reached by dropping a
        # name whose values are not tensor-free and then asking again only of the names whose
        # values mention it: each value is read a few times, not once per name dropped.
        readers: dict[str, set[str]] = {}
        for name in names:
            for value in values[name]:
                for node in walk(value):
                    if isinstance(node, ast.Name) and node.id in names:
                        readers.setdefault(node.id, set()).add(name)
        pending = sorted(names)
        while pending:
            name = pending.pop()
            if name in names and not all(self.tensor_free(value) for value in values[name]):
                names.discard(name)
                pending.extend(reader for reader in readers.get(name, ()) if reader in names)
        return names

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

    def reads_run_code(self, call: ast.Call) -> bool:
        """``len(x)``, or a data constructor that asks the length of the data it is given
        (``DataLoader``, ``RandomSampler``, ``ConcatDataset``, ``random_split``), handed a name the
        file binds to an object of one of its classes whose ``__len__`` (for iteration also
        ``__iter__``/``__getitem__``) computes: that code runs where the call runs."""
        func = call.func
        builtin = func.id if isinstance(func, ast.Name) and func.id not in self.bound else None
        if builtin == "len" or torch_data_name(self.imports, func) in _ASKS_LENGTH:
            reads = _LENGTH_READS
        elif builtin in _ITERATING_BUILTINS:
            reads = _ITERATION_READS
        else:
            return False
        if builtin is None:  # a data constructor: its data argument (the first, or ``dataset=``)
            data = [*call.args[:1], *(k.value for k in call.keywords if k.arg in ("dataset", "data_source", "datasets"))]
        else:
            data = list(call.args)
        names = {n.id for part in data for n in walk(part) if isinstance(n, ast.Name)}
        if names & self.bound_to_computing(reads):
            return True
        # An object whose class is not read may compute in its ``__len__`` too (a dataset imported
        # from another file, or made by a function: review helper-42, c02/c03): a name handed as the
        # data must be bound to one whose reads are known. (An attribute of an object, ``self.labels``
        # in a ``__len__``, is read as a value, like every attribute: see the module's docstring.)
        return not all(self._handed_data_known(part, reads) for part in data)

    def _handed_data_known(self, part: ast.expr, reads: frozenset[str]) -> bool:
        """The data handed (a name, a list or tuple of such written out, a call of a data class)
        is of a class whose ``reads`` are known: an attribute or item of another object
        (``DataLoader(data.train_set, shuffle=True)``, ``splits["train"]``) is an object of a class
        not read (review helper-43, c14)."""
        if self.tensor_free(part):
            return True  # a Python value: builtin reads
        if self._instance is not None and _instance_attribute(part, self._instance):
            return True  # ``len(self.labels)``: what the constructor stored, asked of the call (``_plain_value``)
        if isinstance(part, (ast.List, ast.Tuple)):
            return all(self._handed_data_known(element, reads) for element in part.elts)
        if isinstance(part, ast.Name):
            return self._plainly_read(part, reads)
        return isinstance(part, (ast.Call, ast.Constant)) and self._plain_value(part, reads)

    def _plainly_read(self, name: ast.Name, reads: frozenset[str]) -> bool:
        """Every binding of ``name`` in the file (one or more plain assignments, nothing else) is a
        display of literals or of such names, ``range(...)``, or a call of a class whose ``reads``
        are known not to compute: a data class of the file (its bases read up to torch's) that
        defines none of them computing, or a torch data class that stores what it is given
        (``TensorDataset``, ``Subset``, ...)."""
        values = self._visible_bindings(name)
        if name.id in self._changed_objects() and any(
                isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in self._classes for v in values):
            # An object of a class of the file holds what was stored into it after it was built
            # (``train_set.rows = LazyRows(n)``: review helper-44, c07), not only what its
            # constructor was handed. (A tensor's class stays a tensor's, whatever is done to it.)
            return False
        key = (name.id, tuple(id(v) for v in values))  # one name, the bindings this read sees
        cache = self._plain_reads.setdefault(reads, {})
        if key in cache:
            return cache[key]
        cache[key] = False  # while its bindings are judged (``a = [a]``)
        cache[key] = bool(values) and all(self._plain_value(v, reads) for v in values)
        return cache[key]

    def _plain_value(self, value: ast.expr | None, reads: frozenset[str]) -> bool:
        if value is None:
            return False
        if isinstance(value, ast.Constant):
            return True
        if isinstance(value, (ast.List, ast.Tuple)):
            return all(self._plain_value(e, reads) for e in value.elts)
        if isinstance(value, ast.Name):
            return self._plainly_read(value, reads)
        if not isinstance(value, ast.Call):
            return False
        func = value.func
        if isinstance(func, ast.Name) and func.id == "range" and "range" not in self.bound:
            return True
        if self._parsed_arguments(value):
            return True
        kind = torch_data_name(self.imports, func)
        if kind == "TensorDataset" or (kind == "random_split" and reads == _LENGTH_READS):
            return True  # its length is its first tensor's; a split's parts, Subsets, count their indices
        if kind in PURE_DATA:  # a loader, sampler or subset reads the data it is given
            data = [*value.args[:1], *(k.value for k in value.keywords if k.arg in ("dataset", "data_source", "datasets"))]
            return all(self._plain_value(part, reads) for part in data)
        if self._returns_known_objects(value):
            return True  # ``torch.randint(...)``: a tensor; ``list(...)``: a list
        # A pure data class of the file (its ``__init__`` only stores its arguments, no property,
        # decorated method or descriptor), whose reads do not compute, built from objects whose reads
        # are known: its reads of what it stored (``len(self.labels)``) run theirs. A class that
        # stores anything else (``self.rows = LazyRows(n)``), a ``cached_property``, a default that
        # is an object (review helper-44, c10/c06/c05) hold what is not read.
        return (isinstance(func, ast.Name) and self.data_class(func.id) == "pure"
                and not self._computing_reads_in_lineage(func.id, reads, frozenset())
                and not any(isinstance(a, ast.Starred) for a in value.args)
                and not any(k.arg is None for k in value.keywords)
                and all(self._handed_data_known(a, _ITERATION_READS)
                        for a in [*value.args, *(k.value for k in value.keywords)]))

    def _changed_objects(self) -> frozenset[str]:
        """Names whose object the file may change after it is built: an attribute or item stored
        through the name (``train_set.rows = ...``, ``del ds.cache``), a method called on it
        (``ds.load()``), or the name handed to a call that is not a listed pure one (``fill(ds)``,
        ``setattr(ds, ...)``): what the object holds is then not what its constructor was handed."""
        found = getattr(self.tree, "_ddpfix_changed_objects", None)
        if found is None:
            names: set[str] = set()
            parents = parent_map(self.tree)
            for node in every_node(self.tree):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and _escapes(node, parents):
                    names.add(node.id)  # an alias, a loop over it, a container, a return: changed through another name
                if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    root = node.value
                    while isinstance(root, (ast.Attribute, ast.Subscript)):
                        root = root.value
                    if isinstance(root, ast.Name):
                        names.add(root.id)
                elif isinstance(node, ast.Call):
                    if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                            and not self._pure_callee(node.func):
                        names.add(node.func.value.id)
                    if not self._pure_callee(node.func):
                        names.update(a.id for a in [*node.args, *(k.value for k in node.keywords)]
                                     if isinstance(a, ast.Name))
            found = self.tree._ddpfix_changed_objects = frozenset(names)
        return found

    def _parsed_arguments(self, call: ast.Call) -> bool:
        """``parser.parse_args(...)`` where ``parser`` is bound in the file only to
        ``argparse.ArgumentParser(...)``: an ``argparse.Namespace``, whose attributes are plain
        reads."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "parse_args" and isinstance(func.value, ast.Name)):
            return False
        if len(call.args) > 1 or any(k.arg in ("namespace", None) for k in call.keywords):
            return False  # ``parse_args(namespace=Settings())``: an object of the user's class (review helper-44, c04)
        values = self._visible_bindings(func.value)
        return bool(values) and all(isinstance(v, ast.Call) and self.imports.qualify(v.func) == "argparse.ArgumentParser"
                                    for v in values)

    def _bindings(self) -> dict[str, list[ast.expr | None]]:
        """Name -> the value of each binding of it in the file, any scope (None: a binding other than
        a plain assignment to the name alone: a parameter, a loop, an import, an unpacking...)."""
        return self._bindings_and_scopes()[0]

    def _bindings_and_scopes(self) -> tuple[dict[str, list[ast.expr | None]], dict[str, list[ast.AST]], set[str]]:
        """(``_bindings``, name -> the scope of each of those bindings in the same order, the names
        some scope declares ``global`` or ``nonlocal``)."""
        cached = getattr(self.tree, "_ddpfix_plain_bindings", None)
        if cached is not None:
            return cached
        scopes = scope_map(self.tree)
        found: dict[str, list[ast.expr | None]] = {}
        where: dict[str, list[ast.AST]] = {}
        declared: set[str] = set()
        plain: set[int] = set()

        def add(name: str, value: ast.expr | None, node: ast.AST) -> None:
            found.setdefault(name, []).append(value)
            where.setdefault(name, []).append(scopes.get(id(node), self.tree))

        for node in every_node(self.tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        add(target.id, node.value, node)
                        plain.add(id(target))
                    elif isinstance(target, (ast.Tuple, ast.List)) and _splits(node.value, self.imports) \
                            and all(isinstance(t, ast.Name) for t in target.elts):
                        for part in target.elts:  # ``train, val = random_split(...)``: each a Subset
                            add(part.id, node.value, node)
                            plain.add(id(part))
        for node in every_node(self.tree):
            if id(node) in plain:
                continue
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                declared.update(node.names)
            for bound in names_bound_at(node):
                add(bound, None, node)
        cached = self.tree._ddpfix_plain_bindings = (found, where, declared)
        return cached

    def _visible_bindings(self, name: ast.Name) -> list[ast.expr | None]:
        """The values of the bindings of ``name`` that the read may see, by Python's scoping: those
        of the innermost scope around it that binds the name (a function, then the functions around
        it, then the module; a class body only for its own statements). A parameter of another
        function, an ``__init__``'s ``images``, is not the module's ``images``. A name some function
        declares ``global`` or ``nonlocal`` may be any of its bindings."""
        bindings, bound_in, declared = self._bindings_and_scopes()
        values = bindings.get(name.id)
        if not values:
            return []
        if name.id in declared:
            return values
        where = bound_in[name.id]
        scopes = scope_map(self.tree)
        scope = scopes.get(id(name))
        if scope is None:
            return values  # a node made here, not the file's: every binding
        first = True
        while scope is not None:
            if first or not isinstance(scope, ast.ClassDef):
                seen = [v for v, s in zip(values, where) if s is scope]
                if seen:
                    return seen
            first = False
            scope = scopes.get(id(scope)) if not isinstance(scope, ast.Module) else None
        return []

    def bound_to_computing(self, reads: frozenset[str]) -> set[str]:
        """Names the file binds (anywhere) to a call of one of its classes that defines (or inherits)
        one of ``reads`` doing more than return a pure expression."""
        known = self._computing_bound.setdefault(reads, None)
        if known is None:
            self._computing_bound[reads] = set()  # while the classes' reads are judged (they may ask ``len``)
            readers = {name for name in self._classes if self._computing_reads_in_lineage(name, reads, frozenset())}
            # A name bound by a value that builds one anywhere in it: ``ds = Windows(...)``, ``a, b =
            # Windows(...), Windows(...)``, ``splits = {"train": Windows(...)}`` (then ``splits["train"]``
            # names ``splits``); and names bound from those (``train = splits["train"]``).
            known = set()
            while readers:
                found = {target.id for node in every_node(self.tree) if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr))
                         and node.value is not None and any(
                             (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in readers)
                             or (isinstance(n, ast.Name) and n.id in known) for n in walk(node.value))
                         for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                         for target in walk(target) if isinstance(target, ast.Name)}
                if found <= known:
                    break
                known |= found
            self._computing_bound[reads] = known
        return known

    def _computing_reads_in_lineage(self, name: str, reads: frozenset[str], seen: frozenset[str]) -> bool:
        """A class of the file named ``name`` defines one of ``reads`` to compute, or inherits one from
        a base of the file (``class TrainWindows(Windows)``; review round 16)."""
        if name in seen:
            return False
        for cls in self._classes.get(name, ()):
            if any(isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name in reads
                   and not self._only_returns_a_read(m) for m in cls.body):
                return True
            # A class attribute of that name that is not a Python value may be a descriptor whose
            # ``__get__`` computes (``pixels = PIXELS``: review helper-43, c18).
            if any(isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None and not self.tensor_free(s.value)
                   and any(isinstance(t, ast.Name) and t.id in reads
                           for t in (s.targets if isinstance(s, ast.Assign) else [s.target])) for s in cls.body):
                return True
            if any(isinstance(base, ast.Name) and self._computing_reads_in_lineage(base.id, reads, seen | {name})
                   for base in cls.bases):
                return True
        return False

    def _new_generator(self, node: ast.expr) -> bool:
        return (isinstance(node, ast.Call) and self.imports.qualify(node.func) == "torch.Generator"
                and not node.args and not node.keywords)

    def ordered_data_call(self, node: ast.Call) -> bool:
        """A known data call that keeps its meaning outside the block if it keeps its order: one that
        draws from the default CPU generator or from one known to be a CPU generator
        (``torch.Generator()``, seeded or not, or a name the file binds only to one). A generator of
        another device (``split_gen`` made with ``device="cuda"``) draws where the block puts the
        permutation: outside it the draw fails (review helper-42, c06)."""
        if torch_data_name(self.imports, node.func) not in ORDERED_DATA:
            return False
        generator = [*node.args[2:3], *(k.value for k in node.keywords if k.arg == "generator")]
        return all(self._cpu_generator(g) for g in generator) and not any(
            isinstance(a, ast.Starred) for a in node.args) and not any(k.arg is None for k in node.keywords)

    def _cpu_generator(self, node: ast.expr, seen: frozenset[str] = frozenset()) -> bool:
        """``torch.Generator()`` (``.manual_seed(n)`` on it), or a name bound in the file only to one."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "manual_seed":
            return self._cpu_generator(node.func.value, seen)
        if self._new_generator(node):
            return True
        if isinstance(node, ast.Name) and node.id not in seen:
            values = self._visible_bindings(node)
            return bool(values) and all(v is not None and self._cpu_generator(v, seen | {node.id}) for v in values)
        return False

    # --- statements -------------------------------------------------------------------------

    def unknown_in_statement(self, statement: ast.stmt) -> ast.AST | None:
        """The first part of ``statement`` not known to be pure (None: all of it is)."""
        if isinstance(statement, ast.Assign):
            parts = [*statement.targets, statement.value]
        elif isinstance(statement, ast.AugAssign):
            parts = [statement.target, statement.value]
            for part in parts:
                found = self.unknown_in(part)
                if found is not None:
                    return found
            # ``n += counts``: the operator on what may be tensors (the target read, the value).
            if not (self.tensor_free(_loaded(statement.target)) and self.tensor_free(statement.value)):
                return statement
            return None
        elif isinstance(statement, ast.AnnAssign):
            parts = [statement.target, *([statement.value] if statement.value is not None else [])]
        elif isinstance(statement, ast.Expr):
            parts = [statement.value]
        elif isinstance(statement, ast.Pass):
            parts = []
        elif isinstance(statement, ast.If):
            if not self._truth_known(statement.test):
                return statement.test  # ``if stats:`` runs its ``__bool__``
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
        # The file's rebound names in one walk, kept on its tree: asked for each class a call may
        # construct, a walk per name made a file with many classes quadratic.
        names = getattr(self.tree, "_ddpfix_rebound", None)
        if names is None:
            names = self.tree._ddpfix_rebound = _rebound_names(self.tree)
        return name in names

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
        # ``self.rows = rows`` runs a property's setter (``torch.as_tensor(value)``: review helper-42,
        # c04), a descriptor's ``__set__`` or ``__setattr__``: a decorated method or a class attribute
        # that may be a descriptor makes a store more than a store. Only a tensor-free value is known
        # not to be one: ``pixels = PIXELS`` may name a descriptor made elsewhere (review helper-43, c18).
        if any(m.decorator_list for m in methods.values()) or any(
                isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None and not self.tensor_free(s.value)
                for s in node.body):
            return "data"
        init = methods.get("__init__")
        if init is None:
            return "pure"
        if init.decorator_list or isinstance(init, ast.AsyncFunctionDef):
            return "data"
        # A default evaluated once, where the class is defined, may be an object of any class
        # (``rows=LazyRows(256)``: review helper-44, c05): only Python values keep it plain.
        if not all(self.tensor_free(d) for d in (*init.args.defaults, *(d for d in init.args.kw_defaults if d is not None))):
            return "data"
        parameters = _parameters(init)
        for statement in init.body:
            if _is_docstring(statement) or isinstance(statement, ast.Pass) or self._allowed_in_init(statement):
                continue
            if not self._plain_store(statement, parameters):
                return "data"
        return "pure"

    def _only_returns_a_read(self, method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """``return len(self.items)``, ``return self.size``, ``return self.x[index]``: one ``return``
        of a pure expression (no call but the listed ones, so no tensor made, no draw), undecorated
        or a plain ``@property``."""
        if isinstance(method, ast.AsyncFunctionDef) or any(dotted_name(d) != "property" for d in method.decorator_list):
            return False
        body = [s for s in method.body if not _is_docstring(s)]
        if not (len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None):
            return False
        # ``self.labels`` reads what the constructor stored: the call that builds the object is asked
        # for what it hands over (``_plain_value``), here only that the class runs nothing on the read.
        parameters = _parameters(method)
        outer, self._instance = self._instance, parameters[0] if parameters else None
        try:
            return self.unknown_in(body[0].value) is None
        finally:
            self._instance = outer

    def _plain_store(self, statement: ast.stmt, parameters: list[str]) -> bool:
        """``self.x = x`` (a parameter, not ``self``) or ``self.size = 28`` (a tensor-free value): the
        one way an ``__init__`` that "only stores its arguments" may store them."""
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target, value = statement.target, statement.value
        else:
            return False
        if not (parameters and isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and target.value.id == parameters[0]):
            return False
        if isinstance(value, ast.Name) and value.id in parameters[1:]:
            return True
        return self.unknown_in(value) is None and self.tensor_free(value)

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


def _operands(node: ast.AST) -> list[ast.expr] | None:
    """The operands of an operator that computes with them (None: not such an operator): ``a + b``,
    ``-a``, ``a < b`` (``not a``, ``a is b`` and ``a and b`` compute nothing with tensors)."""
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
        return [node.operand]
    if isinstance(node, ast.Compare) and not all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
        return [node.left, *node.comparators]
    return None


def _loaded(target: ast.expr) -> ast.expr:
    """The augmented target as the value it reads (``n`` of ``n += 1``)."""
    if isinstance(target, ast.Name):
        return ast.Name(id=target.id, ctx=ast.Load())
    return target  # an attribute or a subscript: not tensor-free


def _parameters(function: ast.FunctionDef) -> list[str]:
    """The parameter names in order, ``self`` first; names the body rebinds are left out (a store of
    one is then no longer a store of the argument)."""
    args = function.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    rebound = {n.id for s in function.body for n in walk(s)
               if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    if names and names[0] in rebound:
        return []
    return [names[0], *(n for n in names[1:] if n not in rebound)] if names else []


def _escapes(name: ast.Name, parents: dict) -> bool:
    """The object a name holds is handed to another name or place, through which it may be changed
    (``ds2 = train_set``, ``for split in (train_set, val_set): split.rows = ...``, a container, a
    return, a ``with``; review helper-46, c01): anything but a read of its attributes or items, a
    call's argument or receiver (calls are asked apart), a comparison or a test."""
    parent = parents.get(id(name))
    if isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is name:
        return False
    if isinstance(parent, (ast.IfExp, ast.If, ast.While, ast.Assert)) and parent.test is name:
        return False  # its truth is taken: the object stays where it is
    # ``alias = train_set or other`` and ``x if c else train_set`` hand the object on: escapes.
    return not isinstance(parent, (ast.Call, ast.keyword, ast.Compare, ast.UnaryOp, ast.Expr, ast.FormattedValue))


def _instance_attribute(node: ast.expr, instance: str) -> bool:
    """``self.x`` (``instance`` being ``self``)."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == instance


def _splits(value: ast.expr, imports: ImportTable) -> bool:
    """``random_split(...)``: a list of ``Subset``s, unpacked into names."""
    return isinstance(value, ast.Call) and torch_data_name(imports, value.func) == "random_split"


def _rebound_names(tree: ast.AST) -> frozenset[str]:
    """Names an import, an assignment, a ``del`` or a function definition binds anywhere in ``tree``."""
    names: set[str] = set()
    for node in every_node(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
    return frozenset(names)


def _plain_assignments(tree: ast.Module) -> dict[str, list[ast.expr]] | None:
    """The values of each name the file binds only by plain assignments (one ``Name`` target of
    ``=``, ``: T =`` or ``+=``), in whatever scope; None after a star import, which may bind any
    name. One pass: a statement comes before the ``Name`` it binds (``every_node`` is breadth
    first), so a binding that is no plain assignment is known as such when it is met."""
    values: dict[str, list[ast.expr]] = {}
    other: set[str] = set()
    plain: set[int] = set()  # ids of the Name nodes that are the one target of a plain assignment
    for node in every_node(tree):
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load) and id(node) not in plain:
                other.add(node.id)
        elif isinstance(node, ast.Assign):
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                values.setdefault(node.targets[0].id, []).append(node.value)
                plain.add(id(node.targets[0]))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            if isinstance(node.target, ast.Name) and node.value is not None:  # ``n: int`` binds nothing
                values.setdefault(node.target.id, []).append(node.value)
                plain.add(id(node.target))
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
                return None
            other.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler):
            if node.name:
                other.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)):
            if node.name:
                other.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            other.add(node.rest)
    return {name: found for name, found in values.items() if name not in other}
