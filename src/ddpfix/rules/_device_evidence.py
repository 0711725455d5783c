"""Where a tensor may sit on the CPU (DDP004: a synced value is all-reduced on its own device, and
NCCL refuses CPU tensors). Read on CPython's tree: a value is proven to be on the rank's GPU only
through known shapes; ``cpu_evidence`` is the first place of a function or class that may make a CPU
tensor."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ddpfix.analysis.ast_shapes import parent_map
from ddpfix.ast_walk import child_nodes, kept_on, walk, walk_outside_scopes
from ddpfix.analysis import lightning as tree_lightning
from ddpfix.rules._log_sync_walks import is_self, names_in_nested_scopes, self_attr

#: ``torch.<name>`` constants: dtypes and numbers (never a tensor).
TORCH_CONSTANTS = frozenset({
    "float", "float16", "float32", "float64", "bfloat16", "half", "double", "int", "int8", "int16", "int32",
    "int64", "long", "uint8", "bool", "complex64", "complex128", "cfloat", "cdouble", "short", "inf", "nan", "pi", "e",
})

#: Calls whose result is on the CPU: a tensor moved there, or made without a device.
TO_CPU_METHODS = frozenset({"cpu", "numpy", "tolist"})


def bindings(function, at: tuple[int, int] | None) -> dict[str, list[ast.expr]]:
    """Name -> the values the function binds it (before ``at``, where given): ``=``, ``x: T = v``,
    ``x += v`` (``v``, as far as a device goes), ``(x := v)``, ``for x in v`` (an item of ``v``)."""
    assigned: dict[str, list[ast.expr]] = {}
    for place, name, value in kept_on(function, _binding_events):
        if at is None or place is None or place < at:
            assigned.setdefault(name, []).append(value)
    return assigned


def _binding_events(function) -> list[tuple[tuple[int, int] | None, str, ast.expr]]:
    """Every binding of ``function`` in walk order: (the binding node's place, or None for a
    comprehension's, which has none; the name; the value). Kept on the node: a method with many
    logs is asked once per log (``bindings`` keeps it: ``kept_on``)."""
    events = []
    for node in walk(function):
        if isinstance(node, ast.Assign):
            pairs = [(target, node.value) for target in node.targets]
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            pairs = [(node.target, node.value)]
        elif isinstance(node, ast.NamedExpr):
            pairs = [(node.target, node.value)]
        elif isinstance(node, ast.For):
            pairs = [(node.target, node.iter)]
        elif isinstance(node, ast.comprehension):
            pairs = [(node.target, node.iter)]
        else:
            continue
        place = (node.lineno, node.col_offset) if hasattr(node, "lineno") else None
        for target, value in pairs:
            for name in walk(target):
                if isinstance(name, ast.Name):
                    events.append((place, name.id, value))
    return events


def targets(call: ast.Call) -> list[ast.expr]:
    """What a ``.to(...)`` / ``.type(...)`` call moves or casts to: its arguments (``non_blocking=``
    and ``copy=`` left out)."""
    return [*call.args, *(k.value for k in call.keywords if k.arg in ("device", "dtype", "other"))]


def keeps_the_device(node: ast.expr, imports, assigned: dict[str, list[ast.expr]] | None = None) -> bool:
    """``node``, as a device or a ``.to``/``.type`` target, is proven to leave a value on the rank's
    GPU: a dtype (``torch.float32``), ``self.device`` or any ``<x>.device``, the current CUDA device
    (``"cuda"``, ``torch.device("cuda")``: the rank's once Lightning has set it), a CUDA tensor type,
    or a name the method binds only to such. A numbered GPU (``"cuda:0"``, ``torch.device("cuda", 1)``)
    is that GPU on every rank, not the rank's: NCCL refuses a sync on another rank's device (review
    round 15). Anything else (a name from elsewhere, ``self.eval_device``, ``"cpu"``) may be the CPU."""
    text = tree_lightning.string_value(node)
    if text is not None:
        return text.strip() == "cuda" or text.startswith("torch.cuda.")
    if isinstance(node, ast.Attribute) and node.attr == "device":
        return True
    if isinstance(node, ast.Call) and imports.qualify(node.func) == "torch.device" and len(node.args) == 1 \
            and not node.keywords:
        return keeps_the_device(node.args[0], imports, assigned)
    qualified = imports.qualify(node) or ""
    if qualified.startswith("torch.") and qualified.count(".") == 1 and qualified[6:] in TORCH_CONSTANTS:
        return True  # a dtype
    if qualified.startswith("torch.cuda.") and qualified.endswith("Tensor"):
        return True
    if isinstance(node, ast.Name) and assigned and assigned.get(node.id):
        return all(keeps_the_device(value, imports) for value in assigned[node.id])
    return False


#: ``torch`` functions whose result is on the device of their tensor arguments (math, reductions,
#: joins, comparisons, ``*_like``). Any other ``torch.<f>`` may make a new tensor on the default
#: device, the CPU (``torch.tensor``, ``torch.eye``, ``torch.hann_window``...), unless given a device.
_FOLLOWS_ITS_INPUTS = frozenset({
    "abs", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "square", "pow", "sigmoid",
    "tanh", "relu", "softmax", "log_softmax", "sum", "mean", "nansum", "nanmean", "prod", "max", "min", "amax",
    "amin", "argmax", "argmin", "std", "var", "std_mean", "var_mean", "norm", "logsumexp", "cumsum", "cumprod",
    "stack", "cat", "concat", "concatenate", "hstack", "vstack", "where", "clamp", "clip", "maximum", "minimum",
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "remainder",
    "matmul", "mm", "bmm", "einsum", "dot", "outer", "topk", "sort", "argsort", "isnan", "isinf", "isfinite",
    "nan_to_num", "flatten", "reshape", "squeeze", "unsqueeze", "transpose", "permute", "round", "floor", "ceil",
    "sign", "neg", "eq", "ne", "lt", "le", "gt", "ge", "all", "any", "count_nonzero", "masked_select", "gather",
    "index_select", "diag", "tril", "triu", "trace", "logical_and", "logical_or", "logical_not", "logical_xor",
    "median", "mode", "quantile", "unique", "bincount", "cdist", "cosine_similarity", "dist", "chunk", "split",
    "unbind", "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like", "randint_like",
    "sin", "cos", "erf", "lerp", "addmm", "baddbmm", "flip", "roll", "repeat_interleave", "narrow", "select",
    # Views and math of one tensor, and products of several: all on their inputs' device.
    "diagonal", "diag_embed", "diagflat", "t", "clone", "detach", "mv", "kron", "tensordot", "cross", "cummax",
    "cummin", "logcumsumexp", "reciprocal", "atan2", "hypot", "fmod", "nanmedian", "kthvalue", "msort", "take",
    "take_along_dim", "index_add", "scatter", "scatter_add", "masked_fill", "broadcast_to", "movedim", "swapaxes",
    "tile", "rot90", "fliplr", "flipud", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
    "logit", "xlogy", "trunc", "frac", "aminmax", "searchsorted", "bucketize",
})


#: Packages whose functions compute on the device of the tensors they are given.
_FOLLOWING_PACKAGES = ("torch.nn.functional.", "torch.linalg.", "torch.special.")
#: ``torch.nn.utils``'s functions that return the module they are given, or a tensor of the
#: tensors they are given (not ``pad_packed_sequence``, whose lengths are made on the CPU).
_FOLLOWING_NN_UTILS = ("torch.nn.utils.parametrizations.", "torch.nn.utils.parametrize.", "torch.nn.utils.weight_norm",
                       "torch.nn.utils.spectral_norm", "torch.nn.utils.rnn.pad_sequence", "torch.nn.utils.clip_grad_norm_",
                       "torch.nn.utils.clip_grad_value_")
#: ``torch.fft``'s functions that make a tensor of their own from sizes (on the default device).
_FFT_MAKERS = frozenset({"fftfreq", "rfftfreq"})
#: torchmetrics' functional metrics that compute with torch on the tensors they are given (not the
#: text metrics, which take strings, nor audio ones computed in NumPy: ``pesq``, ``stoi``, ``dnsmos``).
_FOLLOWING_METRICS = frozenset({
    "accuracy", "precision", "recall", "f1_score", "fbeta_score", "auroc", "average_precision", "confusion_matrix",
    "stat_scores", "specificity", "jaccard_index", "matthews_corrcoef", "cohen_kappa", "hamming_distance", "dice",
    "mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_log_error",
    "r2_score", "pearson_corrcoef", "spearman_corrcoef", "cosine_similarity", "explained_variance", "kl_divergence",
    "peak_signal_noise_ratio", "structural_similarity_index_measure", "scale_invariant_signal_distortion_ratio",
    "scale_invariant_signal_noise_ratio", "signal_noise_ratio",
})


#: torchmetrics' classification and regression functions that make a tensor without a device on
#: some path (``binary_calibration_error``'s ``torch.tensor(0)`` for no error; review round 15),
#: by the stem of their names: every such place the installed sources (torchmetrics 1.9) show,
#: found by a scan of their trees for factories called without ``device=``.
_CPU_MAKING_METRICS = ("calibration_error", "fairness", "demographic_parity", "equal_opportunity", "groups_stat",
                       "logauc", "precision_at_fixed_recall", "recall_at_fixed_precision", "jensen_shannon", "kendall")


def makes_a_tensor(qualified: str) -> bool:
    """A call of torch or torchmetrics (``torch.<f>``, a tensor type, ``torch.fft.rfftfreq``,
    ``torchmetrics.functional.word_error_rate``) whose result is not known to follow its inputs'
    device: it may make its tensor on the CPU."""
    head, _, rest = qualified.partition(".")
    if qualified.startswith("torchmetrics.") and any(stem in qualified for stem in _CPU_MAKING_METRICS):
        return True
    if qualified.startswith("torchmetrics.functional."):
        # an allowlist, not the package: the named metrics (any task's: ``binary_accuracy``), none of
        # which the scan above found making a tensor of its own
        name = rest.rsplit(".", 1)[-1]
        for task in ("binary_", "multiclass_", "multilabel_"):
            name = name[len(task):] if name.startswith(task) else name
        return name not in _FOLLOWING_METRICS
    if qualified.startswith(_FOLLOWING_PACKAGES):
        return False
    if qualified.startswith("torch.fft."):
        return rest.rsplit(".", 1)[-1] in _FFT_MAKERS
    if head != "torch" or not rest:
        return False
    if "." in rest:
        # torch.nn's layers (registered, moved with the module), autograd and checkpointing (on their
        # inputs); any other package of torch (``torch.utils.data``, ``torch.nn.utils``) is not known.
        if qualified.startswith("torch.nn.") and not qualified.startswith("torch.nn.utils."):
            return False
        if qualified.startswith(_FOLLOWING_NN_UTILS):
            return False
        return not qualified.startswith(("torch.Tensor.", "torch.distributions.", "torch.cuda.", "torch.amp.",
                                         "torch.backends.", "torch.autograd.", "torch.utils.checkpoint.", "torch.jit."))
    return rest not in _FOLLOWS_ITS_INPUTS and rest not in TORCH_CONSTANTS \
        and rest not in ("no_grad", "inference_mode", "device", "is_tensor")


#: Calls whose result is a Python number, whatever device their argument was on: Lightning puts a
#: number on the module's device before it syncs it.
_TO_NUMBER_METHODS = frozenset({"item"})
_TO_NUMBER_BUILTINS = frozenset({"float", "int", "len", "bool"})


def outside_numbers(node: ast.AST, imports) -> Iterator[ast.AST]:
    """The nodes of ``node`` (itself included), not entering a call that makes a Python number
    (``t.cpu().item()``, ``float(...)``, ``len(...)``): what is inside one cannot make the value a
    CPU tensor."""
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        if isinstance(current, ast.Call) and not current.keywords and (
                (isinstance(current.func, ast.Attribute) and current.func.attr in _TO_NUMBER_METHODS and not current.args)
                or (isinstance(current.func, ast.Name) and current.func.id in _TO_NUMBER_BUILTINS
                    and imports.qualify(current.func) is None and len(current.args) == 1)):
            continue
        pending.extend(child_nodes(current))


def cpu_evidence(node: ast.AST, imports, moved: frozenset[int] = frozenset()) -> tuple[str, int] | None:
    """(what, its line) of the first place below ``node`` (a function, a class) that may make a CPU
    tensor: ``.cpu()``/``.numpy()``/``.tolist()``, a ``.to()``/``.type()`` to anything not proven
    to be the rank's GPU, a ``torch`` function that makes a tensor without such a device. What a
    Python number is made of does not count, nor the nodes of ``moved`` (what a module registers
    as a parameter or buffer, which moves with it: ``registered_with_the_module``). None where
    there is none."""
    functions = [n for n in walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] or [node]
    for function in functions:
        assigned = bindings(function, None)
        for part in outside_numbers(function, imports):
            if not isinstance(part, ast.Call) or id(part) in moved:
                continue
            func = part.func
            qualified = imports.qualify(func) or ""
            if isinstance(func, ast.Attribute) and qualified == "" and (func.attr in TO_CPU_METHODS or (
                    func.attr in ("to", "type") and any(not keeps_the_device(a, imports, assigned) for a in targets(part)))):
                return f".{func.attr}(...)", part.lineno
            if qualified.startswith("torch.Tensor.") and (func.attr in TO_CPU_METHODS or func.attr in ("to", "type")):
                return f"{qualified}(...)", part.lineno  # ``torch.Tensor.cpu(y)``: the method, called unbound
            if qualified.startswith("torch.distributions."):
                return f"{qualified}(...)", part.lineno  # a distribution samples where its parameters are
            if makes_a_tensor(qualified):
                device = next((k.value for k in part.keywords if k.arg == "device"), None)
                if device is None or not keeps_the_device(device, imports, assigned):
                    return f"{qualified}(...)", part.lineno
    return None


def registrations(init: ast.FunctionDef | ast.AsyncFunctionDef, imports) -> list[tuple[str, ast.expr, ast.AST]]:
    """What ``__init__`` registers on the module as a parameter or a buffer, which ``Module.to``
    moves with it onto the rank's device: (the attribute's name, the tensor's expression, the node
    that binds the name) for ``self.x = nn.Parameter(...)`` (the whole value of an assignment to one
    attribute of ``self``), ``self.register_buffer("x", ...)`` and ``self.register_parameter("x",
    nn.Parameter(...))`` (a literal name). A parameter kept in a plain list, or made outside
    ``__init__`` (each call of ``forward``), is not moved."""
    def parameter_argument(value: ast.expr | None) -> ast.expr | None:
        if isinstance(value, ast.Call) and value.args and imports.qualify(value.func) in PARAMETER_CLASSES:
            return value.args[0]
        return None

    found: list[tuple[str, ast.expr, ast.AST]] = []
    for statement in walk(init):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and self_attr(statement.targets[0]):
            made = parameter_argument(statement.value)
            if made is not None:
                found.append((statement.targets[0].attr, made, statement.targets[0]))
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            call = statement.value
            func = call.func
            if self_attr(func) in ("register_buffer", "register_parameter") and len(call.args) >= 2 \
                    and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
                made = call.args[1] if func.attr == "register_buffer" else parameter_argument(call.args[1])
                if made is not None:
                    found.append((call.args[0].value, made, call))
    return found


def registered_with_the_module(init: ast.FunctionDef | ast.AsyncFunctionDef, imports,
                               lineage: list[ast.ClassDef]) -> frozenset[int]:
    """The nodes of what ``__init__`` registers (``registrations``), and of what it computes only
    to register (``_registration_only``): no CPU evidence, as they move. Only where the move leaves
    no other reference to the tensor made on the CPU: ``Module.to`` replaces the registered entry
    alone, so a registration counts not where the class (``lineage``: it and its bases) defines
    ``register_buffer``, ``register_parameter`` or ``__setattr__`` itself (what registering does is
    its own), where the registered expression binds a name too (``(t := torch.zeros(n))``), or
    where a method other than ``forward`` reads the registered attribute (``self.w0 =
    self.w.clone()``, ``self.params = (self.mu, self.logvar)`` in ``__init__``: a copy or a
    container made before the move keeps the CPU tensor)."""
    if any(isinstance(s, FUNCTIONS) and s.name in _OWN_REGISTERING for c in lineage for s in c.body):
        return frozenset()
    kept = _kept_outside_forward(lineage, imports)
    made = [made for name, made, _ in registrations(init, imports)
            if name not in kept and not any(isinstance(n, ast.NamedExpr) for n in walk(made))]
    return frozenset(id(n) for expression in [*made, *_registration_only(init, made, imports)] for n in walk(expression))


def _kept_outside_forward(lineage: list[ast.ClassDef], imports) -> set[str]:
    """The attributes ``self.<name>`` that a method other than ``forward`` (``forward`` too, where
    another method calls it) reads into a value that may keep the tensor (a copy, a view, a
    container, another object): every read but one that fills it in place (``nn.init.normal_(self.w)``, ``self.w.data.uniform_(-a, a)``) or takes a
    number of it (``self.w.size(0)``, ``self.w.shape``)."""
    kept: set[str] = set()
    methods = [m for owner in lineage for m in owner.body if isinstance(m, FUNCTIONS)]
    # ``forward`` runs after the move, unless another method (``__init__``'s shape probe) calls it
    forward_before = any(isinstance(n, ast.Call) and (is_self(n.func) or self_attr(n.func) == "forward")
                         for m in methods if m.name != "forward" for n in walk(m))
    for method in methods:
        if method.name == "forward" and not forward_before:
            continue
        parents = parent_map(method)
        for node in walk(method):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and is_self(node.value) \
                    and not _filled_or_measured(node, parents, imports):
                kept.add(node.attr)
    return kept


def _filled_or_measured(read: ast.Attribute, parents: dict[int, ast.AST], imports) -> bool:
    child, parent = read, parents.get(id(read))
    while isinstance(parent, ast.Attribute) and parent.attr == "data":
        child, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.Attribute) and parent.attr in _NUMBERS_OF_A_TENSOR:
        return True
    # an in-place fill returns the tensor itself: it must not be kept (a statement of its own)
    if isinstance(parent, ast.Attribute) and parent.attr.endswith("_") and not parent.attr.startswith("_"):
        call = parents.get(id(parent))
        return isinstance(call, ast.Call) and call.func is parent and isinstance(parents.get(id(call)), ast.Expr)
    return isinstance(parent, ast.Call) and child in parent.args and isinstance(parents.get(id(parent)), ast.Expr) \
        and (imports.qualify(parent.func) or "").startswith("torch.nn.init.")


#: What a tensor's attribute or method gives that holds none of it.
_NUMBERS_OF_A_TENSOR = frozenset({"shape", "size", "numel", "dim", "ndim", "dtype", "device", "requires_grad"})
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: Methods that make registering a class's own.
_OWN_REGISTERING = frozenset({"register_buffer", "register_parameter", "__setattr__"})


def _registration_only(init: ast.FunctionDef | ast.AsyncFunctionDef, registered: list[ast.expr],
                       imports) -> list[ast.expr]:
    """The values ``__init__`` binds to local names that end in a registration and nowhere else: a
    positional encoding's ``pe = torch.zeros(n, d)``, filled in place (``pe[:, 0::2] = torch.sin(
    position * div)``, ``position = torch.arange(n)``) and then ``self.register_buffer("pe", pe)``.
    A name's every use must be in what is registered, in the value bound to (or stored into) a name
    that ends so itself, or the name filled in place; the values are made by torch's functions, tensor
    methods and arithmetic alone (none of which keeps what it is handed). A name also kept on
    ``self`` otherwise, handed to other code, or bound otherwise than by a plain assignment (a loop,
    ``with``, a nested function's), may keep a CPU tensor: its values count as made here."""
    inside_registered = {id(n) for expression in registered for n in walk(expression)}
    body = list(walk_outside_scopes(init))
    parents = parent_map(init)
    values: dict[str, list[ast.expr]] = {}
    unknown: set[str] = set()
    for node in body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            parent = parents.get(id(node))
            if not (isinstance(parent, ast.Assign) and parent.targets == [node]):
                unknown.add(node.id)  # ``for x in ...``, ``x += ...``, ``a, b = ...``, ``del x``
    unknown.update(names_in_nested_scopes(init))  # a nested function may keep it, or bind it
    # a name declared global or nonlocal outlives ``__init__``
    unknown.update(name for n in body if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names)
    candidates = {name for name, bound in values.items() if name not in unknown
                  and all(_only_tensor_code(value, imports) for value in bound)}

    def sink(use: ast.Name) -> str | None:
        """Where the value read at ``use`` goes: ``"registered"``, a local name it is bound or stored
        into, or None (anywhere else)."""
        child, node = use, parents.get(id(use))
        while node is not None and not isinstance(node, ast.stmt):
            if id(child) in inside_registered:
                return "registered"
            child, node = node, parents.get(id(node))
        if id(child) in inside_registered:
            return "registered"
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            root = node.targets[0]
            while isinstance(root, ast.Subscript):
                root = root.value  # ``pe[:, 0::2] = v``: ``v`` is stored into ``pe``, filled in place
            if isinstance(root, ast.Name):
                return root.id  # (a use in the target is ``pe`` itself, or an index into it)
        return None

    changed = True
    while changed:
        changed = False
        for node in body:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in candidates:
                where = sink(node)
                if where != "registered" and where not in candidates:
                    candidates.discard(node.id)
                    changed = True
    return [value for name in candidates for value in values[name]]


def _only_tensor_code(value: ast.expr, imports) -> bool:
    """``value`` calls nothing but ``torch``'s and ``math``'s functions and tensor methods: code that
    keeps nothing it is handed."""
    for node in walk(value):
        if isinstance(node, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(node, ast.Call):
            qualified = imports.qualify(node.func) or ""
            if qualified.startswith(("torch.", "math.")):
                continue
            if isinstance(node.func, ast.Attribute) and not qualified and node.func.attr in _TENSOR_CODE:
                continue
            return False
    return True


#: Tensor methods that compute a new tensor (or a number) from it, keeping nothing.
_TENSOR_CODE = frozenset({
    "float", "double", "half", "long", "int", "bool", "unsqueeze", "squeeze", "view", "reshape", "flatten",
    "transpose", "permute", "t", "contiguous", "clone", "detach", "exp", "log", "sin", "cos", "sqrt", "pow",
    "mul", "div", "add", "sub", "neg", "abs", "sum", "mean", "cumsum", "repeat", "expand", "masked_fill",
    "triu", "tril", "size", "dim", "numel",
})


#: ``torch.nn.Parameter`` under the names it is imported by.
PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
