"""DDP008 device-map-under-ddp: accelerate's ``device_map`` fights Lightning's placement under DDP."""

from __future__ import annotations

import ast
import io
import tokenize

from ddpfix.ast_walk import child_nodes, walk
from ddpfix import edits
from ddpfix.edits import Span
from ddpfix.analysis import lightning as tree_lightning
from ddpfix.analysis import tree_text as tree_text
from ddpfix.rules.base import Rule, RuleContext, TreeView, clip

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
    Every fix is **unsafe** (offered for review with `--unsafe-fixes`): moving a loaded model off the
    device its map names is not proven harmless. The model may be used where Lightning does not place
    it — a `generate` or an embedding pass before `fit`, a teacher handed to a data module, a metric,
    another file (or a notebook) that builds the class for inference — and there it would no longer
    sit where its inputs are sent; those uses are not read. Dropping `device_map` also turns off
    transformers' low-memory loading: each rank then builds the whole model in host memory first
    (an out-of-memory risk for large models on several ranks), and before transformers 4.36 the
    initial values of weights missing from the checkpoint are drawn in another order. And whether
    `LOCAL_RANK` is each process's GPU depends on how the program is started (srun, a launch script, a
    device the program sets itself), which is not read. The reason names, besides, what the
    analysis does know against the fix:
    - the load is not shown to build the model trained under DDP (a LightningModule's `__init__`,
      `setup` or `configure_model`, or a load before `trainer.fit(...)` in the same block whose model
      flows into fit's arguments through plain assignments): a reload on rank 0 after training or a
      model for evaluation keeps its device map on purpose, and without it stays on the CPU;
    - the file builds no Trainer (or Fabric), or one whose strategy is not a literal DDP strategy:
      in one process the device map may be what is meant;
    - `"auto"`, `"balanced"`, `"balanced_low_0"` and `"sequential"` spread the model over the
      visible GPUs, and whether it fits one cannot be decided statically;
    - for the per-rank map `{"": int(os.environ.get("LOCAL_RANK", 0))}` (quantised): the module is
      built in the launching process of `ddp_spawn`, `ddp_fork`, `ddp_notebook` or a
      `DDPStrategy(start_method=...)` (`LOCAL_RANK` is unset there, every copy would load onto GPU 0);
      the file names SLURM (srun sets `SLURM_LOCALID`, not `LOCAL_RANK`); a Trainer's `devices` is
      not left out, `"auto"`, `-1`, a literal count or the indices 0..n-1 in order (`devices=[2, 3]`:
      `LOCAL_RANK` is the rank's index, not its GPU's); or the map is to `"cuda"` (or `{"": "cuda"}`)
      in `setup` or `configure_model`, where Lightning has already made the rank's GPU the current
      device, so the original loads each copy onto its own GPU.
    - `x = x.to(self.device)` at the top of `forward` (a map held in a variable): the device map
      stays and accelerate's hooks still send the inputs where it says.

    ## When it does not fix
    A device map held in a variable (only inputs are moved, and the finding says that removing the
    map is the real fix). Whether a model given `device_map="auto"` fits one GPU cannot be decided
    statically: the message says so. Scripts without Lightning or without DDP are left alone. A
    quantised load inside an f-string is reported, not rewritten: before Python 3.12 the per-rank
    map's quotes could close the f-string.
    """

    code = "DDP008"
    gpu_only = True
    name = "device-map-under-ddp"
    summary = "from_pretrained(device_map=...) under DDP: accelerate pins inputs to one GPU on every rank"
    fixable = True
    triggers = ("device_map", "from_pretrained")
    lightning_only = True
    uses_facts = True

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """The one analysis: findings, each fix's applicability, and its typed edits (the device map
        dropped, or set to the per-rank map with ``import os``; or the inputs moved at the top of
        ``forward``), which the engine carries out on LibCST's tree. A fix that would lose a comment
        inside the call is not offered: the finding says so."""
        # Imported here, not at the top: a run loads every rule, and only files this rule checks need it.
        from ddpfix.rules import _device_map_under_ddp_safety as safety

        view = ctx.view
        kinds = tree_lightning.class_hierarchy(tree, ctx.imports, ctx.facts.of_kind("LightningModule", ctx.path))
        loads, ddp_trainer = _scan(tree, ctx, kinds)
        run = safety.Run(tree, ctx.imports, view.text)
        trained = safety.training_loads(tree, kinds)
        wrapped_classes: dict[ast.ClassDef, ast.Call] = {}
        for call, cls, statement, in_fstring in loads:
            if cls is None and not ddp_trainer:
                continue
            device_map = tree_lightning.keyword(call, "device_map")
            flags = [tree_lightning.keyword(call, k) for k in QUANTISED]
            quantised = any(tree_lightning.is_true(f) for f in flags) or tree_lightning.keyword(call, "quantization_config") is not None
            unknown_quantisation = any(
                f is not None and not _is_bool(f.value) for f in flags
            ) or tree_lightning.has_star(call)
            kind = _map_kind(device_map.value)
            if kind == "per-rank":
                continue
            # LibCST's value of the keyword: with its own parentheses, which ``ast``'s value leaves out.
            value = (_value_start(device_map, view), tree_text.end(device_map, view))
            code = tree_text.code_between(view, *value, statement)
            head, short = _head(code), f"from_pretrained(device_map={clip(code)}) under DDP pins inputs to one GPU"
            if unknown_quantisation and not quantised:
                ctx.report(call, short, detail=f"{head}; whether the model is quantised is not a literal here, so it is not "
                           f"rewritten: drop device_map for a full-precision model, use {PER_RANK_MAP} for a "
                           f"quantised one{TAIL}", fixable=False)
                continue
            if kind == "variable":
                ctx.report(call, short, detail=f"{head}; the map is a variable, so it is not rewritten: drop it (or use "
                           f"{PER_RANK_MAP} for a quantised model){TAIL}", fixable=False)
                if cls is not None:
                    wrapped_classes.setdefault(cls, call)
                continue
            where = Span.of(ctx.position(call))
            if quantised:
                loses_comment = tree_text.comment_in(view, *value)  # the value is replaced
                fix = [edits.SetKeyword(where, "device_map", PER_RANK_MAP), edits.AddImport("os")]
                advice = "a quantised model stays where it is loaded, so load each rank's copy on its own GPU"
            else:
                loses_comment = _removal_loses_comment(call, device_map, view)
                fix = [edits.DropKeyword(where, "device_map")]
                advice = "let Lightning place the module: drop device_map"
            if kind == "auto":
                advice += (" (whether the model fits one GPU cannot be decided statically; if it does not, "
                           "device_map=\"auto\" is model parallelism, not DDP)")
            message = f"{head}; {advice}{TAIL}"
            if loses_comment:
                ctx.report(call, short, detail=message + " (not rewritten: a comment inside the call would be lost)",
                           fixable=False)
            elif quantised and in_fstring:
                # Before Python 3.12 an f-string's expressions cannot hold its own quote character.
                ctx.report(call, short, detail=message + " (not rewritten: inside an f-string, the quotes of the "
                           "per-rank map could end the string)", fixable=False)
            else:
                safe, why = safety.load_safety(call, trained.get(id(call)), run, quantised, device_map.value)
                ctx.report(call, short, detail=message, fixable=True, safe=safe, why=why, edits=fix)
        for cls, load in wrapped_classes.items():
            _report_input_moves(cls, load, ctx)


def _report_input_moves(cls: ast.ClassDef, load: ast.Call, ctx: RuleContext) -> None:
    """A LightningModule whose model keeps a device map held in a variable (``load``): its
    ``forward`` gets ``x = x.to(self.device)`` for each tensor input it does not move yet."""
    forward = next((s for s in cls.body if isinstance(s, tree_lightning.FUNCTIONS) and s.name == "forward"), None)
    if forward is None:
        return
    moves = _input_moves(forward, ctx.view)
    if not moves:
        return
    line = ctx.position(load).start.line
    names = ", ".join(moves)
    moved = tuple(f"{name} = {name}.to(self.device)" for name in moves)
    ctx.report(forward, f"forward: move inputs to self.device (device_map kept on line {line})",
               detail=f"forward moves its inputs ({names}) to self.device because the model loaded on line "
               f"{line} keeps a device_map; removing the device map is the real fix", fixable=True,
               why="the device map stays, and accelerate's hooks still send the inputs to the device it names",
               edits=[edits.PrependStatements(Span.of(ctx.position(forward)), moved)])

TAIL = "; Lightning's own 4/8-bit path needs no hooks: Trainer(plugins=BitsandbytesPrecision(...))"


def _head(code: str) -> str:
    """The start of every load's message, ``code`` the device map's."""
    return (
        f"from_pretrained(device_map={code}) under DDP: accelerate's hooks send every rank's inputs to the "
        "device fixed at load time while Lightning moves rank N's module to cuda:N (\"Expected all "
        "tensors to be on the same device\")"
    )


def _is_bool(value: ast.expr) -> bool:
    """``True`` or ``False`` (not ``1``, which equals ``True``)."""
    return isinstance(value, ast.Constant) and (value.value is True or value.value is False)


def _map_kind(value: ast.expr) -> str:
    """'auto', 'single' (one fixed GPU), 'per-rank' (already follows LOCAL_RANK or is something
    else), 'variable'. ``True``/``False`` count as variables: they name no device map."""
    text = tree_lightning.string_value(value)
    if text is not None:
        if text == "auto":
            return "auto"
        return "single" if text in SINGLE_DEVICE_STRINGS else "per-rank"
    if isinstance(value, ast.Constant):
        if type(value.value) is int:
            return "single" if value.value == 0 else "per-rank"
        return "variable" if _is_bool(value) else "per-rank"  # None (no device map at all), ..., bytes, numbers
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


def _scan(tree: ast.Module, ctx: RuleContext, kinds: dict[str, str]):
    """([(load, its LightningModule class or None, the statement it is in, whether it is inside an
    f-string)] in source order, whether the file builds a DDP Trainer). A class's decorators and
    bases belong to it."""
    loads = []
    ddp_trainer = False
    pending: list[tuple[ast.AST, ast.ClassDef | None, ast.AST, bool]] = [(tree, None, tree, False)]
    while pending:
        node, cls, statement, in_fstring = pending.pop()
        if isinstance(node, ast.ClassDef) and kinds.get(node.name) == "lightning":
            cls = node
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "from_pretrained" and tree_lightning.keyword(node, "device_map"):
                loads.append((node, cls, statement, in_fstring))
            if not ddp_trainer and tree_lightning.lightning_name(ctx.imports, func) == "Trainer":
                ddp_trainer = _ddp_strategy(node, ctx)
        in_fstring = in_fstring or isinstance(node, ast.JoinedStr)
        pending.extend((child, cls, child if isinstance(child, ast.stmt) else statement, in_fstring)
                       for child in child_nodes(node))
    # In source order, outer calls first: the first variable load of a class is the one quoted.
    loads.sort(key=lambda load: (load[0].lineno, load[0].col_offset, -load[0].end_lineno, -load[0].end_col_offset))
    return loads, ddp_trainer


def _ddp_strategy(trainer: ast.Call, ctx: RuleContext) -> bool:
    strategy = tree_lightning.keyword(trainer, "strategy")
    if strategy is None:
        return False
    return tree_lightning.is_ddp_strategy(strategy.value, ctx.imports)


# --- where the arguments stand in the text ---------------------------------------------------------
# ``ast`` leaves out the parentheses around an expression, LibCST keeps them in the expression, and
# its ``Arg`` owns the comma after it and the layout that follows: what a fix keeps or drops.


def _next_code(text: str, offset: int) -> int:
    """The first offset at or after ``offset`` that holds code, past whitespace, line
    continuations and comments. Only for layout between tokens, where no string can stand."""
    while offset < len(text):
        char = text[offset]
        if char == "#":
            line_break = tree_text.LINE_BREAK.search(text, offset)
            offset = line_break.start() if line_break else len(text)
        elif char.isspace() or char == "\\":
            offset += 1
        else:
            break
    return offset


def _name_end(text: str, offset: int) -> int:
    """Where the name at ``offset`` ends in the text (``ast`` spells names NFKC-normalised, which
    may be longer or shorter than they are written)."""
    end = offset + 1
    while end < len(text) and text[offset:end + 1].isidentifier():
        end += 1
    return end


def _value_start(keyword: ast.keyword, view: TreeView) -> int:
    """Where a keyword argument's value starts after its ``=``, its own parentheses included."""
    equals = _next_code(view.text, _name_end(view.text, tree_text.start(keyword, view)))
    return _next_code(view.text, equals + 1)


