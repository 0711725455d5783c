"""DDP008 device-map-under-ddp: accelerate's ``device_map`` fights Lightning's placement under DDP."""

from __future__ import annotations

import libcst as cst

from ddpfix.transforms._args import ReplaceCalls, keyword, with_keyword, without_keyword
from ddpfix.transforms._edit_imports import ensure_import
from ddpfix.transforms._lightning import class_hierarchy, lightning_name, string_value
from ddpfix.transforms.base import Rule, RuleContext
from ddpfix.transforms._walk import walk

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
    DDP. Lightning's launcher sets `LOCAL_RANK` in every process. Lightning's own 4/8-bit path needs
    no hooks at all: `Trainer(plugins=BitsandbytesPrecision(mode="nf4-dq"))`.

    ## Before
    ```python
    self.model = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=True, device_map="auto")
    ```

    ## After
    ```python
    self.model = AutoModelForCausalLM.from_pretrained(
        name, load_in_8bit=True, device_map={"": int(os.environ.get("LOCAL_RANK", 0))})
    ```

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
