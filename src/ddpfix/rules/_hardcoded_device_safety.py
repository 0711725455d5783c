"""When DDP006's fixes are safe: what CPython's tree proves about a file, a hook and a tensor's uses.

Only ``hardcoded_device.check`` asks (applicability is decided on CPython's tree). Every test is an
allowlist: what is not shown here to be harmless makes a fix unsafe.
"""

from __future__ import annotations

import ast

from ddpfix.ast_walk import child_nodes, kept_on
from ddpfix.lazy_regex import lazy_compile
from ddpfix.analysis.ast_shapes import every_node, nodes_of, spelled_names
from ddpfix.analysis import lightning as tree_lightning
from ddpfix.analysis.lightning import lightning_name

# Factories whose values do not depend on where they are made. The random ones draw from the
# device's generator once given a device: other numbers, and the CPU generator no longer advances.
DETERMINISTIC_FACTORIES = frozenset(
    f"torch.{name}" for name in ("zeros", "ones", "empty", "full", "arange", "linspace", "eye", "tensor")
)
RANDOM_FACTORIES = frozenset(f"torch.{name}" for name in ("rand", "randn", "randint"))
# Arithmetic whose CPU and CUDA results agree wherever mixing the devices does not fail: a CUDA
# operand with a CPU one fails unless the CPU one is 0-dimensional, and then the op runs on CUDA.
SAFE_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult)
# Where each step hook gets the batch that Lightning's loops moved to the module's device (the
# position among the parameters after ``self``). ``on_before_batch_transfer`` is not here: the
# batch is still on the CPU there.
_STEPS = ("training_step", "validation_step", "test_step", "predict_step", "on_after_batch_transfer")
_STAGES = ("train", "validation", "test", "predict")
BATCH_POSITION = {
    **{name: 0 for name in _STEPS},
    **{f"on_{stage}_batch_start": 0 for stage in _STAGES},
    **{f"on_{stage}_batch_end": 1 for stage in _STAGES},
}
_ORDINAL = lazy_compile(r"cuda:(\d+)")
# Methods whose result has the receiver's dimensions (a CPU tensor stays one that fails beside a
# device tensor), and methods whose result stays on the receiver's device.
KEEPS_DIMENSIONS = frozenset({"float", "half", "double", "bfloat16", "long", "int", "bool", "contiguous",
                              "detach", "clone", "requires_grad_", "unsqueeze", "t"})
STAYS_ON_DEVICE = KEEPS_DIMENSIONS | {"cuda", "view", "reshape", "flatten", "permute", "transpose", "squeeze"}



def ddp_file_why(tree: ast.Module, imports) -> str | None:
    """None where the file builds a Trainer (or Fabric), and every one it builds has a literal DDP
    strategy and devices that start at GPU 0 in order: the module this file trains runs one process
    per GPU, where ``self.device`` is the rank's and rank 0's is ``cuda:0``. Else why not (a
    finding's ``why``)."""
    builders = _builders(tree, imports)
    if not builders:
        return ("this file builds no Trainer whose strategy is DDP: in one process a fixed GPU may be "
                "the one meant (devices=[1] puts self.device elsewhere), and the file does not say how "
                "its module runs (on MPS, say)")
    for call in builders:
        strategy = tree_lightning.keyword(call, "strategy")
        if strategy is None or not tree_lightning.is_ddp_strategy(strategy.value, imports):
            return ("a Trainer of this file has no literal DDP strategy: in one process a fixed GPU may be "
                    "the one meant (devices=[1] puts self.device elsewhere)")
        if not devices_in_order(call):
            return ("a Trainer of this file is not given its GPUs as a count or as 0..n-1 in order "
                    "(devices=[1], [2, 3], or a value ddpfix cannot read): rank 0's self.device is then "
                    "not cuda:0, and a fixed GPU may be the one meant")
    return None


BUILDERS = ("Trainer", "Fabric")


def _may_name_a_builder(func: ast.expr) -> bool:
    """What ``lightning_name`` may find to be a Trainer or Fabric: a name (an import may bind it to
    either), or an attribute that spells one (``L.Trainer``: the imports qualify what stands before
    the attribute, never the attribute itself). Asked first of every call of the file."""
    return isinstance(func, ast.Name) or (isinstance(func, ast.Attribute) and func.attr in BUILDERS)


