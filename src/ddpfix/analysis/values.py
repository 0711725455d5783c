"""Where a value comes from (issue 29, A.6): per rank, or already global.

A value is **global** when it is the same on every rank before anything logs it: the result of a
collective (``self.all_gather(x)``, ``trainer.strategy.reduce(x)``, a tensor handed to
``torch.distributed.all_reduce``/``broadcast``, the list ``torch.distributed.all_gather`` fills), a
torchmetrics ``Metric.compute()`` (it syncs the metric's state over every rank unless built with
``sync_on_compute=False`` or a ``process_group``), and what known pure operations make of global
values and constants (``gathered.sum()``, ``torch.mean(gathered) / 2``, ``acc.item()``).

A value is a **metric** when it is a torchmetrics ``Metric`` or ``MetricCollection`` object (or a
``ModuleDict``/``ModuleList``/dict of them, or ``.clone(...)`` of one): handed to ``self.log``, it is
computed (and synced) by torchmetrics itself, and Lightning ignores ``sync_dist`` for it.

Anything else is ``None`` here: per rank, or unknown — a rule asks its own proof about it. Only what is
proven is named: a class this module cannot resolve (a metric built by a factory, a class of another
file, an attribute set twice or through ``setattr``) is unknown, never "a metric".

Values are followed through the locals of one function, in order (an assignment, an in-place
collective, a call that may change an argument in place), through attributes every assignment of
which (in the class and the classes of the file it derives from) builds a metric, and through
simple expressions. The answers are kept on the nodes: a rule asks once per log.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

from ddpfix.analysis.ast_shapes import parent_map
from ddpfix.analysis.lightning import defined_elsewhere, derived
from ddpfix.ast_walk import child_nodes, walk, walk_outside_scopes
from ddpfix.imports import ImportTable
from ddpfix.records import record

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (*FUNCTIONS, ast.Lambda, ast.ClassDef)

GLOBAL = "global"
METRIC = "metric"
#: A container of metrics (``ModuleDict``/``ModuleList`` or a dict/list display of metrics): an item
#: of it is a metric.
METRICS = "metrics"

#: Tensor methods that compute on the tensor itself (no collective, no state outside it, no change
#: in place): a method of a global value gives a global value.
TENSOR_METHODS = frozenset({
    "mean", "sum", "nansum", "nanmean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "std", "var",
    "norm", "abs", "pow", "sqrt", "exp", "log", "log_softmax", "softmax", "sigmoid", "tanh", "relu", "neg",
    "add", "sub", "mul", "div", "float", "double", "half", "bfloat16", "long", "int", "bool", "item", "tolist",
    "detach", "cpu", "clone", "to", "type", "type_as", "view", "view_as", "reshape", "squeeze", "unsqueeze",
    "flatten", "t", "transpose", "permute", "contiguous", "round", "floor", "ceil", "clamp", "eq", "ne", "lt",
    "le", "gt", "ge", "all", "any", "count_nonzero", "size", "numel", "dim", "get", "logsumexp", "cumsum",
    "unique", "nonzero", "topk", "sort", "argsort", "isnan", "isinf", "isfinite", "nan_to_num", "bincount",
    "chunk", "split", "unbind", "sign", "flip", "roll", "expand", "expand_as", "repeat", "narrow", "masked_fill",
    "matmul", "mm", "bmm", "log1p", "square", "reciprocal", "median",
})
#: The same, and a dict's views (a dict of global values gives global values).
VALUE_METHODS = TENSOR_METHODS | {"values", "items", "keys"}
BUILTINS = frozenset({"len", "float", "int", "abs", "round", "min", "max", "sum", "bool"})
#: Builtins that turn numbers into a number the same on every rank where they are (``min(1.0, 0.1 *
#: self.current_epoch)``: a KL-annealing weight).
_SAME_VALUE_BUILTINS = frozenset({"float", "int", "abs", "round", "min", "max"})
#: Packages of functions that compute on their arguments alone (torchmetrics' functional API syncs
#: nothing: it is the class API that holds state and syncs); ``torch.<f>`` itself one level deep.
FUNCTION_PACKAGES = ("torch.nn.functional.", "torch.linalg.", "torch.special.", "torch.fft.", "torchmetrics.functional.")
NOT_PURE_TORCH = frozenset({"load", "from_file"})
#: ``numpy.<f>`` functions that change an argument in place or read or write files.
NOT_PURE_NUMPY = frozenset({"copyto", "put", "place", "putmask", "put_along_axis", "fill_diagonal", "load", "loadtxt",
                            "genfromtxt", "fromfile", "save", "savez", "savez_compressed", "savetxt", "memmap"})


def pure_function_name(qualified: str, numpy: bool = True) -> bool:
    """The qualified name of a function that computes on its arguments only: of the packages of
    ``FUNCTION_PACKAGES``, or ``torch.<f>`` (with ``numpy``, also ``numpy.<f>``) one level deep
    (``torch.distributed``, ``numpy.random`` are not), less those that load, save or change an
    argument (``torch.fill_``: a trailing underscore), private ones and classes."""
    head, _, rest = qualified.partition(".")
    last = qualified.rsplit(".", 1)[-1]
    if last.endswith("_") or last.startswith("_"):
        return False  # ``torch.fill_``, ``F.relu_``, ``torch._foreach_add_``: in place, or private
    if qualified.startswith(FUNCTION_PACKAGES):
        return True
    if not rest or "." in rest or rest[:1].isupper():
        return False
    return (head == "torch" and rest not in NOT_PURE_TORCH) or (
        numpy and head == "numpy" and rest not in NOT_PURE_NUMPY)

#: ``torch.distributed`` calls that leave their first argument the same on every rank (``op`` may be
#: anything: every rank gets the same result); the list ``all_gather`` fills is its first argument.
IN_PLACE_COLLECTIVES = {
    "torch.distributed.all_reduce": ("tensor", 0),
    "torch.distributed.broadcast": ("tensor", 0),
    "torch.distributed.all_gather": ("tensor_list", 0),
    "torch.distributed.all_gather_into_tensor": ("output_tensor", 0),
    "torch.distributed.all_gather_object": ("object_list", 0),
}
#: Keywords that make a collective's result not global (a sub-group) or not ready yet.
NOT_WORLD = frozenset({"group", "async_op", "process_group", "sync_grads_group"})
#: LightningModule methods / strategy methods that return a value global over the world.
MODULE_COLLECTIVES = frozenset({"all_gather"})
STRATEGY_COLLECTIVES = frozenset({"all_gather", "reduce", "broadcast"})
#: Keywords of a torchmetrics constructor that make its ``compute()`` not world-global.
LOCAL_COMPUTE = frozenset({"sync_on_compute", "process_group", "dist_sync_fn", "distributed_available_fn"})
#: torchmetrics classes that are not Metrics (``MetricTracker`` is a ``ModuleList``).
NOT_METRICS = frozenset({"MetricTracker"})
CONTAINERS = frozenset({"torch.nn.ModuleDict", "torch.nn.ModuleList"})


@record(frozen=True)
class Origin:
    """What a value is (``GLOBAL``, ``METRIC`` or ``METRICS``) and, in words, why."""

    kind: str
    how: str


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_name(node: ast.expr, name: str | None) -> bool:
    return name is not None and isinstance(node, ast.Name) and node.id == name


# --- classes and attributes ------------------------------------------------------------------


def metric_classes(tree: ast.Module, imports: ImportTable) -> frozenset[str]:
    """The file's own classes that derive (directly, or through the file's classes) from a
    torchmetrics ``Metric``. Kept on the tree."""
    known = tree.__dict__.get("_ddpfix_metric_classes")
    if known is None:
        def kind_of(base: ast.expr) -> str | None:
            qualified = imports.qualify(base) or ""
            return "metric" if qualified.startswith("torchmetrics.") and qualified.rsplit(".", 1)[-1] == "Metric" else None

        known = tree._ddpfix_metric_classes = frozenset(derived(tree, kind_of))
    return known


class ObjectKinds:
    """What the attributes of a class hold, as far as torchmetrics goes: ``self.<name>`` is a metric
    (or a container of metrics) when every assignment of it, in the class and the classes of the
    file it derives from, builds one (a local of the same method followed), and nothing else binds
    it (``setattr``, a tuple target, ``+=``...)."""

    def __init__(self, tree: ast.Module, lineage: list[ast.ClassDef], imports: ImportTable,
                 elsewhere: Mapping[str, frozenset[str]] | None = None, subclassed: bool = False):
        """``subclassed``: a class of the program may derive from the class (its methods, not read
        here, may put anything into a container the class holds)."""
        self.tree, self.imports = tree, imports
        self.own_metrics = metric_classes(tree, imports)
        #: The project's own Metric subclasses of other files (``ProjectFacts.of_kind("Metric")``).
        self.elsewhere = elsewhere or {}
        assigns: list[tuple[str, ast.expr, dict[str, ast.expr]]] = []
        #: What each ``self.<name>[k] = v``, ``self.<name>.append(v)``... puts into the attribute (None:
        #: what it puts is not read), with the method's locals.
        items: dict[str, list[tuple[ast.expr | None, dict[str, ast.expr]]]] = {}
        bound_otherwise: set[str] = set()
        escaped: set[str] = set()  # attributes handed on (``stats = self.stats``): changed where not read
        self.defined: set[str] = set()  # methods the seen classes define
        setattr_called = False
        for owner in lineage:
            for statement in owner.body:
                if isinstance(statement, FUNCTIONS):
                    self.defined.add(statement.name)
                elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
                    for target in (statement.targets if isinstance(statement, ast.Assign) else [statement.target]):
                        if isinstance(target, ast.Name):
                            self.defined.add(target.id)  # a class attribute: ``self.<name>`` may read it
            for method in owner.body:
                if not isinstance(method, FUNCTIONS):
                    continue
                escaped.update(_escaping_attributes(method))
                locals_ = single_bindings(method)
                for n in walk(method):
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr":
                        setattr_called = True
                    if isinstance(n, ast.Assign) or (isinstance(n, ast.AnnAssign) and n.value is not None):
                        # ``self.mse: MeanSquaredError = MeanSquaredError()`` binds as ``=`` does (review
                        # helper-43, c17); ``self.mse: MeanSquaredError`` alone binds nothing.
                        for target in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                            if isinstance(target, ast.Attribute) and _is_name(target.value, "self"):
                                assigns.append((target.attr, n.value, locals_))
                            else:
                                bound_otherwise.update(_stored_self_attributes(target))
                                for name, value in _item_stores(target, n.value):
                                    items.setdefault(name, []).append((value, locals_))
                    elif isinstance(n, ast.AnnAssign):
                        pass  # an annotation alone: no binding
                    elif isinstance(n, (ast.AugAssign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith,
                                        ast.NamedExpr, ast.Delete, ast.comprehension)):
                        bound_otherwise.update(_stored_self_attributes(n))
                        # What a loop, ``with``, ``+=`` or walrus binds (a deletion takes an item out).
                        target = None if isinstance(n, ast.Delete) else getattr(n, "target", None) or [
                            i.optional_vars for i in getattr(n, "items", ()) if i.optional_vars is not None]
                        for name, _ in _item_stores(target, None) if target else ():
                            items.setdefault(name, []).append((None, locals_))
                    elif isinstance(n, ast.Call):
                        for name, value in _items_added(n):
                            items.setdefault(name, []).append((value, locals_))
        self.attributes: dict[str, str] = {}
        if setattr_called:
            return
        for _ in range(4):  # ``self.b = self.a.clone()``: what ``self.a`` is, known from the pass before
            kinds: dict[str, set[str | None]] = {}
            for name, value, locals_ in assigns:
                if _empty_container(value, imports):
                    kinds.setdefault(name, set()).add(_EMPTY)
                    continue
                origin = self.constructed(value, locals_)
                kinds.setdefault(name, set()).add(origin.kind if origin else None)
            found = {}
            for name, k in kinds.items():
                if None in k or name in bound_otherwise or name in self.defined:
                    continue
                if k & {METRICS, _EMPTY} and (subclassed or name in escaped):
                    continue  # a container something else may put a tensor into (review helper-43, c05/c06)
                added = items.get(name, [])
                if k == {METRIC}:
                    added = [(v, locals_) for v, locals_ in added if v is not _UPDATED]
                if not added:  # built once and for all: a metric, or a container of metrics
                    if len(k) == 1 and _EMPTY not in k:
                        found[name] = next(iter(k))
                    continue
                # A container filled item by item (``self.per_key = nn.ModuleDict()``, then
                # ``self.per_key[k] = MeanMetric()``): of metrics where everything put in is one.
                put = [self.constructed(v, locals_) if v is not None and v is not _UPDATED else None for v, locals_ in added]
                if k <= {_EMPTY, METRICS} and all(o is not None and o.kind == METRIC for o in put):
                    found[name] = METRICS
            if found == self.attributes:
                break
            self.attributes = found

    def constructed(self, node: ast.expr, locals_: dict[str, ast.expr] | None = None, depth: int = 0) -> Origin | None:
        """A metric or container of metrics that ``node`` builds (``__init__``'s shapes)."""
        if depth > 8:
            return None
        again = lambda n: self.constructed(n, locals_, depth + 1)  # noqa: E731
        if isinstance(node, ast.Name) and locals_ is not None and node.id in locals_:
            return again(locals_[node.id])
        if isinstance(node, ast.Attribute) and _is_name(node.value, "self"):
            kind = self.attributes.get(node.attr)
            return Origin(kind, f"`self.{node.attr}`") if kind else None
        if isinstance(node, (ast.Dict, ast.List, ast.Tuple)):
            items = node.values if isinstance(node, ast.Dict) else node.elts
            if isinstance(node, ast.Dict) and any(k is None for k in node.keys):
                return None
            if items and all((o := again(v)) is not None and o.kind == METRIC for v in items):
                return Origin(METRICS, "a container of torchmetrics objects")
            return None
        if isinstance(node, (ast.DictComp, ast.ListComp)):
            element = again(node.value if isinstance(node, ast.DictComp) else node.elt)
            return Origin(METRICS, "a container of torchmetrics objects") if element and element.kind == METRIC else None
        if not isinstance(node, ast.Call):
            return None
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return None
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "clone":
            inner = again(func.value)
            return Origin(inner.kind, f"a clone of {inner.how}") if inner is not None and inner.kind == METRIC else None
        qualified = self.imports.qualify(func) or ""
        short = qualified.rsplit(".", 1)[-1]
        if qualified in CONTAINERS:
            if not node.args:
                return None
            inner = again(node.args[0])
            return Origin(METRICS, f"`{short}` of torchmetrics objects") if inner and inner.kind == METRICS else None
        if qualified.startswith("torchmetrics.") and short == "MetricCollection":
            return Origin(METRIC, "a torchmetrics `MetricCollection`")
        is_metric_class = (qualified.startswith("torchmetrics.") and short[:1].isupper() and short not in NOT_METRICS
                           and not qualified.startswith(("torchmetrics.functional.", "torchmetrics.utilities.")))
        if not is_metric_class and isinstance(func, ast.Name) and func.id in self.own_metrics:
            is_metric_class, short = True, func.id
        if not is_metric_class and self.elsewhere and defined_elsewhere(func, self.imports, self.elsewhere):
            is_metric_class, short = True, (qualified or getattr(func, "id", "")).rsplit(".", 1)[-1]
        if not is_metric_class:
            return None
        if any(k.arg in LOCAL_COMPUTE for k in node.keywords):
            return None  # its compute() may be this rank's (or a group's) own
        return Origin(METRIC, f"a torchmetrics `{short}`")


#: An attribute bound to an empty container, in ``ObjectKinds`` alone (never a value's origin).
_EMPTY = "empty container"
_EMPTY_CONTAINERS = frozenset({"torch.nn.ModuleDict", "torch.nn.ModuleList"})
#: A container's methods that put the value they are handed last into it.
_ITEM_PUTTERS = frozenset({"append", "insert", "add_module", "register_module", "__setitem__", "setdefault"})
#: ``self.<name>.update(...)`` handed no mapping written out: any items (of a container), or a Metric's
#: own update of its state.
_UPDATED = ast.Constant(value=None)


def _empty_container(node: ast.expr, imports: ImportTable) -> bool:
    """``nn.ModuleDict()``, ``nn.ModuleList()``, ``{}``, ``[]``: a container with nothing in it yet."""
    if isinstance(node, ast.Dict):
        return not node.keys
    if isinstance(node, ast.List):
        return not node.elts
    return isinstance(node, ast.Call) and not node.args and not node.keywords and (
        imports.qualify(node.func) in _EMPTY_CONTAINERS)


def _self_item(node: ast.AST) -> str | None:
    """``self.<name>[k]``: the attribute whose item it is."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and _is_name(node.value.value, "self"):
        return node.value.attr
    return None


def _item_stores(node: ast.AST, value: ast.expr | None) -> list[tuple[str, ast.expr | None]]:
    """The attributes whose items ``node`` (a target, or a statement) stores into, each with what it
    puts there: ``value`` where the target is ``self.<name>[k]`` itself, else None (a tuple target,
    ``+=``, a loop's target, ``self.<name>[k][j] = v``: what ends up in the item is not read)."""
    found: list[tuple[str, ast.expr | None]] = []
    for n in (walk(node) if isinstance(node, ast.AST) else (m for each in node for m in walk(each))):
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store):
            root = n
            while isinstance(root, ast.Subscript) and _self_item(root) is None:
                root = root.value
            name = _self_item(root)
            if name is not None:
                found.append((name, value if n is node else None))
    return found


def _items_added(call: ast.Call) -> list[tuple[str, ast.expr | None]]:
    """What a call of a container's method on ``self.<name>`` puts into it: ``append(v)``,
    ``insert(i, v)``, ``add_module(name, v)``, ``update({k: v})``, ``update(k=v)``, ``extend([v])``
    (None: a value not read; ``_UPDATED``: ``update`` of another mapping, which is a Metric's own
    ``update(preds, target)`` on a metric)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute) and _is_name(func.value.value, "self")):
        return []
    name, method = func.value.attr, func.attr
    starred = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
    if method in _ITEM_PUTTERS and call.args and not starred:
        return [(name, call.args[-1])]
    if method == "update" and not starred and isinstance(func.value, ast.Attribute):
        if not call.args and call.keywords:
            return [(name, k.value) for k in call.keywords]
        if len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.Dict) \
                and None not in call.args[0].keys:
            return [(name, v) for v in call.args[0].values]
        return [(name, _UPDATED)]  # another mapping (or a Metric's own ``update(preds, target)``)
    if method == "extend":
        if len(call.args) == 1 and isinstance(call.args[0], (ast.List, ast.Tuple)) and not starred:
            return [(name, e) for e in call.args[0].elts]
        return [(name, None)]
    return []  # a read (``items()``, ``compute()``), or an item taken out (``pop``, ``clear``)


#: Methods of a container that only read it.
_READING_METHODS = frozenset({"items", "values", "keys", "get", "__contains__", "__len__", "__iter__", "__getitem__"})


def _escaping_attributes(method: ast.AST) -> set[str]:
    """The attributes of ``self`` the method hands on as objects, where code may change what they
    hold: passed to a call other than ``self.log``/``self.log_dict``, ``len`` and ``isinstance``,
    returned, yielded or put into a container; or bound to a local name (``stats = self.stats``)
    that is then used otherwise than to read it (``stats[name] = value``, ``stats.update(...)``, handed
    on). An item or attribute of it, a test, a loop over it are reads."""
    parents = parent_map(method)
    aliases: dict[str, str] = {}
    found: set[str] = set()

    def handed_on(node: ast.expr, alias: bool) -> bool:
        parent = parents.get(id(node))
        if isinstance(parent, ast.Subscript) and parent.value is node:
            return alias and not isinstance(parent.ctx, ast.Load)  # a store through the alias
        if isinstance(parent, ast.Attribute) and parent.value is node:
            call = parents.get(id(parent))
            called = isinstance(call, ast.Call) and call.func is parent
            return alias and called and parent.attr not in _READING_METHODS
        if isinstance(parent, ast.Compare) or (isinstance(parent, (ast.comprehension, ast.For, ast.AsyncFor))
                                               and parent.iter is node):
            return False
        if isinstance(parent, ast.Call) and node in parent.args and (
                (isinstance(parent.func, ast.Attribute) and parent.func.attr in ("log", "log_dict")
                 and _is_name(parent.func.value, "self"))
                or (isinstance(parent.func, ast.Name) and parent.func.id in ("len", "isinstance"))):
            return False
        return True

    for node in walk(method):
        if isinstance(node, ast.Attribute) and _is_name(node.value, "self") and isinstance(node.ctx, ast.Load):
            parent = parents.get(id(node))
            if isinstance(parent, ast.Assign) and parent.value is node and all(
                    isinstance(t, ast.Name) for t in parent.targets):
                for target in parent.targets:
                    aliases[target.id] = node.attr
            elif handed_on(node, alias=False):
                found.add(node.attr)
    for node in walk(method):
        if isinstance(node, ast.Name) and node.id in aliases:
            if not isinstance(node.ctx, ast.Load) and not (isinstance(parents.get(id(node)), ast.Assign)
                                                           and parents[id(node)].value is not node):
                found.add(aliases[node.id])  # bound otherwise too (a loop's target): not known
            elif isinstance(node.ctx, ast.Load) and handed_on(node, alias=True):
                found.add(aliases[node.id])
    return found


def _stored_self_attributes(node: ast.AST) -> list[str]:
    return [n.attr for n in walk(node) if isinstance(n, ast.Attribute) and _is_name(n.value, "self")
            and isinstance(n.ctx, (ast.Store, ast.Del))]


def single_bindings(method: ast.AST) -> dict[str, ast.expr]:
    """Locals of ``method`` bound exactly once, by a plain ``name = value`` (nested scopes left out)."""
    known = method.__dict__.get("_ddpfix_single_bindings")
    if known is not None:
        return known
    values: dict[str, list[ast.expr | None]] = {}
    for n in walk_outside_scopes(method):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            values.setdefault(n.targets[0].id, []).append(n.value)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            values.setdefault(n.id, []).append(None)
    found = {}
    for name, bound in values.items():
        plain = [v for v in bound if v is not None]
        # every Assign target Name also shows up as a Store name: one binding is [value, None]
        if len(plain) == 1 and len(bound) == 2:
            found[name] = plain[0]
    method._ddpfix_single_bindings = found
    return found



# --- values in a function ---------------------------------------------------------------------


class FunctionValues:
    """The origin of values in one function (a hook of a LightningModule, or a Callback's hook), at
    a given statement: locals followed in order from the function's start.

    ``module`` is the name that stands for the LightningModule (``self`` in its own methods, the
    ``pl_module`` parameter in a Callback's hook); ``trainer`` the name of a Trainer (a Callback's
    ``trainer`` parameter) or None (then ``<module>.trainer``)."""

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef, kinds: ObjectKinds | None,
                 imports: ImportTable, module: str | None = "self", trainer: str | None = None,
                 module_collectives: bool = True):
        self.function, self.kinds, self.imports = function, kinds, imports
        self.module, self.trainer = module, trainer
        #: ``<module>.all_gather`` is Lightning's (no class seen defines its own).
        self.module_collectives = module_collectives
        # A name a nested function or lambda reads may be changed whenever it is called.
        self.closed_over = {inner.id for n in walk(function) if n is not function and isinstance(n, SCOPES)
                            for inner in walk(n) if isinstance(inner, ast.Name)}
        self.local_names = {n.id for n in walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        self._states: dict[int, dict[str, Origin | None]] = {}
        self._statement_of: dict[int, ast.stmt] | None = None

    # The state before each statement of the function (at any depth), built in one pass.

    def at(self, statement: ast.stmt) -> dict[str, Origin | None]:
        """Origins of the locals just before ``statement`` runs (a statement of the function, at any
        depth); names absent are unknown."""
        if not self._states:
            self._run(self.function.body, {})
        return self._states.get(id(statement), {})

    def origin(self, node: ast.expr, within: ast.expr | None = None) -> Origin | None:
        """The origin of ``node`` where it stands in the function (or where ``within``, an
        expression of the function, stands: for a node built from one, as a log through a partial)."""
        statement = self.statement_of(within if within is not None else node)
        return None if statement is None else self.evaluate(node, self.at(statement))

    def same_on_every_rank(self, node: ast.expr) -> bool:
        """``node`` is the same on every rank at every step of an epoch: a number written out,
        Lightning's epoch counter (``<module>.current_epoch``, ``<module>.trainer.current_epoch``, a
        Callback's ``trainer.current_epoch``: the loops of every rank advance it together), or
        arithmetic of these (``self.current_epoch * 2``, ``float(0)``). Not where the class or a
        class of its file defines ``current_epoch`` or ``trainer`` itself, nor through a module of
        a class not read (a Callback's ``pl_module``), nor through a name the function binds."""
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (int, float)) and not isinstance(node.value, complex)
        if isinstance(node, ast.UnaryOp):
            return self.same_on_every_rank(node.operand)
        if isinstance(node, ast.BinOp):
            return self.same_on_every_rank(node.left) and self.same_on_every_rank(node.right)
        if isinstance(node, ast.Call):
            return (isinstance(node.func, ast.Name) and node.func.id in _SAME_VALUE_BUILTINS
                    and node.func.id not in self.local_names and not node.keywords and bool(node.args)
                    and all(self.same_on_every_rank(a) for a in node.args))
        if not (isinstance(node, ast.Attribute) and node.attr == "current_epoch"):
            return False
        owner = node.value
        if self.trainer is not None and _is_name(owner, self.trainer):
            return self.trainer not in self.local_names
        if isinstance(owner, ast.Attribute) and owner.attr == "trainer":
            owner = owner.value
        return (self.module == "self" and _is_name(owner, "self") and "self" not in self.local_names
                and self.kinds is not None and not {"current_epoch", "trainer"} & self.kinds.defined)

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        """The innermost statement of the function that holds ``node`` (nested scopes left out)."""
        if self._statement_of is None:
            found: dict[int, ast.stmt] = {}
            pending: list[tuple[ast.AST, ast.stmt | None]] = [(s, None) for s in self.function.body]
            while pending:
                current, statement = pending.pop()
                if isinstance(current, ast.stmt):
                    statement = current
                if statement is not None:
                    found[id(current)] = statement
                if isinstance(current, SCOPES) and current is not statement:
                    continue
                pending.extend((child, statement) for child in child_nodes(current))
            self._statement_of = found
        return self._statement_of.get(id(node))

    def _run(self, block: list[ast.stmt], state: dict[str, Origin | None]) -> None:
        """Interpret ``block`` from ``state`` (changed in place), recording each statement's state. A
        compound statement's blocks start from what is known on entering them; after it, what it
        binds or may change is unknown."""
        for statement in block:
            self._states[id(statement)] = dict(state)
            if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
                # A later iteration sees what the earlier ones did: what the loop binds is unknown.
                entry = dict(state)
                self._calls(statement, entry)
                self._forget(statement, entry)
                for inner in _blocks(statement):
                    self._run(inner, {**entry, **self._loop_metrics(statement, entry)} if inner is statement.body
                              else dict(entry))
            elif isinstance(statement, (ast.With, ast.AsyncWith)):
                entry = dict(state)
                for item in statement.items:
                    self._calls(item.context_expr, entry)
                    if item.optional_vars is not None:
                        self._forget(item.optional_vars, entry)
                self._run(statement.body, entry)
            elif isinstance(statement, ast.If):
                entry = dict(state)
                self._calls(statement.test, entry)
                self._forget(statement.test, entry)
                for inner in _blocks(statement):
                    self._run(inner, dict(entry))
            elif isinstance(statement, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                self._run(statement.body, dict(state))
                after = dict(state)  # a handler, ``else`` or ``finally``: the body may have run, or part of it
                self._calls(statement.body, after)
                self._forget(statement.body, after)
                for inner in _blocks(statement)[1:]:
                    self._run(inner, dict(after))
            elif isinstance(statement, ast.Match):
                entry = dict(state)
                self._calls(statement, entry)
                self._forget(statement, entry)
                for inner in _blocks(statement):
                    self._run(inner, dict(entry))
            self._step(statement, state)

    def _loop_metrics(self, loop: ast.stmt, entry: dict[str, Origin | None]) -> dict[str, Origin]:
        """What each iteration of ``for v in <metrics>.values()`` or ``for k, v in <metrics>.items()``
        binds at its start, where ``<metrics>`` holds torchmetrics objects alone and the loop changes
        nothing it reads (``entry``: the state the loop's body starts from, what the loop may change
        forgotten): ``v`` is one of them."""
        if not isinstance(loop, (ast.For, ast.AsyncFor)) or not isinstance(loop.iter, ast.Call):
            return {}
        func = loop.iter.func
        if loop.iter.args or loop.iter.keywords or not isinstance(func, ast.Attribute) or func.attr not in ("values", "items"):
            return {}
        container = self.evaluate(func.value, entry)
        if container is None or container.kind != METRICS:
            return {}
        target = loop.target
        if func.attr == "items":
            if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
                return {}
            target = target.elts[1]
        if not isinstance(target, ast.Name) or target.id in self.closed_over:
            return {}
        return {target.id: Origin(METRIC, container.how)}

    def _step(self, statement: ast.stmt, state: dict[str, Origin | None]) -> None:
        """What ``statement`` (run whole) does to the locals."""
        if isinstance(statement, ast.Assign) and all(isinstance(t, ast.Name) for t in statement.targets):
            self._calls(statement.value, state)
            origin = self.evaluate(statement.value, state)
            for target in statement.targets:
                state[target.id] = origin
            return
        if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
            self._calls(statement.value, state)
            name = statement.target.id
            value = ast.BinOp(left=ast.Name(id=name, ctx=ast.Load()), op=statement.op, right=statement.value)
            state[name] = self.evaluate(value, state)
            return
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            made_global = self._in_place_collective(statement.value, state)
            if made_global is not None:
                name, how = made_global
                state[name] = Origin(GLOBAL, how)
                return
        self._calls(statement, state)
        self._forget(statement, state)

    def _in_place_collective(self, call: ast.Call, state) -> tuple[str, str] | None:
        qualified = self.imports.qualify(call.func)
        if qualified not in IN_PLACE_COLLECTIVES:
            return None
        keyword, position = IN_PLACE_COLLECTIVES[qualified]
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None or k.arg in NOT_WORLD for k in call.keywords):
            return None
        if len(call.args) > 2:
            return None  # a group (or async_op) by position
        named = next((k.value for k in call.keywords if k.arg == keyword), None)
        target = named if named is not None else (call.args[position] if len(call.args) > position else None)
        if not isinstance(target, ast.Name) or target.id in self.closed_over:
            return None
        return target.id, f"`{target.id}` is reduced over every rank by `{_short(call)}` (line {call.lineno})"

    def _forget(self, node, state: dict[str, Origin | None]) -> None:
        """Every local ``node`` (a node or a list) binds or deletes is unknown now."""
        for n in _walk_all(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                state.pop(n.id, None)
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                for name in n.names:
                    state.pop(name, None)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                for alias in n.names:
                    state.pop((alias.asname or alias.name).split(".")[0], None)
            elif isinstance(n, (*FUNCTIONS, ast.ClassDef)):
                state.pop(n.name, None)
            elif isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, (ast.Store, ast.Del)):
                root = n
                while isinstance(root, (ast.Attribute, ast.Subscript)):
                    root = root.value
                if isinstance(root, ast.Name):
                    state.pop(root.id, None)  # ``g[0] = v`` changes what ``g`` holds

    def _calls(self, node, state: dict[str, Origin | None]) -> None:
        """A call not known to leave its arguments alone may change them in place: what they hold
        is unknown after it (``x.add_(y)``, ``helper(g)``)."""
        calls = [n for n in _walk_all(node) if isinstance(n, ast.Call)]
        for n in calls:
            if self._leaves_arguments(n):
                continue
            roots = [*n.args, *(k.value for k in n.keywords)]
            if isinstance(n.func, ast.Attribute):
                roots.append(n.func.value)
            for root in roots:
                while isinstance(root, (ast.Attribute, ast.Subscript, ast.Starred)):
                    root = root.value
                if isinstance(root, ast.Name):
                    state.pop(root.id, None)
        # A closure may change what it closed over whenever it is called.
        if calls:
            for name in self.closed_over:
                state.pop(name, None)

    def _leaves_arguments(self, call: ast.Call) -> bool:
        func = call.func
        if isinstance(func, ast.Attribute):
            if func.attr in ("log", "log_dict") and _is_name(func.value, self.module):
                return True
            if func.attr in VALUE_METHODS and self.imports.qualify(func) is None:
                return True
            if self._module_collective(call) is not None or self._compute(call) is not None:
                return True
        if isinstance(func, ast.Name) and func.id in BUILTINS:
            return True
        return self._pure_function(func)

    def _pure_function(self, func: ast.expr) -> bool:
        qualified = self.imports.qualify(func)
        if qualified is None:
            return False
        return pure_function_name(qualified, numpy=False)

    # Expressions.

    def evaluate(self, node: ast.expr, state: dict[str, Origin | None]) -> Origin | None:
        """The origin of ``node`` given the locals' ``state``; None: per rank, or unknown."""
        if isinstance(node, ast.Name):
            return state.get(node.id) if node.id not in self.closed_over else None
        if isinstance(node, ast.NamedExpr):
            return self.evaluate(node.value, state)
        if isinstance(node, ast.Attribute):
            if _is_name(node.value, "self") and self.module == "self" and self.kinds is not None:
                kind = self.kinds.attributes.get(node.attr)
                if kind is not None:
                    return Origin(kind, f"`self.{node.attr}` is a torchmetrics object (it syncs itself)"
                                  if kind == METRIC else f"`self.{node.attr}` holds torchmetrics objects")
            return None
        if isinstance(node, ast.Subscript):
            inner = self.evaluate(node.value, state)
            if inner is not None and inner.kind == METRICS:
                return Origin(METRIC, inner.how)
            if inner is not None and inner.kind == GLOBAL and self._global_or_constant(node.slice, state):
                return inner
            return None
        if isinstance(node, ast.Call):
            return self._call(node, state)
        parts = _operands(node)
        if parts is None:
            return None
        origins = [None if isinstance(p, ast.Constant) else self.evaluate(p, state) for p in parts]
        if any(o is not None and o.kind != GLOBAL for o in origins):
            return None
        if not all(o is not None or isinstance(p, ast.Constant) for o, p in zip(origins, parts)):
            return None
        found = next((o for o in origins if o is not None), None)
        return found  # all constants: None (a constant is the same on every rank, but says nothing)

    def _global_or_constant(self, node: ast.expr, state) -> bool:
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
            return True
        if isinstance(node, ast.Slice):
            return all(p is None or self._global_or_constant(p, state) for p in (node.lower, node.upper, node.step))
        origin = self.evaluate(node, state)
        return origin is not None and origin.kind == GLOBAL

    def _call(self, call: ast.Call, state) -> Origin | None:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        found = self._module_collective(call) or self._compute(call)
        if found is not None:
            return found
        func = call.func
        arguments = [*call.args, *(k.value for k in call.keywords)]
        if isinstance(func, ast.Attribute) and func.attr in VALUE_METHODS and self.imports.qualify(func) is None:
            receiver = self.evaluate(func.value, state)
            if receiver is None or receiver.kind != GLOBAL:
                return None
            return receiver if all(self._global_or_constant(a, state) for a in arguments) else None
        if (isinstance(func, ast.Name) and func.id in BUILTINS and func.id not in self.local_names) or self._pure_function(func):
            if not arguments:
                return None
            origins = [self._global_or_constant(a, state) for a in arguments]
            first = next((self.evaluate(a, state) for a in arguments if not isinstance(a, ast.Constant)), None)
            return first if all(origins) and first is not None and first.kind == GLOBAL else None
        return None

    def _module_collective(self, call: ast.Call) -> Origin | None:
        """``<module>.all_gather(x)``, ``<trainer>.strategy.reduce(x)``: a value every rank shares."""
        func = call.func
        if not isinstance(func, ast.Attribute) or any(k.arg in NOT_WORLD for k in call.keywords):
            return None
        if (func.attr in MODULE_COLLECTIVES and _is_name(func.value, self.module) and self.module_collectives
                and len(call.args) <= 1):
            return Origin(GLOBAL, f"`{_short(call)}` (line {call.lineno}) is gathered from every rank")
        if func.attr in STRATEGY_COLLECTIVES and isinstance(func.value, ast.Attribute) and func.value.attr == "strategy":
            trainer = func.value.value
            is_trainer = _is_name(trainer, self.trainer) or (
                isinstance(trainer, ast.Attribute) and trainer.attr == "trainer" and _is_name(trainer.value, self.module))
            # ``reduce(tensor, group, reduce_op)``, ``all_gather(tensor, group, sync_grads)``: one positional.
            if is_trainer and len(call.args) <= 1:
                if func.attr == "reduce" and not (call.args and _tensor_shaped(call.args[0], self.imports)):
                    return None  # ``DDPStrategy.reduce`` hands a Python number back as it is: this rank's
                return Origin(GLOBAL, f"`{_short(call)}` (line {call.lineno}) is a collective over every rank")
        return None

    def _compute(self, call: ast.Call) -> Origin | None:
        """``<metric>.compute()`` of a metric this module knows: synced over every rank."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "compute") or call.args or call.keywords:
            return None
        inner = self.evaluate(func.value, {})
        if inner is not None and inner.kind == METRIC:
            return Origin(GLOBAL, f"`{_short(call)}` (line {call.lineno}) is synced over every rank by torchmetrics")
        return None


#: Tensor methods whose result is a tensor (a reduction, a cast, a detach).
_TENSOR_RESULTS = frozenset({"mean", "sum", "detach", "float", "double", "clone", "max", "min", "norm", "abs", "sqrt"})


def _tensor_shaped(node: ast.expr, imports: ImportTable) -> bool:
    """``node`` is known to be a tensor by its shape: a tensor method's result (``x.mean()``) or a
    call into ``torch`` (``torch.stack(...)``, ``F.mse_loss(...)``); a name or a number is not."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in _TENSOR_RESULTS and not isinstance(func.value, ast.Constant):
        return True
    qualified = imports.qualify(func) or ""
    return qualified.startswith("torch.") and not qualified.startswith("torch.distributed.")


def _walk_all(node) -> Iterable[ast.AST]:
    """Every node below ``node``, a node or a list of statements."""
    return walk(node) if isinstance(node, ast.AST) else (inner for statement in node for inner in walk(statement))


def _operands(node: ast.expr) -> list[ast.expr] | None:
    """The parts of an operator expression or a display whose value is made of them alone."""
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, (ast.Tuple, ast.List)):
        return list(node.elts) or None
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys) or not node.values:
            return None
        if not all(isinstance(k, ast.Constant) for k in node.keys):
            return None
        return list(node.values)
    if isinstance(node, ast.IfExp):
        return [node.test, node.body, node.orelse]
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    return None


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    found = []
    for field in ("body", "orelse", "finalbody"):
        block = getattr(statement, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            found.append(block)
    for handler in getattr(statement, "handlers", []) or []:
        found.append(handler.body)
    for case in getattr(statement, "cases", []) or []:
        found.append(case.body)
    return found




def stored_names(function: ast.AST) -> frozenset[str]:
    """Every name ``function`` binds or deletes (nested scopes included: an over-approximation)."""
    return frozenset(n.id for n in walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)))
