"""DDP008 device-map-under-ddp: accelerate's ``device_map`` fights Lightning's placement under DDP."""

from __future__ import annotations

import ast

import libcst as cst

from ddpfix.transforms import _device_map_under_ddp_safety as safety
from ddpfix.transforms import _tree_lightning as tree_lightning
from ddpfix.transforms import _tree_text as tree_text
from ddpfix.transforms._args import ReplaceCalls, keyword, with_keyword, without_keyword
from ddpfix.transforms._edit_imports import ensure_import
from ddpfix.transforms._lightning import class_hierarchy, lightning_name, string_value
from ddpfix.transforms._walk import walk
from ddpfix.transforms.base import NeedsLibCST, Rule, RuleContext

PER_RANK_MAP = '{"": int(os.environ.get("LOCAL_RANK", 0))}'
SINGLE_DEVICE_STRINGS = frozenset({"auto", "cuda", "cuda:0", "balanced", "balanced_low_0", "sequential"})
QUANTISED = ("load_in_8bit", "load_in_4bit")
# Signs in ``forward`` that a parameter is a tensor.
TENSOR_METHODS = frozenset({"shape", "size", "view", "reshape", "dim", "to", "float", "half", "long", "unsqueeze",
                            "squeeze", "permute", "transpose", "device", "dtype", "contiguous", "flatten", "ndim",
                            "bool", "int", "numel", "sum", "mean", "argmax", "masked_fill", "clone", "detach"})