def _argument_ranges(call: ast.Call, view: TreeView) -> list[tuple[int, int]]:
    """Where each argument of ``call`` starts and ends (source order), as LibCST's ``Arg`` holds
    it without its comma: a keyword or a starred argument as ``ast`` has it (parentheses around
    the value included), a positional one with any parentheses of its own (``f((name), ...)``)."""
    text = view.text
    offset = _next_code(text, tree_text.end(call.func, view))
    while text[offset] == ")":  # the function's own parentheses: ``(model.from_pretrained)(...)``
        offset = _next_code(text, offset + 1)
    ranges = []
    for argument in tree_lightning.arguments_in_order(call):
        begin = _next_code(text, offset + 1)  # past the call's "(" or the comma before
        finish = tree_text.end(argument, view)
        if not isinstance(argument, (ast.keyword, ast.Starred)):
            for _ in range(_opened(text, begin, tree_text.start(argument, view))):
                finish = _next_code(text, finish) + 1  # past one ")"
        ranges.append((begin, finish))
        offset = _next_code(text, finish)  # the comma after it, or the call's ")"
    return ranges


def _opened(text: str, begin: int, stop: int) -> int:
    """How many parentheses open between ``begin`` and ``stop`` (nothing else but layout stands there)."""
    count, offset = 0, _next_code(text, begin)
    while offset < stop:
        count += 1
        offset = _next_code(text, offset + 1)
    return count