def devices_in_order(call: ast.Call) -> bool:
    """The Trainer's (or Fabric's) ``devices`` is absent, ``"auto"``, ``-1``, a literal count, or a
    list (or string) of the indices 0..n-1 in order: rank N then runs on ``cuda:N``. A ``**``
    argument may hold any ``devices`` (``Trainer(strategy="ddp", **settings)``): not in order."""
    devices = tree_lightning.keyword(call, "devices")
    if devices is None:
        return not any(k.arg is None for k in call.keywords)
    value = devices.value
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) and isinstance(value.operand, ast.Constant):
        return type(value.operand.value) is int and value.operand.value == 1
    if isinstance(value, ast.Constant) and type(value.value) is int:
        return value.value >= -1
    text = tree_lightning.string_value(value)
    if text is not None:
        text = text.strip()
        if text in ("auto", "-1") or text.isdigit():
            return True  # a count of devices
        indices = [part.strip() for part in text.split(",") if part.strip()]
        return bool(indices) and indices == [str(i) for i in range(len(indices))]
    if isinstance(value, (ast.List, ast.Tuple)):
        return bool(value.elts) and all(
            isinstance(e, ast.Constant) and type(e.value) is int and e.value == i for i, e in enumerate(value.elts))
    return False


def one_process(tree: ast.Module, imports) -> bool:
    """The file builds a Trainer (or Fabric), and every one it builds runs one process per node:
    ``devices=1`` (or ``"1"``, or one index: ``[1]``, ``"1,"``). There no rank runs beside another
    on the node, and a CUDA index names the GPU meant (a teacher kept on GPU 0, model parallelism
    by hand): not a DDP pitfall."""
    builders = _builders(tree, imports)
    return bool(builders) and all(_one_device(call) for call in builders)


def _builders(tree: ast.Module, imports) -> list[ast.Call]:
    return [node for node in nodes_of(tree, ast.Call)
            if _may_name_a_builder(node.func) and lightning_name(imports, node.func) in BUILDERS]


def _one_device(call: ast.Call) -> bool:
    devices = tree_lightning.keyword(call, "devices")
    if devices is None:
        return False
    value = devices.value
    if isinstance(value, ast.Constant) and type(value.value) is int:
        return value.value == 1
    text = tree_lightning.string_value(value)
    if text is not None:
        text = text.strip()
        if text == "1":
            return True
        indices = [part.strip() for part in text.split(",") if part.strip()]
        return "," in text and len(indices) == 1 and indices[0].isdigit()
    if isinstance(value, (ast.List, ast.Tuple)):
        return len(value.elts) == 1 and isinstance(value.elts[0], ast.Constant) and type(value.elts[0].value) is int
    return False


def cpu_only(tree: ast.Module, imports) -> bool:
    """The file builds a Trainer (or Fabric), and every one it builds has ``accelerator="cpu"``:
    the batch Lightning moves stays on the CPU, beside which a device-less tensor is right."""
    builders = _builders(tree, imports)
    return bool(builders) and all(
        (tree_lightning.string_value(getattr(tree_lightning.keyword(call, "accelerator"), "value", None)) or "")
        .strip() == "cpu" for call in builders)


def accelerator_why(tree: ast.Module, imports) -> str | None:
    """None where no Trainer (or Fabric) of the file names a CPU accelerator (``accelerator`` left
    out, ``"auto"``, ``"gpu"``, ``"cuda"``): a CUDA literal and ``self.device`` then name the same GPU
    on rank 0, or the literal fails (no CUDA on the machine). With ``accelerator="cpu"`` (or a value
    ddpfix cannot read) ``self.device`` is the CPU while the literal may name a working GPU."""
    for call in _builders(tree, imports):
        accelerator = tree_lightning.keyword(call, "accelerator")
        if accelerator is None:
            continue
        if (tree_lightning.string_value(accelerator.value) or "").strip() not in ("auto", "gpu", "cuda"):
            return ("a Trainer of this file does not run on the GPU for sure (accelerator is not "
                    "\"gpu\", \"cuda\" or \"auto\"): there self.device is not the GPU the literal names")
    return None


# dtypes a device-less factory may be given when ``device=self.device`` is added: none is float64,
# which MPS cannot hold (nor complex, which it holds only in part).
NOT_FLOAT64 = frozenset(f"torch.{n}" for n in (
    "float32", "float", "float16", "half", "bfloat16", "bool", "int8", "uint8", "int16", "short", "int32", "int",
    "int64", "long"))