class DeviceMapUnderDdp(Rule):
    """
    # DDP008 device-map-under-ddp

    ## What it does
    Finds `from_pretrained(..., device_map=...)` (transformers, peft) in Lightning code — inside a
    LightningModule, or in a file that builds a Trainer with a DDP strategy — with
    `device_map="auto"`, `"cuda"`, `"cuda:0"`, `0` or `{"": 0}`:
    - with 8-/4-bit loading (`load_in_8bit`, `load_in_4bit`, `quantization_config=`) the model must
      stay where it was loaded, so each rank loads onto its own GPU:
      `device_map={"": int(os.environ.get("LOCAL_RANK", 0))}` (and `import os` is added once);
    - otherwise `device_map` is removed and Lightning places the module.
    When the device map is a variable, it is reported, and a LightningModule wrapping that model
    gets `x = x.to(self.device)` for each tensor input at the top of `forward`.

    ## Why it breaks under DDP
    `device_map` attaches accelerate's `AlignDevicesHook`, which sends inputs to the device fixed at
    load time (often `cuda:0` on every rank), while Lightning moves rank N's module to `cuda:N`:
    "Expected all tensors to be on the same device". `device_map="auto"` is model parallelism, not
    DDP. Lightning's launchers set `LOCAL_RANK` in the processes they start (`ddp` runs the script
    again per rank; the first process, rank 0, has none: `os.environ.get(..., 0)`). Lightning's own
    4/8-bit path needs no hooks at all: `Trainer(plugins=BitsandbytesPrecision(mode="nf4-dq"))`.

    ## Before
    ```python
    self.model = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=True, device_map="auto")
    ```

    ## After
    ```python
    self.model = AutoModelForCausalLM.from_pretrained(
        name, load_in_8bit=True, device_map={"": int(os.environ.get("LOCAL_RANK", 0))})
    ```

    ## Fix safety
    - Only the load that builds the model trained under DDP can have a **safe** fix: a load in a
      LightningModule's `__init__`, `setup` or `configure_model`, or one in the same block as
      `trainer.fit(...)`, before it, whose model flows into fit's arguments through plain
      assignments. Any other load (a reload on rank 0 after training, a model for evaluation) keeps
      its device map on purpose, and without it stays on the CPU: **unsafe**.
    - **unsafe** in a file that builds no Trainer (or Fabric), or one whose strategy is not a literal
      DDP strategy: in one process the device map may be what is meant, and a LightningModule's file
      alone does not say how it is trained.
    - **unsafe** for `"auto"`, `"balanced"`, `"balanced_low_0"` and `"sequential"`: they spread the
      model over the visible GPUs, and whether it fits one cannot be decided statically.
    - `device_map` dropped (full precision), map `"cuda"`, `"cuda:0"`, `0` or `{"": 0}`: **safe**
      under the conditions above; Lightning then places the module on each rank's GPU.
    - The per-rank map `{"": int(os.environ.get("LOCAL_RANK", 0))}` (quantised): **safe** under the
      conditions above where `LOCAL_RANK` is the rank's: the strategy relaunches the script per rank
      (`"ddp"`, `"ddp_find_unused_parameters_*"`, `DDPStrategy` with the default start method), or
      the load runs in `setup`/`configure_model` (in the rank's own process, also under
      `ddp_spawn`). **unsafe** where the module is built in the launching process of `ddp_spawn`,
      `ddp_fork`, `ddp_notebook` or a `DDPStrategy(start_method=...)` (`LOCAL_RANK` is unset there,
      every copy would load onto GPU 0), and in a file that names SLURM (srun starts the processes
      itself and sets `SLURM_LOCALID`, not `LOCAL_RANK`). **unsafe** too where a Trainer's
      `devices` is not left out, `"auto"`, `-1`, a literal count or the indices 0..n-1 in order
      (`devices=[2, 3]`: `LOCAL_RANK` is the rank's index, not its GPU's, so the copies would load
      onto GPUs 0 and 1), and for a map to `"cuda"` (or `{"": "cuda"}`) in `setup` or
      `configure_model`: Lightning has made the rank's GPU the current device before they run, so
      the original already loads each copy onto its own GPU.
    - `x = x.to(self.device)` at the top of `forward` (a map held in a variable): **unsafe**, the
      device map stays and accelerate's hooks still send the inputs where it says.

    ## When it does not fix
    A device map held in a variable (only inputs are moved, and the finding says that removing the
    map is the real fix). Whether a model given `device_map="auto"` fits one GPU cannot be decided
    statically: the message says so. Scripts without Lightning or without DDP are left alone.
    """

    code = "DDP008"
    name = "device-map-under-ddp"
    summary = "from_pretrained(device_map=...) under DDP: accelerate pins inputs to one GPU on every rank"
    fixable = True
    triggers = ("device_map", "from_pretrained")
    lightning_only = True
    uses_facts = True

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        scan = _Scan(ctx, class_hierarchy(module, ctx.imports, ctx.facts.lightning_modules))
        walk(module, scan)
        replacements: dict[cst.Call, cst.Call] = {}
        needs_os = False
        wrapped_classes: dict[cst.ClassDef, cst.Call] = {}
        for call, cls in scan.loads:
            if cls is None and not scan.ddp_trainer:
                continue
            device_map = keyword(call, "device_map")
            flags = [keyword(call, k) for k in QUANTISED]
            quantised = any(_is_true(f) for f in flags) or keyword(call, "quantization_config") is not None
            unknown_quantisation = any(
                f is not None and not (isinstance(f.value, cst.Name) and f.value.value in ("True", "False")) for f in flags
            ) or any(a.star for a in call.args)
            code = cst.Module([]).code_for_node(device_map.value)
            kind = _map_kind(device_map.value)
            if kind == "per-rank":
                continue
            head = (
                f"from_pretrained(device_map={code}) under DDP: accelerate's hooks send every rank's inputs to the "
                "device fixed at load time while Lightning moves rank N's module to cuda:N (\"Expected all "
                "tensors to be on the same device\")"
            )
            tail = "; Lightning's own 4/8-bit path needs no hooks: Trainer(plugins=BitsandbytesPrecision(...))"
            if unknown_quantisation and not quantised:
                ctx.report(call, f"{head}; whether the model is quantised is not a literal here, so it is not "
                           f"rewritten: drop device_map for a full-precision model, use {PER_RANK_MAP} for a "
                           f"quantised one{tail}", fixable=False)
                continue
            if kind == "variable":
                ctx.report(call, f"{head}; the map is a variable, so it is not rewritten: drop it (or use "
                           f"{PER_RANK_MAP} for a quantised model){tail}", fixable=False)
                if cls is not None:
                    wrapped_classes.setdefault(cls, call)
                continue
            if quantised:
                fixed = with_keyword(call, "device_map", PER_RANK_MAP)
                advice = "a quantised model stays where it is loaded, so load each rank's copy on its own GPU"
            else:
                fixed = without_keyword(call, "device_map")
                advice = "let Lightning place the module: drop device_map"
            if kind == "auto":
                advice += (" (whether the model fits one GPU cannot be decided statically; if it does not, "
                           "device_map=\"auto\" is model parallelism, not DDP)")
            message = f"{head}; {advice}{tail}"
            if ctx.report_fix(call, message, call, fixed):
                replacements[call] = fixed
                needs_os |= quantised
        forward_moves = {}
        for cls, load in wrapped_classes.items():
            forward = _forward(cls)
            if forward is None:
                continue
            moves = _input_moves(forward)
            if not moves:
                continue
            line = ctx.position(load).start.line
            names = ", ".join(moves)
            if ctx.report(forward, f"forward moves its inputs ({names}) to self.device because the model loaded on line "
                          f"{line} keeps a device_map; removing the device map is the real fix", fixable=True):
                forward_moves[forward] = moves
        if not (replacements or forward_moves):
            return module
        result = module.visit(_Apply(replacements, forward_moves, ctx.view.positions))
        return ensure_import(result, "os") if needs_os else result

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """``apply``'s findings, from CPython's tree (report-only runs). Whether a fix keeps the
        call's comments (``report_fix``) is read from where they stand. Raises ``NeedsLibCST`` where
        the text cannot say what LibCST's tree would: a map or an argument in parentheses of its own
        (LibCST's code of it has them), a load inside an f-string, a string or line continuation
        over several lines quoted in a message, a comment line above ``x = x.to(self.device)`` in
        ``forward`` (whose statement it may belong to), and identifiers that Python renames (NFKC)."""
        kinds = tree_lightning.class_hierarchy(tree, ctx.imports, ctx.facts.lightning_modules)
        loads, ddp_trainer = _tree_scan(tree, ctx, kinds)
        run = safety.Run(tree, ctx.imports, ctx.view.text)
        trained = safety.training_loads(tree, kinds)
        wrapped_classes: dict[ast.ClassDef, ast.Call] = {}
        for call, cls, in_fstring, statement in loads:
            if cls is None and not ddp_trainer:
                continue
            device_map = tree_lightning.keyword(call, "device_map")
            flags = [tree_lightning.keyword(call, k) for k in QUANTISED]
            quantised = any(tree_lightning.is_true(f) for f in flags) or tree_lightning.keyword(call, "quantization_config") is not None
            unknown_quantisation = any(
                f is not None and not _tree_is_bool(f.value) for f in flags
            ) or tree_lightning.has_star(call)
            kind = _tree_map_kind(device_map.value)
            if kind == "per-rank":
                continue
            if in_fstring:
                raise NeedsLibCST("a load inside an f-string")
            head = _tree_head(tree_text.quoted(tree_text.keyword_value(device_map, ctx.view), statement, ctx.view))
            if unknown_quantisation and not quantised:
                ctx.report(call, f"{head}; whether the model is quantised is not a literal here, so it is not "
                           f"rewritten: drop device_map for a full-precision model, use {PER_RANK_MAP} for a "
                           f"quantised one{TREE_TAIL}", fixable=False)
                continue
            if kind == "variable":
                ctx.report(call, f"{head}; the map is a variable, so it is not rewritten: drop it (or use "
                           f"{PER_RANK_MAP} for a quantised model){TREE_TAIL}", fixable=False)
                if cls is not None:
                    wrapped_classes.setdefault(cls, call)
                continue
            if quantised:
                loses_comment = tree_lightning.has_comment(device_map.value, ctx.view)  # the value is replaced
                advice = "a quantised model stays where it is loaded, so load each rank's copy on its own GPU"
            else:
                loses_comment = _tree_removal_loses_comment(call, device_map, ctx)
                advice = "let Lightning place the module: drop device_map"
            if kind == "auto":
                advice += (" (whether the model fits one GPU cannot be decided statically; if it does not, "
                           "device_map=\"auto\" is model parallelism, not DDP)")
            message = f"{head}; {advice}{TREE_TAIL}"
            if loses_comment:
                ctx.report(call, message + " (not rewritten: a comment inside the call would be lost)", fixable=False)
            else:
                safe, why = safety.load_safety(call, trained.get(id(call)), run, quantised, device_map.value)
                ctx.report(call, message, fixable=True, safe=safe, why=why)
        for cls, load in wrapped_classes.items():
            forward = next((s for s in cls.body if isinstance(s, tree_lightning.FUNCTIONS) and s.name == "forward"), None)
            if forward is None:
                continue
            moves = _tree_input_moves(forward, ctx)
            if not moves:
                continue
            line = ctx.position(load).start.line
            names = ", ".join(moves)
            ctx.report(forward, f"forward moves its inputs ({names}) to self.device because the model loaded on line "
                       f"{line} keeps a device_map; removing the device map is the real fix", fixable=True,
                       why="the device map stays, and accelerate's hooks still send the inputs to the device it names")


