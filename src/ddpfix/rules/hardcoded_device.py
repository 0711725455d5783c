"""DDP006 hardcoded-device: literal CUDA indices, CUDA in ``__init__`` and device-less tensors beside the batch."""

from __future__ import annotations

import ast

from ddpfix import edits
from ddpfix.edits import Span
from ddpfix.ast_walk import child_nodes
from ddpfix.lazy_regex import lazy_compile
from ddpfix.analysis import lightning as tree_lightning
from ddpfix.analysis import tree_text as tree_text
from ddpfix.analysis.ast_shapes import every_node, imports_of, last_name, may_be, methods
from ddpfix.analysis.lightning import TENSOR_FACTORIES, runs_on_device
from ddpfix.records import record
from ddpfix.rules.base import Rule, RuleContext, clip

SELF_DEVICE = "self.device"


class HardcodedDevice(Rule):
    """
    # DDP006 hardcoded-device

    ## What it does
    Reports, in the methods of a LightningModule, what puts a rank's tensors on the wrong device,
    judged by when the code runs, not by how the device is spelled:
    - **a literal CUDA index** (`"cuda:0"`, `.cuda(0)`, `.to(0)`, `device=0`,
      `torch.device("cuda", 0)`, a `torch.device("cuda:1")` kept in a variable), in any method: it
      names the same GPU on every rank;
    - **an index-less CUDA device in `__init__`**, or in a method of the class that `__init__` calls
      (`.cuda()`, `.to("cuda")`, `device="cuda"`): it is the current device, and `__init__` runs
      before Lightning sets each rank's;
    - **a tensor factory without a device** (`torch.zeros/ones/empty/full/rand/randn/randint/arange/
      linspace/eye/tensor`) in a step hook, where its tensor (the call, or the one local name bound
      to it once, through casts such as `.float()`) has one dimension or more for sure and meets a
      tensor of the batch Lightning moved (`+ - * / @`, a comparison).

    In the hooks that run after placement (`*_step`, `on_*_batch_*`, `on_*_epoch_*`,
    `on_after_batch_transfer`, `forward`, ...) the fix gives `self.device`: a literal device is
    replaced (`x.to("cuda:0", torch.float16)` becomes `x.to(self.device, torch.float16)`),
    `.cuda(0)` becomes `.to(self.device)` (`non_blocking=True` kept), and a device-less factory gets
    `device=self.device`.

    Not reported, because it is right under Lightning:
    - an index-less `"cuda"`, `.cuda()` or `torch.device("cuda")` in any hook that `Trainer.fit`
      calls (`prepare_data`, `setup`, `configure_model`, the steps, `on_*` hooks) or in a helper:
      the strategy's `setup_environment` calls `torch.cuda.set_device` with the rank's GPU before
      all of them, so it is the rank's own GPU;
    - an index computed at run time (`torch.device("cuda", self.local_rank)`,
      `f"cuda:{rank}"`, `.cuda(local_rank)`);
    - any CUDA in a file whose every Trainer (or Fabric) runs one process per node
      (`devices=1`, `[1]`, `"1,"`): no other rank runs beside it, and an index names the GPU meant
      (a teacher kept on GPU 0, model parallelism by hand);
    - a device-less tensor not shown to meet the batch: one moved at once
      (`torch.tensor(x).to(self.device)`, `torch.arange(n).cuda()`), used on the CPU (`.numpy()`,
      `.tolist()`, `.item()`, `.cpu()`, `.pin_memory()`, `generator=`, an index, a counter filled
      from `.cpu()` values, a value handed to a logger or a plot), a 0-dimensional one
      (`torch.tensor(0.5)`: a CPU scalar meets a tensor on any device), one whose dimensions are not
      known (`torch.zeros(n)` of a name), one in a hook without a moved batch (`forward`,
      `on_*_epoch_end`), every one where the project switches the default device
      (`torch.set_default_device`), and every one in a file whose every Trainer has
      `accelerator="cpu"` (the batch stays on the CPU), and every one in a class that places its
      batches itself (`transfer_batch_to_device`, `on_after_batch_transfer`: the batch may stay in
      host memory);
    - tensors inside `register_buffer(...)` (a buffer follows the module) and inside a
      `with torch.device(...)` block; plain PyTorch modules and scripts.

    ## Why it breaks under DDP
    Rank N's module and batch are on `cuda:N`. A literal index puts every rank's tensor on that one
    GPU: "Expected all tensors to be on the same device" on the other ranks, or every rank's memory
    on GPU 0. Under the `ddp` launcher each rank re-runs the script and builds the module before
    `Trainer.fit`; `fit` sets the rank's GPU only in the strategy's setup, so in `__init__` the
    current device is still `cuda:0` on every rank: a tensor made there with `.cuda()` lands on GPU 0
    (a plain attribute stays there; what Lightning moves later still costs each rank memory on
    GPU 0). A factory without a device makes a CPU tensor: beside the batch on the rank's GPU it
    fails with the same error (on any GPU run, one device or many). `self.device` is always the
    rank's device in a hook after placement.

    ## Before
    ```python
    def training_step(self, batch, batch_idx):
        x, y = batch
        weights = torch.ones(x.shape[1], device="cuda:0")
        centre = torch.full((x.shape[1],), 0.5)
        return self.loss(self.net(x - centre) * weights, y)
    ```

    ## After
    ```python
    def training_step(self, batch, batch_idx):
        x, y = batch
        weights = torch.ones(x.shape[1], device=self.device)
        centre = torch.full((x.shape[1],), 0.5, device=self.device)
        return self.loss(self.net(x - centre) * weights, y)
    ```

    ## Fix safety
    - **unsafe**, every fix of a file that names a CUDA device other than 0 (`"cuda:1"`, `.cuda(1)`,
      `.to(1)`, `torch.device("cuda", 1)`): that is model parallelism, and one `self.device` would
      move its parts onto a single GPU.
    - A literal index replaced by `self.device` (`.to("cuda:0")`, `.to(0)`, `device="cuda:0"`):
      **safe** only in a file that builds a Trainer (or Fabric), every one it builds has a literal DDP
      strategy, `devices` left out, `"auto"`, `-1`, a literal count, or the indices 0..n-1 in order
      (`[0, 1]`, `"0,1"`), and no `accelerator` but `"gpu"`, `"cuda"` or `"auto"`. There rank N runs
      on `cuda:N`: on rank 0, and on one GPU, `self.device` is the `cuda:0` the literal names (the
      rewrite is the identity), on rank N the literal was the failure, and where the run has no GPU
      the literal could not run at all. Elsewhere **unsafe**: with `devices=[1]` or `[2, 3]` (or a
      value ddpfix cannot read) rank 0's `self.device` is not `cuda:0`, and a fixed GPU may be the
      one meant (a teacher model kept on GPU 0); with `accelerator="cpu"` `self.device` is the CPU
      while the literal may name a working GPU; a file without the Trainer does not say how its
      module runs; and wherever another place of the file also puts something on `cuda:0` (a
      frozen teacher moved there in `setup`, `map_location="cuda:0"`, a `"cuda:0"` held in a name,
      or an index-less `.cuda()`/`"cuda"` (or a name bound only to `"cuda"`) at the top level, in
      a function of the file or in `__init__`, which runs before Lightning sets the rank's GPU and
      so lands on GPU 0 on every rank: `TEACHER = load_teacher()` doing `.cuda()`):
      the literal may be what this tensor must meet, and on rank N `self.device` would split them.
      (Lightning's `PL_TRAINER_*` environment defaults are not read.) A GPU index
      cannot run on the CPU, so the differential runs prove these rewrites on the CPU by a
      reference written by hand with `self.device`.
    - `.cuda(0)` rebuilt as `.to(self.device)`: as above, and **safe** only when its receiver is a
      tensor factory's result; an unknown receiver's `.to()` may not be `.cuda()`'s twin.
    - `device=self.device` added to a device-less factory: **unsafe** for the random factories
      (`rand`, `randn`, `randint`: with a device they draw from that device's generator, other
      numbers, and later CPU draws shift). For the others **safe** only where all of these hold:
      - the file's Trainers are DDP ones on GPUs 0..n-1, as for a literal index above (a file
        without a Trainer, or with an MPS one, does not say the device is a rank's GPU);
      - the tensor's dtype is known not to be float64, which MPS cannot hold: `dtype=` a known
        dtype other than float64 (and complex), or none with `zeros`/`ones`/`empty`/`eye`, number
        literals in `tensor`/`full`, ints (literals, `.shape[i]`, `.size(i)`, `len(...)`) or
        number literals in `arange`/`linspace`, and the file does not change the default dtype.
        A value ddpfix cannot see (`torch.tensor(np.sqrt(d))` is float64) or
        `dtype=torch.float64`: **unsafe**;
      - every use of the tensor (the call itself, or a local name bound to it once) is
        `+ - * / @` with a tensor of the batch Lightning moved to the device (the step hook's batch
        parameter, names bound once from it, items of those, arithmetic with them). A CPU tensor
        there either fails or, 0-dimensional, gives the same result as one on the device. Any other
        use (indexing, `.numpy()`, a library call such as scikit-learn, a return value, a call of a
        submodule) may want the CPU: **unsafe**.
      On the CPU `self.device` is the CPU and the rewrite is the identity: the differential runs
      prove it there, in one process and under DDP.
    - A call with a comment inside that the rewrite would lose or repeat: no fix (reported).

    ## When it does not fix
    In `__init__`, `setup` and the other methods that run before the module is placed (there
    `self.device` is still the CPU: register tensors as buffers instead, see DDP007), in helper
    methods whose callers ddpfix does not know, and for a device kept in a variable: reported only.
    In `on_before_batch_transfer` the batch is still on the CPU: a literal index there is reported
    (leave the move to Lightning, or make it in `on_after_batch_transfer`).
    """

    code = "DDP006"
    gpu_only = True
    name = "hardcoded-device"
    summary = "Hard-coded CUDA device or device-less tensor in a LightningModule: wrong device on rank N"
    fixable = True
    # "torch", not "torch.": ``from torch import arange`` names a factory with neither word.
    triggers = (("cuda", "torch", ".to("), "self")  # ``.to(0)``: an ordinal is a GPU
    lightning_only = True
    module_only = True
    uses_facts = True

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """A method of some class calls ``.cuda(...)``, ``.to(<a literal or a call>)``, a torch
        factory with ``device=`` (or without one, in a hook that runs on the device), or assigns a
        ``torch.device(...)``: ``check``'s cases, without asking which classes are LightningModules
        or what the device is. Lightning's own modules pass the trigger words and have none."""
        for _cls, method in methods(tree):
            on_device = runs_on_device(method.name)
            for node in every_node(method):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                    func = node.value.func
                    if last_name(func) == "device" or may_be(func, {"torch.device"}, imports_of(tree)):
                        return True
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr == "cuda":
                    return True
                if isinstance(func, ast.Attribute) and func.attr == "to":
                    device = next((k.value for k in node.keywords if k.arg == "device"), None)
                    if device is None and node.args and not isinstance(node.args[0], ast.Starred):
                        device = node.args[0]
                    if isinstance(device, (ast.Constant, ast.JoinedStr, ast.Call)):
                        return True
                    continue
                if may_be(func, TENSOR_FACTORIES, imports_of(tree)) and (on_device or any(k.arg == "device" for k in node.keywords)):
                    return True
        return False

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """The one analysis: findings, each fix's applicability, and its typed edits (``.cuda(...)``
        rebuilt as ``.to(self.device, ...)``, ``device=self.device`` set, a literal device replaced),
        which the engine carries out on LibCST's tree. Where an edit would lose or repeat a comment
        (read from the call's text, as LibCST's tree holds it), the finding is reported unfixed."""
        # Imported here, not at the top: a run loads every rule, and only files this rule checks need it.
        from ddpfix.rules import _hardcoded_device_safety as safety

        one_process = safety.one_process(tree, ctx.imports)
        cpu_only = safety.cpu_only(tree, ctx.imports)
        ddp = safety.ddp_file_why(tree, ctx.imports)
        accelerator = safety.accelerator_why(tree, ctx.imports)
        default_dtype_changed = safety.sets_default_dtype(tree)
        default_device = _default_device(ctx)
        ordinals = safety.other_ordinals(tree)
        for cls, method in tree_lightning.lightning_methods(tree, ctx.imports, ctx.facts.of_kind("LightningModule", ctx.path)):
            on_device = _on_device(method.name)
            # Methods run by ``__init__`` (itself, and the helpers it calls): before Trainer.fit sets
            # the rank's GPU, an index-less "cuda" there is GPU 0 on every rank.
            before_fit = _reached_from_init(cls)
            # A class that moves its batches itself (or back to the CPU) may keep them off the GPU.
            moves_batches = any(isinstance(s, tree_lightning.FUNCTIONS) and s.name in BATCH_MOVERS for s in cls.body)
            facts = safety.MethodFacts(method) if on_device else None
            calls = _calls(method, ctx) if _may_place(method, ctx) else []
            for call, statement, in_fstring in calls:
                placement = _placement(call, statement, ctx, on_device)
                if placement is None:
                    continue
                what = clip(placement.what, 40)
                if placement.ordinal is DEVICELESS:
                    qualified = ctx.imports.qualify(call.func)
                    if (default_device is not None or cpu_only or moves_batches or not facts.meets_device(call)
                            or not safety.has_dimensions(call, qualified, facts)):
                        continue  # a CPU tensor not shown to meet the batch: it may be meant for the CPU
                    short = f"{what} in {method.name}: a CPU tensor beside the batch on the GPU"
                    message = (f"{placement.what} in {method.name} makes a CPU tensor, and it meets a tensor of "
                               "the batch, which Lightning moved to the rank's GPU: \"Expected all tensors to be "
                               "on the same device\" (on every GPU run, one device or many); use device=self.device")
                elif placement.ordinal is CURRENT:
                    if method.name not in before_fit or one_process:
                        continue  # after Trainer.fit set the rank's GPU (or a caller ddpfix cannot see)
                    where = "__init__" if method.name == "__init__" else f"{method.name} (called from __init__)"
                    ctx.report(call, f"{what} in {where}: every rank puts it on cuda:0",
                               detail=f"{placement.what} in {where}: {_BEFORE_SET_DEVICE}", fixable=False)
                    continue
                else:
                    if one_process:
                        continue  # one process per node: the index names the GPU meant
                    gpu = f"cuda:{placement.ordinal}"
                    short = f"{what} in {method.name}: every rank puts it on {gpu}"
                    message = (f"{placement.what} in {method.name}: every rank puts this tensor on {gpu}, while "
                               f"rank N's module and batch are on cuda:N (\"Expected all tensors to be on the same "
                               f"device\", or every rank's memory on GPU {placement.ordinal})")
                    if placement.fix is None:
                        ctx.report(call, short, detail=f"{message}; {_why(method.name)}", fixable=False)
                        continue
                    message += "; use self.device"
                problem = _unfixable(call, placement, in_fstring, ctx)
                if problem is not None:
                    ctx.report(call, short, detail=f"{message} (not rewritten: {problem})", fixable=False)
                    continue
                safe, why = _safety(call, placement, facts, ddp, accelerator, ordinals, ctx, default_dtype_changed)
                if safe:
                    why = _program_why(placement, ctx)
                    safe = why is None
                    why = why or ""
                ctx.report(call, short, detail=message, fixable=True, safe=safe, why=why,
                           edits=_edits(call, placement, ctx))
            if one_process:
                continue
            for assign, target, ordinal in _device_variables(method, ctx):
                ctx.report(assign, f"{clip(target)} = torch.device(...) in {method.name}: cuda:{ordinal} on every rank",
                           detail=f"{target} = torch.device(...) in {method.name} names cuda:{ordinal}: every rank's "
                           f"moves to it go to GPU {ordinal}, while rank N's module and batch are on cuda:N; use "
                           "self.device", fixable=False)