def _removal_loses_comment(call: ast.Call, device_map: ast.keyword, view: TreeView) -> bool:
    """Whether dropping ``device_map`` (``DropKeyword``) drops a comment. The argument goes with its
    comma and the layout after it, up to the next argument; removing the last one, the one before
    takes over its comma and what follows, and loses its own comma and what stood between the
    two; removing the only one, the layout after it goes too."""
    ranges = _argument_ranges(call, view)
    index = tree_lightning.arguments_in_order(call).index(device_map)
    begin, finish = ranges[index]
    if index + 1 < len(ranges):
        return tree_text.comment_in(view, begin, ranges[index + 1][0])
    if index == 0:
        return tree_text.comment_in(view, begin, tree_text.end(call, view))
    return tree_text.comment_in(view, ranges[index - 1][1], finish)


# --- forward's inputs ------------------------------------------------------------------------------


def _input_moves(forward: ast.FunctionDef | ast.AsyncFunctionDef, view: TreeView) -> list[str]:
    """Tensor parameters of ``forward`` not yet moved at its top: annotated Tensor, or used as one.
    A parameter with a default (``attention_mask=None``) may not be a tensor at all: left alone."""
    arguments = forward.args
    positional = [*arguments.posonlyargs, *arguments.args]
    without_default = positional[:len(positional) - len(arguments.defaults)]
    without_default += [p for p, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default is None]
    names = [p.arg for p in without_default if p.arg != "self"]
    used_as_tensor: set[str] = set()
    for statement in forward.body:
        for node in walk(statement):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in TENSOR_METHODS:
                used_as_tensor.add(node.value.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                used_as_tensor |= _import_owners(node)
    annotated = {p.arg for p in without_default if _annotated_tensor(p, view)}
    already = _already_moved(forward, view)
    return [n for n in names if (n in annotated or n in used_as_tensor) and n not in already]


def _import_owners(node: ast.Import | ast.ImportFrom) -> set[str]:
    """``import x.view`` counts ``x`` as a tensor, as a dotted name ``x.view`` would (the rule's
    LibCST version read the module name's ``Attribute`` nodes, and its findings are kept)."""
    dotted = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    return {parts[0] for parts in (name.split(".") for name in dotted) if len(parts) > 1 and parts[1] in TENSOR_METHODS}


def _annotated_tensor(param: ast.arg, view: TreeView) -> bool:
    """``x: Tensor`` or ``x: torch.Tensor`` as written: an annotation in parentheses of its own,
    or with spaces around its dot, is not read."""
    if param.annotation is None:
        return False
    colon = _next_code(view.text, _name_end(view.text, tree_text.start(param, view)))
    if _next_code(view.text, colon + 1) != tree_text.start(param.annotation, view):
        return False  # ``x: (Tensor)``
    return view.positions.segment(param.annotation).split(".")[-1] == "Tensor"


def _already_moved(forward: ast.FunctionDef | ast.AsyncFunctionDef, view: TreeView) -> set[str]:
    """Parameters that a statement line of ``forward``'s block moves and does nothing else:
    ``x = x.to(self.device)``, with no comment beside it or on a line of its own above it."""
    if view.one_line_body(forward.body):
        return set()  # ``def forward(self, x): ...``: no block of statements
    moved = set()
    for index, statement in enumerate(forward.body):
        if not isinstance(statement, ast.Assign):
            continue
        code = _source_lines(view, statement.lineno, statement.end_lineno).strip()
        name, _, rest = code.partition(" = ")
        if rest == f"{name}.to(self.device)" and not _comment_above(forward, index, view):
            moved.add(name)
    return moved


def _source_lines(view: TreeView, first: int, last: int) -> str:
    """Lines ``first`` to ``last`` of the source, without the last one's line break."""
    text, positions = view.text, view.positions
    start = positions.line_start(first)
    end = tree_text.LINE_BREAK.search(text, positions.line_start(last))
    return text[start:end.start() if end else len(text)]


# --- comment lines above a statement ---------------------------------------------------------------


def _comment_above(function: ast.FunctionDef | ast.AsyncFunctionDef, index: int, view: TreeView) -> bool:
    """Whether a comment line stands above statement ``index`` of ``function``'s block and belongs
    to it (LibCST's ``leading_lines``): every comment line between it and the statement before
    it, except those indented into the last block of a compound statement before it (down to the
    last line so indented: that block's ``footer``)."""
    block = function.body
    statement = block[index]
    if index == 0:
        return _comment_after_header(function, statement, view)
    previous = block[index - 1]
    first = previous.end_lineno + 1
    indent = _last_block_indent(previous, view)
    if indent is not None:
        kept_below = [line for line in range(first, statement.lineno) if _source_lines(view, line, line).startswith(indent)]
        first = kept_below[-1] + 1 if kept_below else first
    return any(_source_lines(view, line, line).lstrip().startswith("#") for line in range(first, statement.lineno))


def _comment_after_header(function: ast.FunctionDef | ast.AsyncFunctionDef, statement: ast.stmt, view: TreeView) -> bool:
    """Whether a comment line stands between the function's header (its ``def`` line(s), whose
    comments are the header's) and its first statement."""
    fragment = view.text[tree_text.start(function, view):view.positions.line_start(statement.lineno)]
    header_ended = False
    try:
        for token in tokenize.generate_tokens(io.StringIO(fragment).readline):
            if token.type == tokenize.NEWLINE:
                header_ended = True
            elif token.type == tokenize.COMMENT and header_ended:
                return True
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # the fragment stops where the body starts: every comment before it has been seen
    return False


def _last_block_indent(statement: ast.stmt, view: TreeView) -> str | None:
    """The indentation of a compound statement's last block (the statements of an ``else``,
    ``finally``, last ``except`` or ``case``, or its body), None for a simple statement or a block
    on the header's own line."""
    block = _last_block(statement, view)
    if not block or view.one_line_body(block):
        return None
    first = block[0]
    return view.text[view.positions.line_start(first.lineno):tree_text.start(first, view)]


def _last_block(statement: ast.stmt, view: TreeView) -> list[ast.stmt] | None:
    if isinstance(statement, ast.If) and len(statement.orelse) == 1 and _is_elif(statement.orelse[0], view):
        return _last_block(statement.orelse[0], view)
    for field in ("finalbody", "orelse"):
        if getattr(statement, field, None):
            return getattr(statement, field)
    if getattr(statement, "handlers", None):
        return statement.handlers[-1].body
    if isinstance(statement, ast.Match):
        return statement.cases[-1].body
    return getattr(statement, "body", None)


def _is_elif(statement: ast.stmt, view: TreeView) -> bool:
    return isinstance(statement, ast.If) and view.text.startswith("elif", tree_text.start(statement, view))