def _is_true(arg: cst.Arg | None) -> bool:
    return arg is not None and isinstance(arg.value, cst.Name) and arg.value.value == "True"


def _map_kind(value: cst.BaseExpression) -> str:
    """'auto', 'single' (one fixed GPU), 'per-rank' (already follows LOCAL_RANK or is something else), 'variable'."""
    text = string_value(value)
    if text is not None:
        if text == "auto":
            return "auto"
        return "single" if text in SINGLE_DEVICE_STRINGS else "per-rank"
    if isinstance(value, cst.Integer):
        return "single" if value.evaluated_value == 0 else "per-rank"
    if isinstance(value, cst.Dict):
        elements = value.elements
        if len(elements) == 1 and isinstance(elements[0], cst.DictElement) and string_value(elements[0].key) == "":
            inner = elements[0].value
            if (isinstance(inner, cst.Integer) and inner.evaluated_value == 0) or string_value(inner) in ("cuda", "cuda:0"):
                return "single"
        return "per-rank"
    if isinstance(value, cst.Name) and value.value == "None":
        return "per-rank"  # no device map at all: nothing to fight Lightning
    if isinstance(value, (cst.Name, cst.Attribute, cst.Subscript)):
        return "variable"
    return "per-rank"


class _Scan(cst.CSTVisitor):
    def __init__(self, ctx: RuleContext, kinds: dict[str, str]):
        super().__init__()
        self.ctx = ctx
        self.kinds = kinds
        self.classes: list[cst.ClassDef | None] = [None]
        self.loads: list[tuple[cst.Call, cst.ClassDef | None]] = []
        self.ddp_trainer = False

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node if self.kinds.get(node.name.value) == "lightning" else self.classes[-1])

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained" and keyword(node, "device_map"):
            self.loads.append((node, self.classes[-1]))
        if lightning_name(self.ctx.imports, func) == "Trainer":
            strategy = keyword(node, "strategy")
            if strategy is not None:
                text = string_value(strategy.value)
                if (text or "").startswith("ddp") or (
                    isinstance(strategy.value, cst.Call) and lightning_name(self.ctx.imports, strategy.value.func) == "DDPStrategy"
                ):
                    self.ddp_trainer = True