_BEFORE_SET_DEVICE = (
    "__init__ runs before Trainer.fit sets each rank's GPU (torch.cuda.set_device, in the strategy's "
    "setup), so the current device is still cuda:0 and every rank puts this tensor on GPU 0: a plain "
    "attribute stays there (\"Expected all tensors to be on the same device\" on rank N), and even what "
    "Lightning moves later costs every rank memory on GPU 0; register it as a buffer, or create it in a hook")


def _default_device(ctx: RuleContext):
    """A place of the program that switches the process's default device (``torch.set_default_device``)
    and may run in one process with this file: there a device-less factory may land on the rank's GPU."""
    switches = ctx.facts.default_devices_for(ctx.path)  # a switch of a file that may run with this one
    return next((s for s in switches if not s.scoped), None)


#: Hooks by which a class decides where its batches are (``transfer_batch_to_device`` returning the
#: batch as it is keeps it in host memory): then a step's batch is not known to be on the GPU.
BATCH_MOVERS = frozenset({"transfer_batch_to_device", "on_after_batch_transfer"})

# Hooks whose names look like device hooks but that get the batch while it is still on the CPU.
CPU_DATA_HOOKS = frozenset({"on_before_batch_transfer"})


def _on_device(method_name: str) -> bool:
    """Lightning calls this hook with the module, and the batch, on the rank's device."""
    return runs_on_device(method_name) and method_name not in CPU_DATA_HOOKS