# Factories whose dtype, without dtype=, is the default one (float32) whatever their size arguments.
DEFAULT_DTYPE_FACTORIES = frozenset(f"torch.{n}" for n in ("zeros", "ones", "empty", "eye"))


def sets_default_dtype(tree: ast.Module) -> bool:
    """The file may change torch's default dtype (``torch.set_default_dtype(torch.float64)``)."""
    setters = ("set_default_dtype", "set_default_tensor_type")
    return (not spelled_names(tree).isdisjoint(setters)
            or any(n.name.rsplit(".", 1)[-1] in setters for n in nodes_of(tree, ast.alias)))


def dtype_why(call: ast.Call, qualified: str, imports, default_dtype_changed: bool) -> str | None:
    """None when the factory's dtype is known not to be float64 (MPS cannot hold it, so a tensor
    that worked on the CPU would fail once made on the device); else what was not proven."""
    dtype = tree_lightning.keyword(call, "dtype")
    if dtype is not None:
        if imports.qualify(dtype.value) in NOT_FLOAT64:
            return None
        return ("its dtype may be float64 (or is not one ddpfix knows), which the device may not hold "
                "(MPS has no float64)")
    if default_dtype_changed:
        return "the file changes torch's default dtype, which may be float64 (MPS has no float64)"
    if qualified in DEFAULT_DTYPE_FACTORIES:
        return None
    values: list[ast.expr] = []
    if qualified == "torch.full":
        fill = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg == "fill_value"), None)
        values = [fill] if fill is not None else []
        if values and _number_literal(values[0]):
            return None
    elif qualified in ("torch.tensor", "torch.as_tensor"):
        data = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "data"), None)
        if data is not None and _number_literal(data):
            return None
    elif qualified in ("torch.arange", "torch.linspace"):
        arguments = [*call.args, *(k.value for k in call.keywords if k.arg in ("start", "end", "step", "steps"))]
        if arguments and all(_int_like(a) or _number_literal(a) for a in arguments):
            return None
    return ("its dtype comes from a value ddpfix cannot see (a numpy float64, say), and the device may not "
            "hold float64 (MPS)")


def _number_literal(node: ast.expr) -> bool:
    """A number, a bool, or a (nested) list or tuple of them: torch makes int64, bool or the
    default dtype of it."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float, bool)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _number_literal(node.operand)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_number_literal(e) for e in node.elts)
    return False


def _int_like(node: ast.expr) -> bool:
    """A Python int for sure: an int literal, a ``.shape[...]`` item, ``.size(...)``, ``.dim()``,
    ``.numel()``, ``len(...)``, and sums and products of them."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Attribute) and node.value.attr == "shape"
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("size", "dim", "numel") and node.args:
            return func.attr == "size"
        if isinstance(func, ast.Attribute) and func.attr in ("dim", "numel") and not node.args:
            return True
        return isinstance(func, ast.Name) and func.id == "len"
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        return _int_like(node.left) and _int_like(node.right)
    return False


def has_dimensions(call: ast.Call, qualified: str, facts: "MethodFacts") -> bool:
    """The factory's tensor has one dimension or more, for sure. A 0-dimensional CPU tensor may
    meet a tensor on any device (it is taken as a scalar): only one of more dimensions fails."""
    if tree_lightning.has_star(call):
        return False
    name = qualified.rsplit(".", 1)[-1]
    args = call.args
    facts._read_method()

    def sized(node: ast.expr | None) -> bool:
        if isinstance(node, (ast.Tuple, ast.List)):
            return any(not isinstance(e, ast.Starred) for e in node.elts)
        return node is not None and facts.batch_shape(node)

    size = tree_lightning.keyword(call, "size")
    if name in ("arange", "linspace", "eye"):
        return True
    if name in ("tensor", "as_tensor"):
        data = args[0] if args else next((k.value for k in call.keywords if k.arg == "data"), None)
        return isinstance(data, (ast.List, ast.Tuple))
    if name == "full":
        return sized(args[0] if args else (size.value if size else None))
    if name == "randint":
        return sized(args[-1] if len(args) >= 2 else (size.value if size else None))
    if len(args) >= 2:
        return True  # each positional argument is one dimension
    if len(args) == 1:
        return sized(args[0]) or _int_like(args[0])
    return sized(size.value if size else None)