def _forward(cls: cst.ClassDef) -> cst.FunctionDef | None:
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    return next((s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == "forward"), None)


def _input_moves(forward: cst.FunctionDef) -> list[str]:
    """Tensor parameters of ``forward`` not yet moved at its top: annotated Tensor, or used as one."""
    # A parameter with a default (``attention_mask=None``) may not be a tensor at all: left alone.
    params = [
        p for p in (*forward.params.posonly_params, *forward.params.params, *forward.params.kwonly_params)
        if p.default is None
    ]
    names = [p.name.value for p in params if p.name.value != "self"]
    used_as_tensor: set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if isinstance(node.value, cst.Name) and node.attr.value in TENSOR_METHODS:
                used_as_tensor.add(node.value.value)

    walk(forward.body, Collect())
    annotated = {
        p.name.value for p in params
        if p.annotation is not None and cst.Module([]).code_for_node(p.annotation.annotation).split(".")[-1] == "Tensor"
    }
    already = _already_moved(forward)
    return [n for n in names if (n in annotated or n in used_as_tensor) and n not in already]


def _already_moved(forward: cst.FunctionDef) -> set[str]:
    moved = set()
    body = forward.body.body if isinstance(forward.body, cst.IndentedBlock) else ()
    for statement in body:
        code = cst.Module([]).code_for_node(statement).strip()
        name, _, rest = code.partition(" = ")
        if rest == f"{name}.to(self.device)":
            moved.add(name)
    return moved


class _Apply(ReplaceCalls):
    def __init__(self, replacements, forward_moves, positions=None):
        super().__init__(replacements, positions, also=forward_moves)
        self.forward_moves = forward_moves

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        moves = self.forward_moves.get(original_node)
        if not moves or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        body = list(updated_node.body.body)
        start = 1 if body and _is_docstring(body[0]) else 0
        new = [cst.parse_statement(f"{name} = {name}.to(self.device)\n") for name in moves]
        return updated_node.with_changes(body=updated_node.body.with_changes(body=[*body[:start], *new, *body[start:]]))


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