def _why(method_name: str) -> str:
    if method_name in CPU_DATA_HOOKS:
        return (f"{method_name} runs while the batch is still on the CPU, before Lightning moves it to the rank's "
                "device: leave the move to Lightning (or make it in on_after_batch_transfer)")
    if method_name in tree_lightning.BEFORE_PLACEMENT:
        return (f"self.device is still the CPU in {method_name} (the module is placed later), so it is not "
                "rewritten: register the tensor as a buffer, or create it in a hook that runs after placement")
    return (f"ddpfix does not know which hooks call {method_name} (self.device may still be the CPU there), so "
            "it is not rewritten: use self.device where the module is placed")


# A tensor used this way belongs on the CPU: .numpy(), .tolist()... of a factory's result.
CPU_CONSUMERS = frozenset({"numpy", "tolist", "item", "cpu", "pin_memory"})
# Factory arguments that tie the result to the CPU.
CPU_ARGUMENTS = frozenset({"generator", "pin_memory", "out"})
# Methods between a factory and a move that keep the tensor where it is: ``torch.tensor(x).float().to(d)``.
KEEPS_PLACE = frozenset({"float", "half", "double", "bfloat16", "long", "int", "bool", "contiguous", "detach",
                         "clone", "t", "unsqueeze", "squeeze", "view", "reshape", "flatten", "requires_grad_"})