def other_ordinals(tree: ast.Module) -> list[int]:
    """CUDA devices other than 0 that the file names (``"cuda:1"``, ``.cuda(1)``, ``.to(1)``,
    ``torch.device("cuda", 1)``, ``device=1``): the file places parts of its work on chosen GPUs
    (model parallelism), and one ``self.device`` for all would move them."""
    found: set[int] = set()
    for node in nodes_of(tree, ast.Constant, ast.Call):  # a set: their order does not matter
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if "cuda:" in node.value:  # what ``_ORDINAL`` needs: most strings (docstrings) have none
                found.update(int(n) for n in _ORDINAL.findall(node.value) if int(n) != 0)
        elif isinstance(node, ast.Call):
            values = [k.value for k in node.keywords if k.arg == "device"]
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("cuda", "to", "device") and node.args:
                values.append(node.args[0])
            if last_name(func) == "device" and len(node.args) > 1:
                values.append(node.args[1])  # torch.device("cuda", 1)
            for value in values:
                if isinstance(value, ast.Constant) and type(value.value) is int and value.value != 0:
                    found.add(value.value)
    return sorted(found)


def pins_to_zero_elsewhere(tree: ast.Module, call: ast.Call, rewritten: frozenset[int] = frozenset()) -> int | None:
    """The line of another place of the file that names CUDA device 0 (``"cuda:0"``, ``.cuda(0)``,
    ``.to(0)``, ``device=0``, ``torch.device("cuda", 0)``, ``map_location="cuda:0"``), outside
    ``call`` and the hooks in ``rewritten`` (ids of nodes of the hooks after placement, whose literals
    the same fix rewrites alike); None where there is none. A frozen teacher loaded onto ``cuda:0``
    in ``setup`` is what a step's ``x.to("cuda:0")`` feeds: the literal is then the meaning. So is
    one moved by an index-less ``.cuda()`` before Lightning sets the rank's GPU (``TEACHER =
    Net().cuda()`` at the top level, in ``__init__``): GPU 0 on every rank (review round 15)."""
    inside = {id(node) for node in ast.walk(call)}
    # ``rewritten`` is the same set for every finding of the file: the places outside it, kept.
    for group in kept_on(tree, _places_of_gpu_zero, rewritten):  # a call's first, then the rest
        found = next((node for node in group if id(node) not in inside), None)
        if found is not None:
            return found.lineno
    return None


def _places_of_gpu_zero(tree: ast.Module, rewritten: frozenset[int]) -> tuple[list[ast.AST], ...]:
    """The file's places outside ``rewritten`` that name CUDA device 0, in the order they are
    preferred: calls that name it (a string of a call's: a docstring names devices too), calls
    before placement that take the current GPU, then any other string (``SCORER_DEVICE =
    "cuda:0"``). Asked per finding (``kept_on``): walking the file for each was quadratic."""
    calls = []
    for node in nodes_of(tree, ast.Call):
        func = node.func
        values = [k.value for k in node.keywords if k.arg in ("device", "map_location")]
        if isinstance(func, ast.Attribute) and func.attr in ("cuda", "to") and node.args:
            values.append(node.args[0])
        if last_name(func) == "device" and node.args:
            values.extend(node.args[:2])
        if any((isinstance(value, ast.Constant) and isinstance(value.value, str) and "cuda:" in value.value
                and 0 in (int(n) for n in _ORDINAL.findall(value.value)))
               or (isinstance(value, ast.Constant) and type(value.value) is int and value.value == 0) for value in values):
            calls.append(node)
    current = _names_of_the_current_gpu(tree)
    before = [node for node in _before_placement(tree) if isinstance(node, ast.Call) and _current_cuda(node, current)]
    docstrings = {id(n.value) for n in nodes_of(tree, ast.Expr)}
    strings = [node for node in nodes_of(tree, ast.Constant)
               if id(node) not in docstrings and isinstance(node.value, str) and "cuda:" in node.value
               and 0 in (int(n) for n in _ORDINAL.findall(node.value))]
    return tuple([node for node in group if id(node) not in rewritten] for group in (calls, before, strings))


def _before_placement(tree: ast.Module):
    """The nodes of code that runs before Lightning sets each rank's GPU, when the current device is
    still ``cuda:0`` on every rank (the ``ddp`` launcher re-runs the script; ``fit`` sets the device
    in the strategy's setup): the file's top-level code (a ``__main__`` block too), its functions
    (``main()``, ``load_teacher()``: called from there; review round 16) and every ``__init__`` (a
    module is built before ``fit``)."""
    todo: list[ast.AST] = []
    for statement in tree.body:
        if isinstance(statement, ast.ClassDef):
            todo.extend(s for s in statement.body if isinstance(s, ast.FunctionDef) and s.name == "__init__")
            continue
        todo.append(statement)
    for part in todo:
        yield from ast.walk(part)