# --- the same, on CPython's tree (``check``) ---------------------------------------------------

TREE_TAIL = "; Lightning's own 4/8-bit path needs no hooks: Trainer(plugins=BitsandbytesPrecision(...))"


def _tree_head(code: str) -> str:
    """The start of every load's message in ``apply``."""
    return (
        f"from_pretrained(device_map={code}) under DDP: accelerate's hooks send every rank's inputs to the "
        "device fixed at load time while Lightning moves rank N's module to cuda:N (\"Expected all "
        "tensors to be on the same device\")"
    )


def _tree_is_bool(value: ast.expr) -> bool:
    """``True`` or ``False`` (LibCST: those ``Name``s; here constants, and ``1 == True``)."""
    return isinstance(value, ast.Constant) and (value.value is True or value.value is False)


def _tree_map_kind(value: ast.expr) -> str:
    """``_map_kind`` on CPython's tree. ``True``/``False`` are ``Name``s to LibCST, hence variables."""
    text = tree_lightning.string_value(value)
    if text is not None:
        if text == "auto":
            return "auto"
        return "single" if text in SINGLE_DEVICE_STRINGS else "per-rank"
    if isinstance(value, ast.Constant):
        if type(value.value) is int:
            return "single" if value.value == 0 else "per-rank"
        return "variable" if _tree_is_bool(value) else "per-rank"  # None, ..., bytes, numbers
    if isinstance(value, ast.Dict):
        if len(value.keys) == 1 and value.keys[0] is not None and tree_lightning.string_value(value.keys[0]) == "":
            inner = value.values[0]
            if (isinstance(inner, ast.Constant) and type(inner.value) is int and inner.value == 0) or \
                    tree_lightning.string_value(inner) in ("cuda", "cuda:0"):
                return "single"
        return "per-rank"
    if isinstance(value, (ast.Name, ast.Attribute, ast.Subscript)):
        return "variable"
    return "per-rank"


def _tree_scan(tree: ast.Module, ctx: RuleContext, kinds: dict[str, str]):
    """``_Scan`` on CPython's tree: ([(load, its LightningModule class or None, whether it is inside
    an f-string, the statement it is in)] in LibCST's order, whether the file builds a DDP Trainer).
    A class's decorators and bases belong to it, as LibCST visits them after entering the class."""
    loads = []
    ddp_trainer = False
    pending: list[tuple[ast.AST, ast.ClassDef | None, bool, ast.AST]] = [(tree, None, False, tree)]
    while pending:
        node, cls, in_fstring, statement = pending.pop()
        if isinstance(node, ast.ClassDef) and kinds.get(node.name) == "lightning":
            cls = node
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "from_pretrained" and tree_lightning.keyword(node, "device_map"):
                loads.append((node, cls, in_fstring, statement))
            if not ddp_trainer and lightning_name(ctx.imports, func) == "Trainer":
                ddp_trainer = _tree_ddp_strategy(node, ctx)
        in_fstring = in_fstring or isinstance(node, ast.JoinedStr)
        pending.extend((child, cls, in_fstring, child if isinstance(child, ast.stmt) else statement)
                       for child in ast.iter_child_nodes(node))
    # LibCST's walk is pre-order in source order: the first variable load of a class is quoted.
    loads.sort(key=lambda load: (load[0].lineno, load[0].col_offset, -load[0].end_lineno, -load[0].end_col_offset))
    return loads, ddp_trainer


def _tree_ddp_strategy(trainer: ast.Call, ctx: RuleContext) -> bool:
    strategy = tree_lightning.keyword(trainer, "strategy")
    if strategy is None:
        return False
    return tree_lightning.is_ddp_strategy(strategy.value, ctx.imports)