def _may_place(method: ast.FunctionDef | ast.AsyncFunctionDef, ctx: RuleContext) -> bool:
    """Whether some call of the method may be a placement ``_placement`` reports: a ``.cuda(...)``,
    a ``.to(...)`` or a tensor factory. Most hooks make none, and then ``_calls``, a walk that
    weighs every call of the hook, has nothing to find (the walk kept on the hook is cheap to read)."""
    qualify = ctx.imports.qualify
    return any(
        isinstance(node, ast.Call) and (
            (isinstance(node.func, ast.Attribute) and node.func.attr in ("cuda", "to"))
            or qualify(node.func) in TENSOR_FACTORIES)
        for node in every_node(method))


#: Nodes that hold no call, nor anything ``_calls`` looks at: it need not enter them (half of a hook).
_NO_CALLS = (ast.Name, ast.Constant, ast.expr_context)


def _calls(method: ast.FunctionDef | ast.AsyncFunctionDef, ctx: RuleContext):
    """(call, the statement it is in, whether it is inside an f-string) for the calls of a method
    that may be about placement, in source order: not inside ``self.register_buffer(...)`` (a
    buffer follows the module), not inside a ``with torch.device(...)`` block (the author chose the
    device there), not an index into another tensor, not a tensor made for the CPU, and not a
    device-less factory whose tensor is moved right away (``torch.tensor(x).to(self.device)``)."""
    found: list[tuple[ast.Call, ast.stmt, bool]] = []
    skipped: set[int] = set()
    pending: list[tuple[ast.AST, ast.stmt, bool]] = [(s, s, False) for s in reversed(method.body)]
    while pending:
        node, statement, in_fstring = pending.pop()
        children = child_nodes(node)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "register_buffer":
                continue
            if isinstance(func, ast.Attribute) and func.attr in CPU_CONSUMERS and isinstance(func.value, ast.Call):
                skipped.add(id(func.value))
            if any(k.arg in CPU_ARGUMENTS for k in node.keywords):
                skipped.add(id(node))
            moved = _moved_factory(node, ctx)
            if moved is not None:
                skipped.add(id(moved))
            found.append((node, statement, in_fstring))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            if any(isinstance(item.context_expr, ast.Call) and _names_a_device(item.context_expr, ctx)
                   for item in node.items):
                continue
        elif isinstance(node, ast.Subscript):
            children = [node.value]  # ``table[torch.arange(3)]``: an index follows the tensor it indexes
        in_fstring = in_fstring or isinstance(node, ast.JoinedStr)
        pending.extend([(child, child if isinstance(child, ast.stmt) else statement, in_fstring)
                        for child in reversed(children) if not isinstance(child, _NO_CALLS)])
    calls = [entry for entry in found if id(entry[0]) not in skipped]
    # Source order (``ast`` keeps positional and keyword arguments apart), outer calls first.
    return sorted(calls, key=lambda e: (e[0].lineno, e[0].col_offset, -e[0].end_lineno, -e[0].end_col_offset))