def _names_of_the_current_gpu(tree: ast.Module) -> set[str]:
    """Names every binding of which in the file is ``"cuda"`` or ``torch.device("cuda")``
    (``DEVICE = "cuda"``, then ``.to(DEVICE)``; review round 16)."""
    values: dict[str, list[ast.expr | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for part in ast.walk(target):
                    if isinstance(part, ast.Name):
                        values.setdefault(part.id, []).append(node.value if target is part else None)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            values.setdefault(node.id, [])
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.withitem, ast.NamedExpr)):
            for part in ast.walk(getattr(node, "target", None) or getattr(node, "optional_vars", None) or ast.Pass()):
                if isinstance(part, ast.Name):
                    values.setdefault(part.id, []).append(None)

    def current(value: ast.expr | None) -> bool:
        if isinstance(value, ast.Call) and last_name(value.func) == "device" and len(value.args) == 1:
            value = value.args[0]
        return isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value.strip() == "cuda"

    return {name for name, bound in values.items() if bound and all(current(v) for v in bound)}


def _current_cuda(call: ast.Call, names: set[str] = frozenset()) -> bool:
    """``.cuda()``, ``.to("cuda")``, ``device="cuda"``, ``torch.device("cuda")``, or a name bound only to
    one of these: the current GPU."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "cuda" and not call.args \
            and not any(k.arg == "device" for k in call.keywords):
        return True
    values = [k.value for k in call.keywords if k.arg in ("device", "map_location")]
    if isinstance(func, ast.Attribute) and func.attr == "to" and call.args:
        values.append(call.args[0])
    if last_name(func) == "device" and len(call.args) == 1:
        values.append(call.args[0])
    return any((isinstance(v, ast.Constant) and isinstance(v.value, str) and v.value.strip() == "cuda")
               or (isinstance(v, ast.Name) and v.id in names) for v in values)


def last_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


class MethodFacts:
    """What one hook's body shows: its parents, how often each name is bound, the batch names.
    Read from the hook at the first question, not when made: the rule makes one for every hook
    that runs on the device, and most have no device-less factory to ask about (reading a hook
    walks every node of it)."""

    def __init__(self, method: ast.FunctionDef | ast.AsyncFunctionDef):
        self.method = method
        self._read = False

    def _read_method(self) -> None:
        if self._read:
            return
        self._read = True
        method = self.method
        self.parents: dict[int, ast.AST] = {}
        self.stores: dict[str, int] = {}
        self.loads: dict[str, list[ast.Name]] = {}
        for node in every_node(method):
            for child in child_nodes(node):
                self.parents[id(child)] = node
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    self.loads.setdefault(node.id, []).append(node)
                else:
                    self.stores[node.id] = self.stores.get(node.id, 0) + 1
            elif isinstance(node, ast.arg):
                self.stores[node.arg] = self.stores.get(node.arg, 0) + 1
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for name in node.names:
                    self.stores[name] = self.stores.get(name, 0) + 2  # never a single binding
        self.batch: set[str] = set()
        self._batch_names()

    def _batch_names(self) -> None:
        """The hook's batch parameter (moved by Lightning before the hook runs) and the names bound
        once from it (``x, y = batch``, ``images = batch["images"]``)."""
        position = BATCH_POSITION.get(self.method.name)
        arguments = self.method.args
        params = [a.arg for a in (*arguments.posonlyargs, *arguments.args)][1:]
        if position is None or position >= len(params):
            return
        batch = params[position]
        if batch == "dataloader_iter" or self.stores.get(batch) != 1:
            return  # ``training_step(self, dataloader_iter)``: Lightning moves nothing
        names = self.batch
        names.add(batch)
        grew = True
        while grew:
            grew = False
            for node in every_node(self.method):
                if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not self.on_device(node.value):
                    continue
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    targets = [target]
                elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(node.value, ast.Name):
                    targets = target.elts  # ``x, y = batch``: each element of the moved batch
                else:
                    continue
                for element in targets:
                    if isinstance(element, ast.Name) and element.id not in names and self.stores.get(element.id) == 1:
                        names.add(element.id)
                        grew = True

    def on_device(self, node: ast.expr) -> bool:
        """A tensor of the moved batch: a batch name, an item or slice of one, a result of
        arithmetic with one (the result is on the operand's device, or the operation failed), or
        one cast, moved with ``.cuda()`` or reshaped (``x.float()``, ``x.view(n, -1)``)."""
        if isinstance(node, ast.Name):
            return node.id in self.batch
        if isinstance(node, ast.Subscript):
            return self.on_device(node.value)
        if isinstance(node, ast.BinOp):
            return self.on_device(node.left) or self.on_device(node.right)
        if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
            return self.on_device(node.operand)
        if isinstance(node, ast.Attribute) and node.attr in ("T", "mT"):
            return self.on_device(node.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STAYS_ON_DEVICE:
            return self.on_device(node.func.value)
        return False

    def batch_shape(self, node: ast.expr) -> bool:
        """``x.shape`` or ``x.size()`` of a batch name: the shape of a collated batch tensor, one
        dimension at least (the batch dimension)."""
        if isinstance(node, ast.Attribute) and node.attr == "shape":
            return isinstance(node.value, ast.Name) and node.value.id in self.batch
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size"
                and not node.args and not node.keywords):
            return isinstance(node.func.value, ast.Name) and node.func.value.id in self.batch
        return False

    def meets_device(self, call: ast.Call) -> bool:
        """Some use of a factory's tensor (the call itself, or the one local name bound to it
        once) is an operation beside a tensor of the batch Lightning moved to the rank's device
        (``+ - * / @ ...``, a comparison), through casts that keep its dimensions: on a GPU such an
        operation fails for a CPU tensor of one dimension or more."""
        self._read_method()
        parent = self.parents.get(id(call))
        if isinstance(parent, ast.Assign) and parent.value is call:
            if len(parent.targets) != 1 or not isinstance(parent.targets[0], ast.Name):
                return False
            name = parent.targets[0].id
            if self.stores.get(name) != 1:
                return False
            return any(self._beside_device(load) for load in self.loads.get(name, ()))
        return self._beside_device(call)

    def _beside_device(self, node: ast.expr) -> bool:
        """Whether ``node`` (a CPU tensor of one dimension or more) meets a tensor of the moved
        batch, directly or through arithmetic with other operands (``x + 0.1 * noise``): such
        a result has at least its operand's dimensions, and stays on the CPU unless the
        arithmetic already failed beside a tensor on a device."""
        while True:
            parent = self.parents.get(id(node))
            if (isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in KEEPS_DIMENSIONS
                    and isinstance(self.parents.get(id(parent)), ast.Call) and self.parents[id(parent)].func is parent):
                node = self.parents[id(parent)]
                continue
            if isinstance(parent, ast.BinOp):
                if self.on_device(parent.right if parent.left is node else parent.left):
                    return True
                node = parent
                continue
            if isinstance(parent, ast.Compare):
                return any(self.on_device(o) for o in (parent.left, *parent.comparators) if o is not node)
            return False

    def factory_uses_are_math(self, call: ast.Call) -> tuple[bool, str]:
        """Whether every use of a factory's tensor is arithmetic with a tensor of the moved batch:
        there a CPU tensor either fails ("Expected all tensors to be on the same device") or, being
        0-dimensional, gives the same result as one on the device. (ok, what is not proven)."""
        self._read_method()
        parent = self.parents.get(id(call))
        if isinstance(parent, ast.Assign) and parent.value is call:
            if len(parent.targets) != 1 or not isinstance(parent.targets[0], ast.Name):
                return False, "the tensor is bound to something other than one local name"
            name = parent.targets[0].id
            if self.stores.get(name) != 1:
                return False, f"`{name}` is bound more than once in {self.method.name}"
            for load in self.loads.get(name, ()):
                if not self._math_with_batch(load):
                    return False, (f"`{name}` is used other than in arithmetic with a tensor of the batch "
                                   "(it may be meant for the CPU: indexing, .numpy(), a library call)")
            return True, ""
        if self._math_with_batch(call):
            return True, ""
        return False, ("the tensor is used other than in arithmetic with a tensor of the batch (it may be "
                       "meant for the CPU: indexing, .numpy(), a library call)")

    def _math_with_batch(self, node: ast.expr) -> bool:
        parent = self.parents.get(id(node))
        if not isinstance(parent, ast.BinOp) or not isinstance(parent.op, SAFE_OPERATORS):
            return False
        other = parent.right if parent.left is node else parent.left
        return self.on_device(other)