def _tree_removal_loses_comment(call: ast.Call, device_map: ast.keyword, ctx: RuleContext) -> bool:
    """Whether ``without_keyword(call, "device_map")`` drops a comment. LibCST's ``Arg`` owns its
    comma and the whitespace after it, so removing the argument drops the comments up to the next
    argument; removing the last one, the next-to-last takes over its comma and what follows, and
    loses its own comma and what came before ``device_map``'s value; removing the only one, the
    comments after it go too."""
    arguments = tree_lightning.arguments_in_order(call)
    index = arguments.index(device_map)
    start, value_end = tree_text.start(device_map, ctx.view), tree_text.end(device_map.value, ctx.view)
    if index + 1 < len(arguments):
        nxt = arguments[index + 1]
        if tree_text.squeezed(ctx.view, value_end, tree_text.start(nxt, ctx.view)) != ",":
            raise NeedsLibCST("something besides a comma between device_map and the next argument")
        return tree_text.comment_in(ctx.view, start, tree_text.start(nxt, ctx.view))
    if index == 0:
        return tree_text.comment_in(ctx.view, start, tree_text.end(call, ctx.view))
    previous_end = tree_text.end(arguments[index - 1], ctx.view)
    if tree_text.squeezed(ctx.view, previous_end, start) != ",":
        raise NeedsLibCST("the argument before device_map ends in a parenthesis ast leaves out")
    return tree_text.comment_in(ctx.view, previous_end, value_end)


def _tree_input_moves(forward: ast.FunctionDef | ast.AsyncFunctionDef, ctx: RuleContext) -> list[str]:
    """``_input_moves`` on CPython's tree."""
    arguments = forward.args
    positional = [*arguments.posonlyargs, *arguments.args]
    without_default = positional[:len(positional) - len(arguments.defaults)]
    without_default += [p for p, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default is None]
    # ``without_default`` lists posonly, then the others, then keyword-only: LibCST's order.
    names = [p.arg for p in without_default if p.arg != "self"]
    used_as_tensor: set[str] = set()
    for statement in forward.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in TENSOR_METHODS:
                used_as_tensor.add(node.value.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                used_as_tensor |= _tree_import_owners(node)
    annotated = {p.arg for p in without_default if p.annotation is not None and _tree_annotation_code(p, ctx).split(".")[-1] == "Tensor"}
    already = _tree_already_moved(forward, ctx)
    return [n for n in names if (n in annotated or n in used_as_tensor) and n not in already]


def _tree_import_owners(node: ast.Import | ast.ImportFrom) -> set[str]:
    """LibCST spells a dotted module name (``import x.view``) as ``Attribute`` nodes, which
    ``_input_moves`` takes for a tensor's method like any other: ``x`` then counts as a tensor."""
    dotted = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    return {parts[0] for parts in (name.split(".") for name in dotted) if len(parts) > 1 and parts[1] in TENSOR_METHODS}


def _tree_annotation_code(param: ast.arg, ctx: RuleContext) -> str:
    """LibCST's code of a parameter's annotation: its source text (with its own parentheses there)."""
    after_name = tree_text.start(param, ctx.view) + len(param.arg)
    if tree_text.squeezed(ctx.view, after_name, tree_text.start(param.annotation, ctx.view)) != ":":
        raise NeedsLibCST("an annotation in its own parentheses (or a comment before it)")
    return ctx.view.positions.segment(param.annotation)


def _tree_already_moved(forward: ast.FunctionDef | ast.AsyncFunctionDef, ctx: RuleContext) -> set[str]:
    """``_already_moved``: statements of ``forward``'s block whose code (LibCST's statement line:
    its whole lines, the comment lines above it included) is ``x = x.to(self.device)``."""
    view = ctx.view
    if view.one_line_body(forward.body):
        return set()  # ``def forward(self, x): ...``: no block of statements to LibCST
    moved = set()
    for statement in forward.body:
        if not isinstance(statement, ast.Assign):
            continue
        code = _tree_lines(ctx, statement.lineno, statement.end_lineno).strip()
        name, _, rest = code.partition(" = ")
        if rest != f"{name}.to(self.device)":
            continue
        above = statement.lineno - 1
        while above >= 1 and (not _tree_lines(ctx, above, above).strip() or _tree_lines(ctx, above, above).lstrip().startswith("#")):
            if _tree_lines(ctx, above, above).strip():
                raise NeedsLibCST("a comment line above a move in forward")  # LibCST's leading lines, or not
            above -= 1
        moved.add(name)
    return moved


def _tree_lines(ctx: RuleContext, first: int, last: int) -> str:
    """Lines ``first`` to ``last`` of the source (as LibCST and ``ast`` count lines), without the
    last one's line break."""
    text, positions = ctx.view.text, ctx.view.positions
    start = positions.line_start(first)
    end = tree_text.LINE_BREAK.search(text, positions.line_start(last))
    return text[start:end.start() if end else len(text)]