def _moved_factory(call: ast.Call, ctx: RuleContext) -> ast.Call | None:
    """The device-less factory call that ``call`` moves to a device (``.cuda(...)``, or ``.to(...)``
    with a device), through methods that keep the tensor's place; None if there is none."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in ("to", "cuda"):
        return None
    if func.attr == "to":
        device = tree_lightning.keyword(call, "device")
        if device is not None:
            value = device.value
        elif call.args and not isinstance(call.args[0], ast.Starred):
            value = call.args[0]
        else:
            return None
        if not _value_names_a_device(value, ctx):
            return None
    receiver = func.value
    while (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute)
           and receiver.func.attr in KEEPS_PLACE):
        receiver = receiver.func.value
    if (isinstance(receiver, ast.Call) and ctx.imports.qualify(receiver.func) in TENSOR_FACTORIES
            and tree_lightning.keyword(receiver, "device") is None):
        return receiver
    return None


def _value_names_a_device(value: ast.expr, ctx: RuleContext) -> bool:
    """A literal device, ``<x>.device``, or a name ending in ``device``: not a dtype or a tensor."""
    if isinstance(value, ast.Attribute):
        return value.attr == "device"
    if isinstance(value, ast.Name):
        return value.id.endswith("device")
    return tree_lightning.device_kind(value, ctx.imports, ctx.view.positions.segment) != "unknown"


def _names_a_device(call: ast.Call, ctx: RuleContext) -> bool:
    """``with torch.device(...)``: the code of the called expression ends with ``device``; it ends
    with ``)`` where that expression stands in parentheses of its own (``(torch.device)("cuda")``),
    which the call's span then starts with."""
    func = call.func
    parenthesised = (call.lineno, call.col_offset) != (func.lineno, func.col_offset)
    return not parenthesised and ctx.view.positions.segment(func).endswith("device")


# What a fix edits: ``.cuda(...)`` rebuilt as ``.to(self.device, ...)``, a ``device=self.device``
# appended, or one argument's value replaced by ``self.device``.
REBUILT = "rebuilt"
APPENDED = "appended"
REPLACED = "replaced"


# A placement's CUDA index: a literal int, or one of these.
CURRENT = "current"  # an index-less CUDA device: ``.cuda()``, ``"cuda"``, ``torch.device("cuda")``
DEVICELESS = "deviceless"  # a tensor factory without a device: the CPU
UNKNOWN = None  # no CUDA device, or an index ddpfix cannot read


@record(frozen=True)
class _Placement:
    """A hard-coded placement: its description, the CUDA index it names (an int, ``CURRENT`` or
    ``DEVICELESS``), what its fix edits (None: reported only), the argument whose value a
    ``REPLACED`` fix replaces (its index in source order, and the value), and the call's layout
    where a fix or the description needs it."""

    what: str
    ordinal: int | str
    fix: str | None
    layout: edits.CallLayout | None = None
    index: int | None = None
    value: ast.expr | None = None


def cuda_ordinal(value: ast.expr, imports, segment) -> int | str | None:
    """The CUDA index a device value names: an int (``"cuda:1"``, ``1``, ``torch.device("cuda", 1)``)
    or ``CURRENT`` (``"cuda"``, ``torch.device("cuda")``); ``UNKNOWN`` where it names no CUDA device
    or an index ddpfix cannot read (``f"cuda:{rank}"``, ``torch.device("cuda", local_rank)``: most
    likely the rank's own GPU)."""
    if tree_lightning.device_kind(value, imports, segment) != "cuda":
        return UNKNOWN
    if isinstance(value, ast.Constant) and type(value.value) is int:
        return value.value if value.value >= 0 else UNKNOWN
    text = tree_lightning.string_value(value)
    if text is None and isinstance(value, ast.JoinedStr) and all(isinstance(p, ast.Constant) for p in value.values):
        text = "".join(p.value for p in value.values)
    if text is not None:
        return int(text[5:]) if text.startswith("cuda:") else CURRENT
    if isinstance(value, ast.Call) and imports.qualify(value.func) == "torch.device":
        if tree_lightning.has_star(value):
            return UNKNOWN
        kind = tree_lightning.keyword(value, "type")
        first = value.args[0] if value.args else (kind.value if kind is not None else None)
        if first is None:
            return UNKNOWN
        named = cuda_ordinal(first, imports, segment)
        at = tree_lightning.keyword(value, "index")
        index = value.args[1] if len(value.args) > 1 else (at.value if at is not None else None)
        if index is None:
            return named
        if named is CURRENT and isinstance(index, ast.Constant) and type(index.value) is int and index.value >= 0:
            return index.value
    return UNKNOWN


def _placement(call: ast.Call, statement: ast.stmt, ctx: RuleContext, on_device: bool) -> _Placement | None:
    """The hard-coded placement ``call`` makes, if any."""
    func, imports = call.func, ctx.imports
    segment = ctx.view.positions.segment
    if isinstance(func, ast.Attribute) and func.attr == "cuda" and imports.qualify(func) is None:
        if tree_lightning.has_star(call):
            return None
        if any(k.arg not in ("non_blocking", "device") for k in call.keywords):
            return None  # an argument we do not know: not the Tensor/Module.cuda we mean
        device = tree_lightning.keyword(call, "device")
        value = call.args[0] if call.args else (device.value if device is not None else None)
        if value is None or (isinstance(value, ast.Constant) and value.value is None):
            ordinal = CURRENT  # ``.cuda()``, ``.cuda(None)``: the current device
        else:
            ordinal = cuda_ordinal(value, imports, segment)
            if ordinal is UNKNOWN:
                return None  # ``.cuda(self.local_rank)``: most likely the rank's own GPU
        what = ".cuda()" if value is None else f".cuda({tree_text.quoted(value, statement, ctx.view)})"
        if not on_device:
            return _Placement(what, ordinal, None)
        return _Placement(what, ordinal, REBUILT, edits.call_layout(ctx.view, call))
    if isinstance(func, ast.Attribute) and func.attr == "to" and imports.qualify(func) is None:
        device = tree_lightning.keyword(call, "device")
        if device is None and call.args and not isinstance(call.args[0], ast.Starred):
            argument = value = call.args[0]
        elif device is not None:
            argument, value = device, device.value
        else:
            return None
        ordinal = cuda_ordinal(value, imports, segment)
        if ordinal is UNKNOWN:
            return None
        return _replacement(".to({})", call, argument, value, statement, ctx, on_device, ordinal)
    qualified = imports.qualify(func)
    if qualified in TENSOR_FACTORIES:
        device = tree_lightning.keyword(call, "device")
        name = qualified.split(".", 1)[1]
        if device is None:
            # Device-less tensors are only wrong where the module computes on its device.
            if not on_device or tree_lightning.has_star(call) or tree_lightning.keyword(call, "out") is not None:
                return None
            return _Placement(f"torch.{name}() without a device", DEVICELESS, APPENDED,
                              edits.call_layout(ctx.view, call))
        ordinal = cuda_ordinal(device.value, imports, segment)
        if ordinal is UNKNOWN:
            return None
        return _replacement(f"torch.{name}(device={{}})", call, device, device.value, statement, ctx, on_device,
                            ordinal)
    return None


def _replacement(what: str, call: ast.Call, argument: ast.expr | ast.keyword, value: ast.expr,
                 statement: ast.stmt, ctx: RuleContext, on_device: bool, ordinal: int | str) -> _Placement:
    """A literal device given as ``argument`` of ``call``; ``what`` quotes its value's code as
    LibCST's tree holds it, with the parentheses around it."""
    layout = edits.call_layout(ctx.view, call)
    index = next(i for i, a in enumerate(tree_lightning.arguments_in_order(call)) if a is argument)
    if layout is None:
        code = tree_text.quoted(value, statement, ctx.view)
    else:
        code = tree_text.code_between(ctx.view, layout.arguments[index].value, layout.arguments[index].end, statement)
    return _Placement(what.format(code), ordinal, REPLACED if on_device else None, layout, index, value)


def _unfixable(call: ast.Call, placement: _Placement, in_fstring: bool, ctx: RuleContext) -> str | None:
    """Why the fix cannot be made, if it cannot: where it would lose or repeat a comment (the
    edits would be refused), or where the call's place is not known for sure."""
    if in_fstring and _misplaced(call, ctx):
        return "Python misplaces the code inside this f-string"
    layout = placement.layout
    if layout is None:
        return "ddpfix cannot read how this call's arguments are laid out"
    if placement.fix is REBUILT:
        kept = {i for i, a in enumerate(tree_lightning.arguments_in_order(call))
                if isinstance(a, ast.keyword) and a.arg == "non_blocking"}
        keeps = layout.replace_arguments_keeps_comments(1, kept)
    elif placement.fix is APPENDED:
        keeps = layout.append_keeps_comments()
    else:
        keeps = layout.replace_value_keeps_comments(placement.index)
    return None if keeps else "a comment inside the call would be lost"


def _misplaced(call: ast.Call, ctx: RuleContext) -> bool:
    """Whether the text at ``call``'s span inside an f-string is not the call: Python before 3.12
    places the code of an f-string's fields itself, not always right (LibCST's tree, where the
    edits apply, is placed by its own parser)."""
    try:
        found = ast.parse(ctx.view.positions.segment(call), mode="eval").body
    except SyntaxError:
        return True
    return ast.dump(found) != ast.dump(call)


def _edits(call: ast.Call, placement: _Placement, ctx: RuleContext) -> list:
    if placement.fix is REBUILT:
        return [edits.RenameAttribute(Span.of(ctx.position(call.func)), "to"),
                edits.ReplaceArguments(Span.of(ctx.position(call)), (SELF_DEVICE,), keep=("non_blocking",))]
    if placement.fix is APPENDED:
        return [edits.SetKeyword(Span.of(ctx.position(call)), "device", SELF_DEVICE)]
    return [edits.ReplaceExpression(Span.of(ctx.position(placement.value)), SELF_DEVICE)]


def _safety(call: ast.Call, placement: _Placement, facts, ddp: str | None, accelerator: str | None,
            ordinals: list[int], ctx: RuleContext, default_dtype_changed: bool) -> tuple[bool, str]:
    """(whether the fix is proven to change nothing but the failure, what was not proven).
    ``ddp``: None where every Trainer of the file is a literal DDP one on GPUs 0..n-1
    (``_hardcoded_device_safety.ddp_file_why``), else why not."""
    from ddpfix.rules import _hardcoded_device_safety as safety

    if ordinals:
        return False, (f"the file names CUDA device {ordinals[0]}: model parallelism, which one self.device "
                       "would move to a single GPU")
    if placement.fix is APPENDED:
        qualified = ctx.imports.qualify(call.func)
        if qualified in safety.RANDOM_FACTORIES:
            return False, ("with a device it draws from that device's generator instead of the CPU's: other "
                           "numbers, and later CPU draws shift")
        if qualified not in safety.DETERMINISTIC_FACTORIES:
            return False, "the factory is not known to give the same values on every device"
        if ddp is not None:
            return False, ddp
        why = safety.dtype_why(call, qualified, ctx.imports, default_dtype_changed)
        if why is not None:
            return False, why
        return facts.factory_uses_are_math(call)
    if ddp is not None:
        return False, ddp
    if accelerator is not None:
        return False, accelerator
    if placement.ordinal == 0:
        line = safety.pins_to_zero_elsewhere(ctx.view.tree, call, _after_placement_nodes(ctx))
        if line is not None:
            return False, (f"line {line} also puts something on cuda:0 (a frozen model, a loaded checkpoint): this "
                           "tensor may be meant to meet it there, and on rank N self.device would split them")
    if placement.fix is REBUILT:
        receiver = call.func.value
        if not (isinstance(receiver, ast.Call) and ctx.imports.qualify(receiver.func) in TENSOR_FACTORIES):
            return False, "the receiver of .cuda() is not known to be a tensor (its .to() may differ)"
    return True, ""


#: Hooks by which code of the program decides where a batch's tensors are (a DataModule's or the
#: module's ``transfer_batch_to_device``, what ``on_before_batch_transfer`` makes of the batch, what
#: ``on_after_batch_transfer`` moves back, a strategy's ``batch_to_device``).
_BATCH_PLACERS = ("transfer_batch_to_device", "on_before_batch_transfer", "on_after_batch_transfer", "batch_to_device")
#: Code that compiles a module with TorchScript, where ``self.device`` does not exist.
_SCRIPTED = lazy_compile(rb"to_torchscript\b|\bjit\b")  # ``torch.jit.script``, ``from torch.jit import script``
#: Something put on the first GPU in another file (``map_location="cuda:0"``, ``.to("cuda:0")``,
#: ``.cuda(0)``, ``torch.device("cuda", 0)``, ``.to(0)``, ``device=0``): a tensor here may be meant to
#: meet it there.
_GPU_ZERO = lazy_compile(
    rb"[\"']cuda:0[\"']|\.cuda\([ \t]*0[ \t]*\)|map_location[ \t]*=[ \t]*[\"']cuda[\"']"
    rb"|device\([ \t]*[\"']cuda[\"'][ \t]*,[ \t]*0[ \t]*\)|\.to\([ \t]*(?:device[ \t]*=[ \t]*)?0[ \t]*[,)]"
    rb"|device[ \t]*=[ \t]*0\b|map_location[ \t]*=[ \t]*0\b")


def _program_why(placement: _Placement, ctx: RuleContext) -> str | None:
    """What the program, beyond this file, leaves unproven about a fix this file proves (review
    helper-45): a batch hook elsewhere may keep the batch's tensors off ``self.device``, which the
    rewritten tensor then meets (c07); a module compiled by TorchScript has no ``self.device`` (c11);
    a tensor on ``cuda:0`` may be meant to meet what another file puts there (c13)."""
    facts = ctx.facts
    where = facts.defines_elsewhere(_BATCH_PLACERS, ctx.path, (0, 0), assigned=True)
    if where is not None:
        return (f"{where} defines a batch hook: the batch's tensors may not be on self.device, where the rewritten "
                "tensor would meet them")
    for name in _BATCH_PLACERS:
        stored = facts.stored_elsewhere(name, ctx.path, ctx.view.tree)
        if stored is not None:
            return f"{stored} stores `{name}`: the batch's tensors may not be on self.device"
    scripted = facts.text_in_program(_SCRIPTED, ctx.path)
    if scripted is not None:
        return (f"{scripted} may compile the module with TorchScript, where self.device does not exist (its "
                "forward would fail to compile)")
    if placement.ordinal == 0:
        zero = facts.text_in_program(_GPU_ZERO, ctx.path, itself=False)
        if zero is not None:
            return (f"{zero} also puts something on cuda:0 (a teacher, a loaded checkpoint): this tensor may be "
                    "meant to meet it there, and on rank N self.device would split them")
    return None


def _reached_from_init(cls: ast.ClassDef) -> frozenset[str]:
    """``__init__`` and the class's own methods it calls, directly or through one another."""
    methods = {s.name: s for s in cls.body if isinstance(s, tree_lightning.FUNCTIONS)}
    reached = {"__init__"}
    pending = ["__init__"] if "__init__" in methods else []
    while pending:
        for call in tree_lightning.self_method_calls(methods[pending.pop()], frozenset(methods)):
            if call.func.attr not in reached:
                reached.add(call.func.attr)
                pending.append(call.func.attr)
    return frozenset(reached)


def _after_placement_nodes(ctx: RuleContext) -> frozenset[int]:
    """ids of the nodes of the LightningModule hooks that run after placement (their literal devices
    are rewritten alike), kept on the tree."""
    tree = ctx.view.tree
    known = tree.__dict__.get("_ddpfix_after_placement")
    if known is None:
        known = frozenset(id(node) for _cls, method in tree_lightning.lightning_methods(
            tree, ctx.imports, ctx.facts.of_kind("LightningModule", ctx.path)) if _on_device(method.name)
            for node in ast.walk(method))
        tree._ddpfix_after_placement = known
    return known


def _device_variables(method: ast.FunctionDef | ast.AsyncFunctionDef, ctx: RuleContext):
    """``device = torch.device("cuda:0")`` (or ``self.device_ = ...``) inside the method, in source
    order, each with its target's code and the index: a device with a literal CUDA index (an
    index-less ``torch.device("cuda")`` is each rank's current GPU where it is used)."""
    found = []
    segment = ctx.view.positions.segment
    # Every assignment of the method's body (a decorator or a default holds none): the walk kept on it.
    for node in every_node(method):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
            continue
        value = node.value
        if ctx.imports.qualify(value.func) != "torch.device":
            continue
        ordinal = cuda_ordinal(value, ctx.imports, segment)
        if isinstance(ordinal, int):
            found.append((node, _target_code(node, ctx), ordinal))
    return sorted(found, key=lambda entry: (entry[0].lineno, entry[0].col_offset))


def _target_code(assign: ast.Assign, ctx: RuleContext) -> str:
    """The code of the first target as LibCST's tree holds it: with the parentheses around it
    (``(device) = ...``), which the statement then starts with."""
    view, target = ctx.view, assign.targets[0]
    first = tree_text.start(assign, view)
    if first == tree_text.start(target, view):
        return tree_text.quoted(target, assign, view)
    # Only parentheses, layout and comments stand before the target, and after it up to the
    # parenthesis closing the last of them: no string, so a "#" starts a comment.
    opened = [char for _at, char in _code_characters(view.text, first, tree_text.start(target, view))].count("(")
    closing = [at for at, char in _code_characters(view.text, tree_text.end(target, view), tree_text.start(assign.value, view))
               if char == ")"][opened - 1]
    return tree_text.code_between(view, first, closing + 1, assign)


def _code_characters(text: str, first: int, stop: int) -> list[tuple[int, str]]:
    """(offset, character) for what stands in ``text[first:stop]`` besides whitespace, line
    continuations and comments, where no string stands before the characters wanted."""
    found = []
    offset = first
    for line in _LINES.findall(text[first:stop]):  # each with its line break
        code = line.split("#", 1)[0]
        found += [(offset + i, char) for i, char in enumerate(code) if not char.isspace() and char != "\\"]
        offset += len(line)
    return found


_LINES = lazy_compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")
