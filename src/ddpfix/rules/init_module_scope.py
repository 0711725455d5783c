"""DDP001 init-module-scope: only model construction belongs inside ``init_module()``."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import field
from typing import TYPE_CHECKING

from ddpfix.ast_walk import child_nodes, walk
from ddpfix import edits
from ddpfix.edits import MODULE, Span
from ddpfix.imports import TREE_COMPOUND, dotted_name, tree_blocks
from ddpfix.lazy_regex import lazy_compile
from ddpfix.analysis.ast_shapes import arguments, every_node, last_name
from ddpfix.analysis.text import alias_names, aliased, call_text, calls, headers, starts_a_word
from ddpfix.analysis.lightning import (
                                       LIGHTNING_PACKAGES, arguments_in_order, child_blocks, class_hierarchy, device_kind, is_torch_nn_module, lightning_name,
                                       )
from ddpfix.analysis.names import root_name, statement_names
from ddpfix.analysis.tree_text import code_between, comment_in
from ddpfix.records import record
from ddpfix.rules.base import Rule, RuleContext, clip

if TYPE_CHECKING:  # loaded when a file first needs its effects read (most files never do)
    from ddpfix.analysis.effects import Effects

TRAINERS = frozenset({"Trainer", "Fabric"})
RUN_METHODS = frozenset({"fit", "validate", "test", "predict"})
SETUP_METHODS = frozenset({"setup", "setup_module"})
# Words in a class or variable name that say "data", not "model".
DATA_WORDS = lazy_compile(r"data|loader|sampler|tokeni[sz]er|processor|collat|transform|feature_?extractor|config", re.I)
MODEL_LOADERS = frozenset({"load_from_checkpoint", "from_pretrained"})
# Libraries whose classes are known not to be models (torch.nn's are recognised before this applies).
LIBRARIES = frozenset({
    "torch", "lightning", "pytorch_lightning", "lightning_fabric", "torchmetrics", "numpy", "pandas",
    "os", "sys", "pathlib", "json", "random", "math", "logging", "datasets", "wandb",
})

_DIGIT = lazy_compile(rb"\d")


def _after_def(data: bytes, pos: int) -> bool:
    """``def init_module(`` is a definition, not a call."""
    before = data[max(0, pos - 64):pos].rstrip()
    return before.endswith(b"def") and starts_a_word(before, len(before) - 3)


def _may_be_cuda_device(call: ast.Call) -> bool:
    """``torch.device("cuda")``, ``th.device(0)``, ``device(f"cuda:{i}")`` — not ``torch.cuda.device(i)``
    (a device index context of its own, all over torch's tests), which ``check`` does not take for
    ``torch.device``."""
    if isinstance(call.func, ast.Attribute) and not isinstance(call.func.value, ast.Name):
        return False
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "type"), None)
    if isinstance(first, ast.Constant) and isinstance(first.value, int) and not isinstance(first.value, bool):
        return True  # an ordinal is a CUDA device
    return "cuda" in ast.dump(call)


def _may_be_cuda_value(node: ast.expr) -> bool:
    """What ``_lightning.device_kind`` may call ``"cuda"``: a string or f-string naming it, an
    ordinal, ``torch.device(...)`` of one."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return True
    return (isinstance(node, ast.Call) and _may_be_cuda_device(node)) or "cuda" in ast.dump(node)


def _imports_lightning(imports) -> bool:
    return any(target.split(".", 1)[0] in LIGHTNING_PACKAGES for found in imports.targets.values() for target in found)


def _plain_torch(ctx: RuleContext) -> bool:
    """A file with neither Lightning nor data loading (no import of ``torch.utils.data``, no mention
    of it): its ``with torch.device("cuda"):`` blocks compute on the GPU on purpose, and there is no
    sampler for them to break. They are not reported."""
    if _imports_lightning(ctx.imports) or b"utils.data" in ctx.data:
        return False
    return not any(target.startswith("torch.utils.data") for found in ctx.imports.targets.values() for target in found)


class InitModuleScope(Rule):
    """
    # DDP001 init-module-scope

    ## What it does
    Finds data work and training calls inside `with trainer.init_module():` (or
    `fabric.init_module()`, or `with torch.device("cuda"):`) and moves them out, keeping only model
    construction inside. Statements the model needs (`dm = DM(); model = Net(vocab=dm.vocab_size)`)
    go before the `with`, the rest after it, each in its original order with its comments. When
    nothing stays inside, the `with` goes and its body is dedented. Also reports
    `torch.set_default_device("cuda")` at module level in a script that loads data.

    A block is reported only where something inside is known to load data or to train: a call into
    `torch.utils.data` (or Hugging Face `datasets`, torchvision's, torchaudio's, torchtext's
    datasets), a LightningDataModule or Dataset class of the file or of the project (read across
    files), a class the file imports from a module it cannot read whose name says data module,
    dataset, loader or sampler, a `*_dataloader()` hook, Fabric's `setup_dataloaders`, or a run
    (`fit`/`validate`/`test`/`predict`) of a known Trainer. Model work alone (construction,
    adapters added by a helper, a model from a factory, a KV cache or test inputs built on the GPU
    on purpose) is not: an unknown call is not taken for data by its name.

    A `with torch.device("cuda"):` block in a file that neither imports Lightning nor loads data
    (no `torch.utils.data`) is not reported: plain PyTorch puts its math on the GPU that way on
    purpose, and there is no sampler for it to break.

    ## Why it breaks under DDP
    `init_module()` makes the root device the default device: every tensor factory inside lands on
    the GPU (and, with `"bf16-true"`/`"16-true"`, in that dtype). `trainer.fit` run inside it makes
    the samplers' `torch.randperm` land on the GPU while their generators are on the CPU: "Expected a
    'cuda' device type for generator but found 'cpu'", then "Please call `iter(combined_loader)`
    first". With `ddp` every rank re-runs the script and enters the block; with `ddp_spawn` `fit`
    runs in children that never entered it, which is why it seemed to work.

    ## Before
    ```python
    with trainer.init_module():
        model = LitModel()
        dm = MNISTDataModule()
        trainer.fit(model, datamodule=dm)
    ```

    ## After
    ```python
    with trainer.init_module():
        model = LitModel()
    dm = MNISTDataModule()
    trainer.fit(model, datamodule=dm)
    ```

    ## When it does not fix
    Reported without a rewrite when moving is not provably order-safe: a statement that would move
    reads or changes a name that a model statement it jumps over binds, reads or changes, or one
    the `with` header reads (`init_module(empty_init=ckpt_path is not None)`); `return`/`yield`/`break`/`continue` in the block; an `if`/`for`/`try`/`with` inside that mixes
    model and data work; several context managers in one `with`; a one-line `with`; a block that
    would go with a comment inside its `with (...)` header (the comment would go with it).
    `torch.set_default_device("cuda")` is always only reported.

    ## Fix safety
    Which statement is model construction and which is data work is partly a guess from names
    (`Model()`, `GPT()` stay; `build_backbone(64)`, `Transformer(...)` would leave). A fix is
    **safe** only where the statements that leave the block are *known* not to build a model nor
    to create tensors whose dtype or device the block decides, none of them runs training, and
    nothing with unknown effects changes its order; otherwise it is **unsafe** (`--unsafe-fixes`),
    with what was not proven.

    - **Move data work out of the block** (before or after it): safe when every statement that
      leaves is known: pure (literals, names, `len`/`range`/`list`/..., `os.path.join`,
      `torch.Generator().manual_seed(n)`, attribute and item reads of objects whose class is
      known: Python values, torch's objects, an argparse namespace, a data class of this file built
      from such; not of another file's object, a parameter, a function's result: a property,
      `__getattr__` or `__getitem__` there may build tensors), a `torch.utils.data` constructor that
      only stores its arguments (`DataLoader`, `TensorDataset`, `Subset`, `ConcatDataset`, the
      samplers but `WeightedRandomSampler`/`DistributedSampler`), `random_split` (it draws from the
      CPU generator it is given, inside the block or not), or a `Dataset`/`LightningDataModule`
      subclass of this file whose `__init__` only stores its arguments: plain stores `self.x = x`
      of its parameters (or of Python values), `super().__init__()`, `self.save_hyperparameters()`,
      and whose reads only return what it holds (`__len__`, `__getitem__`, a property: one
      `return` of a pure expression). A read runs where the statement runs: `len(ds)`, and
      `DataLoader(ds, shuffle=True)`, `RandomSampler`, `ConcatDataset`, `random_split`, which ask
      the length; a `__len__` that builds the data lazily builds it in the block's dtype inside
      and in float32 outside (review round 15: other weights under `"bf16-true"`).
      Unsafe for any other call: an imported `DataModule()`, `load_dataset()`, `dm.setup()`, a
      tokenizer's `from_pretrained`, or a call the rule took for data by its name
      (`build_backbone(64)`, `torchvision.models.resnet18()`, `hydra.utils.instantiate(cfg.net)`,
      `Transformer(...)`) may build a model (with `empty_init=True` fully built on every rank, with
      `"bf16-true"` in another dtype), draw random numbers or create tensors whose generator, device
      and dtype the block decides. A `Dataset` of this file whose `__init__` draws (`torch.randn`)
      or computes (`self.images = images / 255`: uint8 images become the block's default dtype,
      float64 under `"64-true"`, float32 outside) is unsafe too.
    - **Arithmetic** (`+`, `/`, `-x`, comparisons, `+=`, `sum`/`min`/`max`) is pure only on
      operands known to be Python values, not tensors: literals, `len(...)`, `int(...)`, names the
      file binds only to such values (`steps = -(-len(ds) // (batch_size * 2))` leaves safely).
      On anything else it may compute with tensors: `len(dataset) / counts` (an integer tensor)
      gives the block's default dtype inside (float64 under `"64-true"`, bf16 under `"bf16-true"`)
      and float32 outside, where a `cross_entropy(..., weight=...)` then fails; unsafe.
    - **Reorder** (a statement moves past model construction or other kept work): safe only when
      the moved statement and every statement it passes are pure. Model construction draws from the
      global random state, so moving `random_split(...)`, a drawing `Dataset`, or a helper that
      writes a file the model reads past it is unsafe (another split, other weights,
      `FileNotFoundError`). Moves that would change what a name holds are refused (no fix), and
      so is a move before the block of a store into an object its `with` header reads
      (`args.ckpt = ...` before `init_module(empty_init=args.ckpt is not None)`), or of any store
      where the header calls a function.
    - **A receiver not built here** (`def run(trainer): with trainer.init_module():`, or
      `instantiate(cfg.trainer)`): reported in a file that imports Lightning (`init_module` is its
      name), every fix unsafe: the object is not known to be a Trainer or Fabric.
    - **Move `trainer.fit`/`validate`/`test`/`predict` out**: always unsafe. Inside the block its
      samplers fail on a CUDA device, but the code it runs (the DataModule's `prepare_data` and
      `setup`, the `*_dataloader` hooks, `on_fit_start`, the loss's constants) builds its tensors
      with the block's default device and dtype; outside the block they get float32 on the CPU
      (under `"64-true"` the weights differ, `torch.rand(..., generator=g)` draws other numbers).
      Review that those hooks do not depend on it (they should not: Lightning moves batches to
      the device itself) and apply with `--unsafe-fixes`.
    - **Dissolve the block** (nothing stays inside): safe under the same conditions; entering and
      leaving `init_module()` with no module built inside computes nothing.
    - **`with torch.device("cuda"):` blocks**: as above in a file that imports Lightning (Lightning
      moves each batch to the device itself). Unsafe in a file without Lightning that loads data:
      what leaves the block then computes on the CPU and nothing moves it back. Not reported in a
      file with neither.
    """

    code = "DDP001"
    gpu_only = True
    name = "init-module-scope"
    summary = "Data work or trainer.fit inside init_module(): samplers draw on the GPU and fail"
    fixable = True
    uses_facts = True  # the project's DataModule and Dataset classes (model/classes)
    triggers = (("init_module", "device"),)
    # ``device(`` alone is everywhere in torch code: ``torch.cuda.device(i)``, ``torch.device("meta")``,
    # ``x.get_device()``. What ``may_apply`` looks for is a call of ``init_module`` (not its ``def``),
    # an attribute call of ``set_default_device``, or a ``device(...)`` in a ``with`` statement
    # whose owner is a plain name and whose arguments mention ``cuda`` or hold a digit (an ordinal).

    @classmethod
    def triggered_by(cls, data: bytes) -> bool:
        if not cls.has_trigger_words(data):
            return False
        if any(not _after_def(data, call.start) for call in calls(data, ("init_module",))):
            return True
        if any(not _after_def(data, call.start) for call in calls(data, ("set_default_device",))):
            return True
        if aliased("set_default_device", data):
            return True
        # The device calls first, their ``with`` headers after: ``with`` starts lines everywhere in
        # torch (``with torch.no_grad():``), CUDA-looking ``device(`` calls do not.
        starts = []
        # ``from torch import device as on``: ``with on("cuda"):`` too.
        for call in calls(data, ("device", *sorted(alias_names("device", data)))):
            if call.owner_is_attribute:
                continue  # ``torch.cuda.device(...)``: ``may_apply`` wants ``name.device``
            arguments = call_text(data, call.open_paren)
            if b"cuda" in arguments or _DIGIT.search(arguments):
                starts.append(call.start)
        return bool(starts) and any(
            start <= at < end for start, end in headers(data, "with", (b"", b"async")) for at in starts)

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """A ``with`` over ``.init_module(...)`` or ``device("cuda...")``, or a call of
        ``set_default_device`` (by any name an import gives it) whose first argument may name a CUDA
        device (``check`` reports only ``"cuda"``, ``"cuda:N"``, an ordinal or such a ``torch.device``:
        torch's own tests call it with a variable, and parsing them cost a quarter of a second)."""
        names, devices = {"set_default_device"}, {"device"}  # and the names imports give them
        calls: list[ast.Call] = []
        managers: list[ast.Call] = []
        for node in every_node(tree):
            if isinstance(node, (ast.With, ast.AsyncWith)):
                managers.extend(item.context_expr for item in node.items if isinstance(item.context_expr, ast.Call))
            elif isinstance(node, ast.Call) and (node.args or node.keywords):
                calls.append(node)
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.asname and alias.name in ("set_default_device", "device"):
                        (names if alias.name == "set_default_device" else devices).add(alias.asname)
        if any(
            last_name(call.func) == "init_module" or (last_name(call.func) in devices and _may_be_cuda_device(call))
            for call in managers
        ):
            return True
        return any(last_name(call.func) in names and _may_be_cuda_value(arguments(call)[0]) for call in calls)

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """The one analysis: the blocks, what leaves each and where to (before or after it), whether
        that is proven to change nothing but the DDP failure, and the fix as one typed edit
        (``MoveOutOfWith``) of the block that holds the ``with``."""
        knowledge = _Knowledge.of(tree, ctx)
        for block in knowledge.blocks:
            plan = _plan(block, knowledge)
            if plan.nothing_to_move:
                continue
            short = f"{_short_cause(plan.cause)} inside `{clip(block.label)}`"
            message = f"{plan.cause} inside `{block.label}`: {plan.consequence}; only model construction belongs inside"
            if plan.refusal:
                ctx.report(block.node, short, detail=f"{message} (not rewritten: {plan.refusal})", fixable=False)
                continue
            why = _unsafe_because(block, plan, knowledge)
            edit = _move_out(block, plan, knowledge)
            ctx.report(block.node, short, detail=message, fixable=True, safe=why is None, why=why or "", edits=[edit])
        for call, loader_line in knowledge.default_device_calls:
            ctx.report(call, f"set_default_device(\"cuda\") puts the loader on line {loader_line} on the GPU",
                       detail=_default_device_message(loader_line), fixable=False)


# --- what the file tells us ------------------------------------------------------------------

_RUN_CONSEQUENCE = (
    "its samplers will draw shuffle indices on the GPU and fail (\"Expected a 'cuda' device type "
    "for generator but found 'cpu'\")"
)
_DATA_CONSEQUENCE = "tensors it creates land on the GPU (and in the init dtype), and data loading built there fails"
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_WITHS = (ast.With, ast.AsyncWith)
# What ``_Scan.everything`` reads, in source order.
_EVENTS = (*_FUNCTIONS, ast.ClassDef, ast.Assign, ast.AnnAssign, *_WITHS, ast.Call)
_LINE_BREAK = lazy_compile(r"\r\n?|\n")


def _short_cause(cause: str) -> str:
    """``plan.cause`` (```code` runs``) for a finding line: the code cut short."""
    code, runs = cause.rsplit("` ", 1) if cause.startswith("`") and "` " in cause else (cause, "")
    return f"`{clip(code.lstrip('`'), 28)}` {runs}".rstrip() if runs else clip(cause, 40)


def _default_device_message(loader_line: int) -> str:
    return (
        f"torch.set_default_device(\"cuda\") also puts the data loading on line {loader_line} on the GPU: "
        "samplers fail with \"Expected a 'cuda' device type for generator but found 'cpu'\"; set it "
        "after the data is built, or use `with torch.device(\"cuda\"):` around model construction only"
    )


@record
class _Block:
    node: ast.With | ast.AsyncWith
    label: str  # how the finding names it, e.g. trainer.init_module()
    nested: bool = False  # inside, or around, another recognised block
    #: Why the receiver is not known to be a Trainer or Fabric (a parameter, a hydra-built object):
    #: reported, and its fix unsafe. None: known.
    receiver_unknown: str | None = None


def _event_key(node: ast.AST) -> tuple:
    """Where a depth-first walk in source order meets ``node``: a node before those it holds (a
    decorated ``def`` starts at its first decorator)."""
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        first = decorators[0]
        return (first.lineno, first.col_offset - 1, -node.end_lineno, -node.end_col_offset)
    return (node.lineno, node.col_offset, -node.end_lineno, -node.end_col_offset)


class _Scan:
    """Trainer variables, trainer method calls, ``with`` statements and data-loading calls."""

    def __init__(self, ctx: RuleContext):
        self.ctx = ctx
        self.imports = ctx.imports
        self.trainers: set[str] = set()
        self.data_classes: set[str] = set()
        self.calls: list[tuple[str, str, ast.Call]] = []
        self.withs: list[ast.With | ast.AsyncWith] = []
        self.default_device: ast.Call | None = None
        self.loading_calls: list[ast.Call] = []
        self._function_parts: set[int] | None = None  # ids of the nodes inside functions

    def statements(self, block: list[ast.stmt]) -> None:
        """Every statement of ``block`` and of the blocks nested in it, depth first, without the
        statements of a one-line body (``if x: y = f()``): a walk over statements is many times
        cheaper than visiting every node of a big file."""
        view = self.ctx.view
        if not block or view.one_line_body(block):
            return
        for statement in block:
            if isinstance(statement, ast.ClassDef):
                self.class_def(statement)
            elif isinstance(statement, _FUNCTIONS):
                self.trainer_parameters(statement)
            elif isinstance(statement, _WITHS):
                self.withs.append(statement)
            elif not isinstance(statement, TREE_COMPOUND):
                if isinstance(statement, (ast.Assign, ast.AnnAssign)):
                    self.assign(statement)
                value = getattr(statement, "value", None)
                if isinstance(value, ast.Call):
                    self.call(value, 0)
            if isinstance(statement, TREE_COMPOUND):
                for inner in child_blocks(statement):
                    self.statements(inner)

    def everything(self, tree: ast.Module) -> None:
        """Every node, in source order (the trainers known when a call is met count): the data
        loading that ``set_default_device`` affects can be any call, anywhere. No two nodes of
        these kinds share a span (each holds the others it contains, and more: a call its
        parentheses, an assignment its target), so the order is the same whatever the walk."""
        events = sorted((node for node in every_node(tree) if isinstance(node, _EVENTS)), key=_event_key)
        for node in events:
            if isinstance(node, ast.ClassDef):
                self.class_def(node)
            elif isinstance(node, _FUNCTIONS):
                self.trainer_parameters(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                self.assign(node)
            elif isinstance(node, _WITHS):
                self.withs.append(node)
            else:
                self.call(node, None)

    def _in_a_function(self, node: ast.AST) -> bool:
        """``node`` is in a function: its body, decorators or defaults (asked of few calls)."""
        if self._function_parts is None:
            self._function_parts = {id(inner) for function in every_node(self.ctx.view.tree)
                                    if isinstance(function, _FUNCTIONS) for inner in every_node(function)[1:]}
        return id(node) in self._function_parts

    def is_trainer(self, value: ast.expr | None) -> bool:
        return isinstance(value, ast.Call) and lightning_name(self.imports, value.func) in TRAINERS

    def class_def(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            base = base.value if isinstance(base, ast.Starred) else base
            short = lightning_name(self.imports, base)
            qualified = self.imports.qualify(base) or ""
            # torch's data classes, a DataModule, or the file's own data class seen above (a
            # ``SyntheticTrain(SyntheticBase)`` whose base derives from Dataset)
            if (short == "LightningDataModule" or qualified.startswith("torch.utils.data.")
                    or (isinstance(base, ast.Name) and base.id in self.data_classes)):
                self.data_classes.add(node.name)

    def trainer_parameters(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for param in (*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs):
            if param.annotation is not None and lightning_name(self.imports, param.annotation) in TRAINERS:
                self.trainers.add(param.arg)

    def assign(self, node: ast.Assign | ast.AnnAssign) -> None:
        if isinstance(node, ast.Assign):
            if self.is_trainer(node.value):
                self.trainers.update(n for n in map(dotted_name, node.targets) if n is not None)
            return
        annotated = lightning_name(self.imports, node.annotation) in TRAINERS
        name = dotted_name(node.target)
        if name is not None and (annotated or self.is_trainer(node.value)):
            self.trainers.add(name)

    def call(self, node: ast.Call, depth: int | None) -> None:
        """``depth``: function nesting, None where not known yet (``set_default_device`` counts at
        module level only)."""
        func = node.func
        if isinstance(func, ast.Attribute):
            receiver = dotted_name(func.value)
            if receiver is not None:
                self.calls.append((receiver, func.attr, node))
        qualified = self.imports.qualify(func) or ""
        given = arguments_in_order(node)
        if qualified == "torch.set_default_device" and given and (
                depth == 0 if depth is not None else not self._in_a_function(node)):
            first = given[0]
            value = first.value if isinstance(first, (ast.keyword, ast.Starred)) else first
            if device_kind(value, self.imports, self.ctx.view.positions.segment) == "cuda" and self.default_device is None:
                self.default_device = node
        elif qualified.startswith("torch.utils.data.") or (
            isinstance(func, ast.Attribute) and func.attr in RUN_METHODS and isinstance(func.value, (ast.Name, ast.Attribute))
            and dotted_name(func.value) in self.trainers
        ):
            self.loading_calls.append(node)


def _model_argument(call: ast.Call) -> str | None:
    for index, argument in enumerate(arguments_in_order(call)):
        if isinstance(argument, ast.keyword):
            if argument.arg == "model":
                return dotted_name(argument.value)
        elif index == 0 and not isinstance(argument, ast.Starred):
            return dotted_name(argument)
    return None


class _Knowledge:
    """What the file tells: its module and data classes, trainers, the names trained as models, the
    recognised blocks (each with the statements of the block that holds it) and the
    ``set_default_device`` calls to report."""

    def __init__(self, ctx: RuleContext, module_classes: dict[str, str], scan: _Scan):
        self.ctx = ctx
        self.imports = ctx.imports
        self.layout = _Layout(ctx.view)
        self.module_classes = module_classes  # file classes that are modules: name -> "lightning"/"torch"
        # file classes deriving from LightningDataModule or torch Dataset, and the project's (other files')
        self.data_classes = set(scan.data_classes) | set(ctx.facts.of_kind("LightningDataModule", ctx.path)) | set(
            ctx.facts.of_kind("Dataset", ctx.path))
        self.trainers = scan.trainers  # dotted names bound to a Trainer/Fabric (``trainer``, ``self.fabric``)
        self.model_names: set[str] = set()  # names passed as the model to fit/validate/test/predict or fabric.setup
        self.blocks: list[_Block] = []
        self.holders: dict[int, list[ast.stmt]] = {}  # a block's ``with`` -> the statements around it
        self.default_device_calls: list[tuple[ast.Call, int]] = []
        self.tree: ast.Module | None = None
        self._effects: Effects | None = None

    @property
    def effects(self) -> Effects:
        if self._effects is None:
            from ddpfix.analysis.effects import Effects

            self._effects = Effects.of(self.tree, self.imports, lightning_name)
        return self._effects

    @classmethod
    def of(cls, tree: ast.Module, ctx: RuleContext) -> _Knowledge:
        scan = _Scan(ctx)
        if b"set_default_device" in ctx.data:
            scan.everything(tree)
        else:
            scan.statements(tree.body)
        knowledge = cls(ctx, class_hierarchy(tree, ctx.imports), scan)
        knowledge.tree = tree
        for receiver, method, call in scan.calls:
            if (receiver in knowledge.trainers or receiver == "self.trainer") and method in RUN_METHODS | SETUP_METHODS:
                model = _model_argument(call)
                if model is not None:
                    knowledge.model_names.add(model)
        for node in scan.withs:
            block = knowledge._recognise(node)
            if block is not None:
                knowledge.blocks.append(block)
        # Blocks inside blocks: fixing the inner one first would make the outer one fixable on a
        # second run; a run must be final, so both are only reported.
        inside = {id(b.node): {id(n) for s in b.node.body for n in walk(s) if isinstance(n, _WITHS)} for b in knowledge.blocks}
        for block in knowledge.blocks:
            for other in knowledge.blocks:
                if other is not block and (id(other.node) in inside[id(block.node)] or id(block.node) in inside[id(other.node)]):
                    block.nested = True
        if knowledge.blocks:
            wanted = {id(b.node) for b in knowledge.blocks}
            for statements in tree_blocks(tree):
                knowledge.holders.update((id(s), statements) for s in statements if id(s) in wanted)
        if scan.default_device and scan.loading_calls:
            call = scan.default_device
            later = [c.lineno for c in scan.loading_calls if c.lineno > call.lineno]
            if later:
                knowledge.default_device_calls.append((call, later[0]))
        return knowledge

    def _recognise(self, node: ast.With | ast.AsyncWith) -> _Block | None:
        labels = [self._context_label(node, index) for index in range(len(node.items))]
        recognised = [label for label in labels if label is not None]
        if recognised:
            return _Block(node, recognised[0])
        # ``init_module()`` is Lightning's name (``Trainer.init_module``, ``Fabric.init_module``): on a
        # receiver the file does not bind to one (a parameter, ``instantiate(cfg.trainer)``) in a file
        # that imports Lightning, it is most likely one; reported, never fixed safely.
        for item in node.items:
            expression = item.context_expr
            if isinstance(expression, ast.Call) and isinstance(expression.func, ast.Attribute) \
                    and expression.func.attr == "init_module" and _imports_lightning(self.imports):
                receiver = dotted_name(expression.func.value)
                if receiver is not None:
                    return _Block(node, f"{receiver}.init_module()", receiver_unknown=(
                        f"`{receiver}` is not known to be a Trainer or Fabric (it is not built from one in this "
                        "file): its `init_module()` may be another object's"))
        return None

    def _context_label(self, node: ast.With | ast.AsyncWith, index: int) -> str | None:
        expression = node.items[index].context_expr
        if not isinstance(expression, ast.Call):
            return None
        func = expression.func
        if isinstance(func, ast.Attribute) and func.attr == "init_module":
            receiver = dotted_name(func.value)
            if receiver is not None and (receiver in self.trainers or receiver == "self.trainer"):
                return f"{receiver}.init_module()"
            return None
        segment = self.ctx.view.positions.segment
        if self.imports.qualify(func) == "torch.device" and device_kind(expression, self.imports, segment) == "cuda":
            if _plain_torch(self.ctx):
                return None
            return f"with {self.layout.item_code(node, index)}"
        return None

    # classification of one statement
    def is_model_call(self, call: ast.Call) -> bool:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in MODEL_LOADERS:
            owner = dotted_name(func.value) or ""
            return owner.split(".")[-1] not in self.data_classes and not DATA_WORDS.search(owner)
        if isinstance(func, ast.Name) and func.id in self.module_classes:
            return True
        if lightning_name(self.imports, func) == "LightningModule" or is_torch_nn_module(self.imports, func):
            return True
        if self.imports.qualify(func) == "torch.compile":
            return True
        name = dotted_name(func)
        qualified = self.imports.qualify(func)
        if name is None or (qualified is not None and qualified.split(".")[0] in LIBRARIES):
            return False  # a library callable we know, and not a module class
        last = name.split(".")[-1]
        # An unknown class of the user's (``GPT()``) is presumed a model unless its name says data.
        return last[:1].isupper() and last not in self.data_classes and not DATA_WORDS.search(last)


# --- the code the messages quote ---------------------------------------------------------------


class _Layout:
    """The code of a block's statements as the fix moves them: with the comment lines above each
    (LibCST's ``leading_lines``: those not owned by the end of the block before), its decorators,
    and the comment lines at the end of its own blocks. ``ast`` keeps none of it: it is read from
    the text, a line at a time."""

    def __init__(self, view):
        self.view = view
        self.text = view.text
        self.positions = view.positions

    def line(self, number: int) -> str:
        """Line ``number`` with its line break; "" past the end of the file."""
        try:
            start = self.positions.line_start(number)
        except IndexError:
            return ""
        return self.text[start:_line_end(self.positions, self.text, number)]

    @staticmethod
    def first_line(statement: ast.stmt) -> int:
        """Where the statement starts: its first decorator's line, if it has one."""
        decorators = getattr(statement, "decorator_list", None)
        return decorators[0].lineno if decorators else statement.lineno

    def indent(self, block: list[ast.stmt]) -> str:
        text = self.line(self.first_line(block[0]))
        return text[:len(text) - len(text.lstrip(" \t\f"))]

    def empty_lines(self, after: int) -> list[int]:
        """The blank and comment-only lines after line ``after``, up to the next line of code."""
        found, number = [], after + 1
        while (text := self.line(number)) and (not text.strip() or text.lstrip().startswith("#")):
            found.append(number)
            number += 1
        return found

    def owned(self, statement: ast.stmt, lines: list[int]) -> int:
        """How many of the empty ``lines`` below ``statement`` belong to the end of its blocks
        (LibCST's footers): those up to the last one indented as deep as its last block."""
        indent = self._last_block_indent(statement)
        if indent is None:
            return 0
        return max((i + 1 for i, number in enumerate(lines) if self.line(number).startswith(indent)), default=0)

    def _last_block_indent(self, statement: ast.stmt) -> str | None:
        """The indentation of the block that ends ``statement`` (an ``elif``'s, an ``else``'s...);
        None for a simple statement or a block on its header's line (which owns no comment line)."""
        if not isinstance(statement, TREE_COMPOUND):
            return None
        block = max(child_blocks(statement), key=lambda b: (b[-1].end_lineno, b[-1].end_col_offset))
        return None if self.view.one_line_body(block) else self.indent(block)

    def code(self, lines: list[list[ast.stmt]], index: int) -> str:
        """LibCST's code of statement line ``index`` of a block (``lines``, not a one-line body)."""
        line = lines[index]
        first, last = self.first_line(line[0]), line[-1].end_lineno
        if index:
            gap = [n for n in self.empty_lines(lines[index - 1][-1].end_lineno) if n < first]
            above = gap[self.owned(lines[index - 1][-1], gap):]
        else:
            above = []
            while first - len(above) - 1 >= 1 and self._empty(first - len(above) - 1):
                above.insert(0, first - len(above) - 1)
        below = self.empty_lines(last)
        below = below[:self.owned(line[-1], below)]
        return "".join(self.line(n) for n in [*above, *range(first, last + 1), *below])

    def _empty(self, number: int) -> bool:
        text = self.line(number)
        return not text.strip() or text.lstrip().startswith("#")

    def own_first_line(self, line: list[ast.stmt]) -> str:
        """The first line of a statement line's own code (a decorator's, for a decorated definition)."""
        own = "".join(self.line(n) for n in range(self.first_line(line[0]), line[-1].end_lineno + 1))
        return own.strip().splitlines()[0]

    def func_code(self, call: ast.Call, statement: ast.stmt) -> str:
        """LibCST's code of a call's callee: with the parentheses around it (``(trainer.fit)(...)``)."""
        positions, text = self.positions, self.text
        first = positions.offset(call.lineno, call.col_offset)
        stop = positions.offset(call.func.end_lineno, call.func.end_col_offset)
        for _ in range(text[first:positions.offset(call.func.lineno, call.func.col_offset)].count("(")):
            stop = _past_closing_parenthesis(text, stop)
        return code_between(self.view, first, stop, statement)

    def item_code(self, node: ast.With | ast.AsyncWith, index: int) -> str:
        """LibCST's code of the ``index``-th context manager of a ``with``: with the parentheses
        around it, but for those around all of the items, which are the ``with``'s own."""
        expression = node.items[index].context_expr
        positions = self.positions
        start = positions.offset(expression.lineno, expression.col_offset)
        stop = positions.offset(expression.end_lineno, expression.end_col_offset)
        body = positions.offset(node.body[0].lineno, node.body[0].col_offset)
        tokens = _header_tokens(self.text, positions.line_start(node.lineno), body)
        first = next((i for i, t in enumerate(tokens) if t.start_offset == start), None)
        last = next((i for i, t in enumerate(tokens) if t.end_offset == stop and i >= (first or 0)), None)
        if first is None or last is None or tokens[-1].string != ":":
            return code_between(self.view, start, stop, node)  # a header the tokenizer could not follow
        while tokens[first - 1].string == "(" and tokens[last + 1].string == ")":
            first, last = first - 1, last + 1  # the header's first token is ``with``, its last the colon
        if tokens[first].string == "(" and tokens[first - 1].string == "with" and tokens[last + 1].string == ":":
            first, last = first + 1, last - 1
        return code_between(self.view, tokens[first].start_offset, tokens[last].end_offset, node)

    def comment_in_header(self, node: ast.With | ast.AsyncWith) -> bool:
        """Whether a comment stands between ``with`` and its colon (in parentheses around its
        items): it goes with the header when the block goes."""
        body = self.positions.offset(node.body[0].lineno, node.body[0].col_offset)
        tokens = _header_tokens(self.text, self.positions.line_start(node.lineno), body)
        colon = tokens[-1].start_offset if tokens and tokens[-1].string == ":" else body
        return comment_in(self.view, self.positions.offset(node.lineno, node.col_offset), colon)


@record(frozen=True)
class _Token:
    string: str
    start_offset: int
    end_offset: int


def _header_tokens(text: str, start: int, stop: int) -> list[_Token]:
    """The tokens of a ``with`` statement's header (its line's start at ``start``, its body at
    ``stop``) up to its colon, with their offsets; comments and line breaks left out."""
    fragment = text[start:stop]
    line_starts = [start, *(start + m.end() for m in _LINE_BREAK.finditer(fragment))]
    tokens, depth = [], 0
    skipped = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    try:
        for token in tokenize.generate_tokens(io.StringIO(fragment, newline=None).readline):
            if token.type in skipped:
                continue
            (row, column), (end_row, end_column) = token.start, token.end
            tokens.append(_Token(token.string, line_starts[row - 1] + column, line_starts[end_row - 1] + end_column))
            depth += token.string in ("(", "[", "{")
            depth -= token.string in (")", "]", "}")
            if token.string == ":" and depth == 0:
                break
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # the body's indentation cut off: the header came first
    return tokens


def _past_closing_parenthesis(text: str, offset: int) -> int:
    """Where the closing parenthesis after ``offset`` ends (only layout and comments between)."""
    while text[offset] != ")":
        offset = _LINE_BREAK.search(text, offset).start() if text[offset] == "#" else offset + 1
    return offset + 1


def _line_start_or_none(positions, line: int) -> int | None:
    try:
        return positions.line_start(line)
    except IndexError:
        return None


def _line_end(positions, text: str, line: int) -> int:
    """Where line ``line`` ends, its line break included."""
    following = _line_start_or_none(positions, line + 1)
    return len(text) if following is None else following


# --- the plan for one block ------------------------------------------------------------------


@record
class _Plan:
    nothing_to_move: bool = False
    refusal: str | None = None
    cause: str = ""
    consequence: str = ""
    # The statement lines of the block, where each that moves goes, the lines each jumps over.
    lines: list = field(default_factory=list)
    moved: list[int] = field(default_factory=list)
    jumps: dict[int, list[int]] = field(default_factory=dict)
    where: dict[int, str] = field(default_factory=dict)
    before: tuple[int, ...] = ()  # the statement lines that go before the block, in order
    after: tuple[int, ...] = ()  # and after it


def _refuse(plan: _Plan, reason: str) -> _Plan:
    plan.refusal = reason
    return plan


def _plan(block: _Block, knowledge: _Knowledge) -> _Plan:
    node, view = block.node, knowledge.ctx.view
    if view.one_line_body(node.body):
        if not any(_small_kind(s, knowledge, set(knowledge.model_names)) == "data" for s in node.body):
            return _Plan(nothing_to_move=True)
        return _refuse(_Plan(cause="`data work` runs", consequence=_DATA_CONSEQUENCE), "the block is on one line")
    lines = view.statement_lines(node.body)
    kinds = []
    model_names = set(knowledge.model_names)
    for line in lines:
        kind = _kind(line, knowledge, model_names)
        if kind == "model":
            model_names |= statement_names(line).binds
        kinds.append(kind)
    if "data" not in kinds and "mixed" not in kinds:
        return _Plan(nothing_to_move=True)
    if not any(_known_data_work(line, knowledge) for line, kind in zip(lines, kinds) if kind != "model"):
        # Only statements the rule cannot place (``add_adapters(model)``, ``get_model()``, a KV cache
        # or test inputs built on the GPU on purpose): nothing is known to load data or to train.
        return _Plan(nothing_to_move=True)
    plan = _Plan()
    plan.cause, plan.consequence = _describe(lines, kinds, knowledge)
    if len(node.items) > 1:
        return _refuse(plan, "several context managers in one `with`")
    if block.nested:
        return _refuse(plan, "it is nested with another init_module()/device block")
    exit_word = next((word for s in node.body for word in _exits(s, 0)), None)
    if exit_word:
        return _refuse(plan, f"`{exit_word}` inside the block")
    if "mixed" in kinds:
        return _refuse(plan, "a compound statement inside mixes model construction and data work")
    return _order(plan, node, lines, kinds, knowledge)


def _kind(line: list[ast.stmt], knowledge: _Knowledge, model_names: set[str]) -> str:
    """``"model"`` (stays inside), ``"data"`` (moves out) or ``"mixed"`` (a compound statement with
    both): a compound statement's kind is that of every statement in its blocks."""
    if not isinstance(line[0], TREE_COMPOUND):
        kinds = {_small_kind(small, knowledge, model_names) for small in line}
        return kinds.pop() if len(kinds) == 1 else "mixed"
    inner = {_kind([child], knowledge, model_names) for block in _all_blocks(line[0]) for child in block}
    if not inner:
        return "data"
    return inner.pop() if len(inner) == 1 else "mixed"


#: Third-party packages whose calls load or hold data (Hugging Face ``datasets``, torchvision's,
#: torchaudio's and torchtext's datasets).
_DATA_PACKAGES = ("torch.utils.data.", "datasets.", "torchvision.datasets.", "torchaudio.datasets.", "torchtext.datasets.")
#: A class the file imports from a module it cannot read (``from project import MNISTDataModule``)
#: named as a data module, dataset, loader or sampler: evidence enough to report (never to fix safely).
DATA_CLASS_NAME = lazy_compile(r"Data(?:set|Module|Loader|Pipe)|Loader$|Sampler$")
_DATA_METHODS = frozenset({"train_dataloader", "val_dataloader", "test_dataloader", "predict_dataloader",
                           "setup_dataloaders", "prepare_data"})


def _known_data_work(line: list[ast.stmt], knowledge: _Knowledge) -> bool:
    """The statement is known to load data or to train: a call into ``torch.utils.data`` or a data
    package, a LightningDataModule or Dataset class of the file or of the project, a loader hook or
    Fabric's ``setup_dataloaders``, or a run of a known Trainer. What samplers and loaders do inside
    the block is the failure; an unknown call is not taken for data by its name."""
    if any(_is_run(statement, knowledge) for statement in line):
        return True
    project_data = {**knowledge.ctx.facts.of_kind("LightningDataModule", knowledge.ctx.path),
                    **knowledge.ctx.facts.of_kind("Dataset", knowledge.ctx.path)}
    for statement in line:
        for node in walk(statement):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            qualified = knowledge.imports.qualify(func) or ""
            if qualified.startswith(_DATA_PACKAGES) or lightning_name(knowledge.imports, func) == "LightningDataModule":
                return True
            name = dotted_name(func) or ""
            last = name.rsplit(".", 1)[-1]
            if last in knowledge.data_classes or last in project_data or DATA_CLASS_NAME.search(last):
                return True
            if isinstance(func, ast.Attribute) and func.attr in _DATA_METHODS:
                return True
            if (isinstance(func, ast.Attribute) and func.attr in ("setup", "prepare_data", "__iter__")
                    and dotted_name(func.value) in _data_names(knowledge)):
                return True  # ``dm.setup("fit")`` of a data module the file builds
            if isinstance(func, ast.Attribute) and func.attr in RUN_METHODS and (
                    dotted_name(func.value) in knowledge.trainers or dotted_name(func.value) == "self.trainer"):
                return True
    return False


def _data_names(knowledge: _Knowledge) -> set[str]:
    """Names the file binds to a data class's instance (``dm = MNISTDataModule()``), kept."""
    known = getattr(knowledge, "_data_names", None)
    if known is None:
        known = set()
        for node in every_node(knowledge.tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                last = (dotted_name(node.value.func) or "").rsplit(".", 1)[-1]
                if last in knowledge.data_classes or DATA_CLASS_NAME.search(last):
                    known.update(name for target in node.targets if (name := dotted_name(target)))
        knowledge._data_names = known
    return known


def _all_blocks(statement: ast.stmt):
    """Every block of a compound statement (an ``elif`` is an ``If`` alone in ``orelse``)."""
    if isinstance(statement, ast.Match):
        yield from (case.body for case in statement.cases)
        return
    yield statement.body
    orelse = getattr(statement, "orelse", None)
    if orelse:
        yield orelse
    yield from (h.body for h in getattr(statement, "handlers", ()))
    finalbody = getattr(statement, "finalbody", None)
    if finalbody:
        yield finalbody


def _small_kind(small: ast.stmt, knowledge: _Knowledge, model_names: set[str]) -> str:
    if isinstance(small, (ast.Assign, ast.AnnAssign)):
        targets = small.targets if isinstance(small, ast.Assign) else [small.target]
        names = {dotted_name(t) for t in targets}
        roots = {root_name(t) for t in targets}
        if names & model_names:
            return "model"  # creates (or re-creates) the object later trained as the model
        if roots & model_names and not (names & roots):
            return "model"  # ``model.attr = ...``: configures the model
        if isinstance(small.value, ast.Call) and knowledge.is_model_call(small.value):
            return "model"
        return "data"
    if isinstance(small, ast.Expr) and isinstance(small.value, ast.Call):
        func = small.value.func
        if isinstance(func, ast.Attribute) and root_name(func) in model_names:
            return "model"  # ``model.load_state_dict(...)``
    return "data"


def _exits(node: ast.AST, loops: int):
    """The return/yield/break/continue that would leave the block (not one of a function or loop
    inside it), in source order."""
    if isinstance(node, (*_FUNCTIONS, ast.ClassDef, ast.Lambda)):
        return
    if isinstance(node, ast.Return):
        yield "return"
    elif isinstance(node, (ast.Yield, ast.YieldFrom)):
        yield "yield"
    elif isinstance(node, ast.Break) and not loops:
        yield "break"
    elif isinstance(node, ast.Continue) and not loops:
        yield "continue"
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
        # The header does not leave the block, and a loop's ``else`` breaks out of the loop around it.
        for statement in node.body:
            yield from _exits(statement, loops + 1)
        for statement in node.orelse:
            yield from _exits(statement, loops)
        return
    for child in child_nodes(node):
        yield from _exits(child, loops)


def _describe(lines, kinds, knowledge: _Knowledge) -> tuple[str, str]:
    """The root cause, in words: a training call beats data construction, which beats anything else."""
    layout = knowledge.layout
    for line, kind in zip(lines, kinds):
        if kind != "data" or isinstance(line[0], TREE_COMPOUND):
            continue
        for small in line:
            call = small.value if isinstance(small, (ast.Expr, ast.Assign)) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in RUN_METHODS:
                return f"`{layout.func_code(call, small)}` runs", _RUN_CONSEQUENCE
    moved = [index for index, kind in enumerate(kinds) if kind in ("data", "mixed")]
    # Name the data work itself where one statement says so (a DataModule, a DataLoader).
    codes = {index: layout.code(lines, index) for index in moved}
    first = next((index for index in moved if DATA_WORDS.search(codes[index])), moved[0] if moved else None)
    # The statement's first line of code (a comment above it is part of its text here).
    code_lines = [line.strip() for line in codes[first].strip().splitlines() if not line.lstrip().startswith("#")] if first is not None else []
    text = code_lines[0] if code_lines else "data work"
    return f"`{text}` runs", _DATA_CONSEQUENCE


GLOBAL_STATE = "<global random state>"
_GLOBAL_STATE_CALLS = frozenset({
    "torch.manual_seed", "torch.seed", "torch.cuda.manual_seed", "torch.cuda.manual_seed_all", "random.seed",
    "numpy.random.seed", "torch.set_default_dtype", "torch.set_default_device", "torch.set_default_tensor_type",
    "torch.use_deterministic_algorithms", "torch.set_rng_state",
})
_RANDOM_FACTORIES = frozenset(f"torch.{n}" for n in ("rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "rand_like", "randn_like"))


def _touches_global_state(line: list[ast.stmt], imports) -> bool:
    """Seeding, default dtype/device, or drawing random numbers from the global generator."""
    for statement in line:
        for node in walk(statement):
            if isinstance(node, ast.Call):
                qualified = imports.qualify(node.func) or ""
                if (
                    qualified in _GLOBAL_STATE_CALLS
                    or qualified in _RANDOM_FACTORIES
                    or qualified.startswith(("random.", "numpy.random."))
                    or lightning_name(imports, node.func) == "seed_everything"
                ):
                    return True
    return False


def _order(plan: _Plan, node, lines, kinds, knowledge: _Knowledge) -> _Plan:
    """Which data statements go before the ``with`` and which after, if that is provably order-safe."""
    layout = knowledge.layout
    names = [statement_names(line) for line in lines]
    # Global random state is a name too: building a model draws from it, and so do seeding calls
    # and random data. Such statements must keep their order.
    for line, kind, found in zip(lines, kinds, names):
        if kind == "model" or _touches_global_state(line, knowledge.imports):
            found.reads.add(GLOBAL_STATE)
            found.writes.add(GLOBAL_STATE)
    model_at = [i for i, k in enumerate(kinds) if k == "model"]
    first_model = model_at[0] if model_at else len(lines)
    before = set(range(first_model))
    # Data statements the model statements need by name (transitively) go before the block too.
    pending = list(model_at)
    while pending:
        i = pending.pop()
        for j in range(i - 1, -1, -1):
            if kinds[j] == "data" and j not in before and names[j].binds & names[i].reads:
                before.add(j)
                pending.append(j)
    after = [i for i, k in enumerate(kinds) if k == "data" and i not in before]
    # What moves before the block runs before its ``with`` header too, which reads names of its own
    # (``init_module(empty_init=ckpt_path is not None)``: review helper-42, c09).
    header = statement_names([item.context_expr for item in node.items])
    header_calls = _calls_in_header(node)
    header_reads = header.reads | ({_ANY_OBJECT} if header_calls else set())
    for j in sorted(before):
        conflict = _conflict(names[j], [names[m] for m in range(first_model, j) if m not in before])
        if conflict:
            return _refuse(plan, _conflict_reason(layout.own_first_line(lines[j]), "before", conflict))
        # A store into an object the header reads (``args.ckpt = None`` before ``empty_init=args.ckpt
        # is not None``) changes it as a rebinding does (review helper-43, c12); a call in the header
        # may read any object a moved statement changes.
        changed = set(names[j].assigns)
        if header_calls and names[j].assigns - names[j].binds:
            changed.add(_ANY_OBJECT)
        read_by_header = sorted((changed & header_reads) | (names[j].reads & header.binds))
        if read_by_header:
            named = [name for name in read_by_header if name != _ANY_OBJECT]
            moving = f"moving `{layout.own_first_line(lines[j])}` before the block"
            if named:
                return _refuse(plan, f"{moving} would change what `{named[0]}` is when its `with` header reads it")
            changed_object = sorted(names[j].assigns - names[j].binds)[0]
            return _refuse(plan, f"{moving} would change `{changed_object}`, which a call in its `with` header may read")
    for d in after:
        conflict = _conflict(names[d], [names[m] for m in model_at if m > d])
        if conflict:
            return _refuse(plan, _conflict_reason(layout.own_first_line(lines[d]), "after", conflict))
    alias = node.items[0].optional_vars
    if alias is not None:
        bound = {alias.id} if isinstance(alias, ast.Name) else statement_names([alias]).binds
        if not model_at:
            return _refuse(plan, "the block would go, and with it its `as` binding")
        if any(names[i].reads & bound for i in before):
            return _refuse(plan, "a statement that would move before the block uses its `as` binding")
    if not model_at and knowledge.layout.comment_in_header(node):
        return _refuse(plan, "the block would go, and with it a comment in its `with` header")
    plan.lines = lines
    plan.before, plan.after = tuple(sorted(before)), tuple(after)
    plan.moved = sorted([*before, *after])
    for j in before:
        plan.jumps[j] = [m for m in range(first_model, j) if m not in before]
        plan.where[j] = "before"
    for d in after:
        plan.jumps[d] = [m for m in model_at if m > d]
        plan.where[d] = "after"
    return plan


#: Stands for "an object the header's calls may read": what a moved statement changes in place.
_ANY_OBJECT = "an object its calls may read"


def _calls_in_header(node: ast.With | ast.AsyncWith) -> bool:
    """The ``with`` header calls something besides its context managers themselves
    (``init_module(empty_init=resume_requested())``): that call may read any object."""
    for item in node.items:
        expression = item.context_expr
        parts = [*expression.args, *(k.value for k in expression.keywords)] if isinstance(expression, ast.Call) \
            else [expression]
        if isinstance(expression, ast.Call):
            func = expression.func
            while isinstance(func, ast.Attribute):
                func = func.value
            parts.append(func)
        if any(isinstance(n, ast.Call) for part in parts for n in walk(part)):
            return True
    return False


def _conflict_reason(text: str, where: str, name: str) -> str:
    if name == GLOBAL_STATE:
        return (f"moving `{text}` {where} the block would reorder it with model construction, "
                "which draws from the global random state")
    return f"moving `{text}` {where} the block would change what `{name}` is"


def _conflict(moved, jumped) -> str | None:
    """A name that makes swapping ``moved`` with any of ``jumped`` observable, if there is one."""
    for other in jumped:
        clash = (moved.reads & other.writes) | (moved.writes & other.reads) | (moved.writes & other.writes)
        if clash:
            return sorted(clash)[0]
    return None


def _move_out(block: _Block, plan: _Plan, knowledge: _Knowledge) -> edits.MoveOutOfWith:
    """The fix: the planned statements moved out of the block, the block gone if nothing stays."""
    holder = knowledge.holders[id(block.node)]
    view = knowledge.ctx.view
    lines, index = view.statement_lines(holder), view.line_index(holder, block.node)
    if holder is knowledge.tree.body:
        span = MODULE
    else:
        first, last = knowledge.ctx.position(holder[0]), knowledge.ctx.position(holder[-1])
        span = Span(first.start.line, first.start.column, last.end.line, last.end.column)
    return edits.MoveOutOfWith(span, len(lines) - 1 - index, plan.before, plan.after)


# --- fix safety ----------------------------------------------------------------------------------


def _unsafe_because(block: _Block, plan: _Plan, knowledge: _Knowledge) -> str | None:
    """Why the planned move is not proven to change nothing but the DDP failure; None: proven.

    Proven when (1) the block is ``init_module()``, or ``torch.device("cuda")`` in a file that
    imports Lightning (which moves every batch to the device itself); (2) every statement that
    leaves the block is known not to build a model: pure (``_effects``: arithmetic only on
    tensor-free operands), or a known data call whose effect does not depend on the device context
    (``random_split``); a run of a trainer (``trainer.fit(...)``) never is: the hooks it runs build
    their tensors with the block's device and dtype; (3) a statement that changes its order with another
    (jumps over it) is pure, and so is every statement it jumps over (names read and written were
    checked by ``_order``)."""
    view, layout = knowledge.ctx.view, knowledge.layout
    if block.receiver_unknown is not None:
        return block.receiver_unknown
    if block.label.startswith("with ") and not _imports_lightning(knowledge.imports):
        return ("outside Lightning nothing moves batches to the GPU: what leaves the `torch.device` block "
                "computes on the CPU")
    effects = knowledge.effects
    pure: dict[int, ast.AST | None] = {}

    def unknown(i: int) -> ast.AST | None:
        if i not in pure:
            pure[i] = next((found for s in plan.lines[i] if (found := effects.unknown_in_statement(s)) is not None), None)
        return pure[i]

    for i in plan.moved:
        run = next((s for s in plan.lines[i] if _is_run(s, knowledge)), None)
        if run is not None:
            return (f"`{_segment_line(run, view)}` (line {run.lineno}) would run outside the block: the hooks it runs (the "
                    "DataModule's `prepare_data`/`setup`, the `*_dataloader`s, `on_fit_start`) would no longer "
                    "build their tensors with the block's device and dtype")
        found = unknown(i)
        if found is not None and not all(_ordered(s, knowledge) for s in plan.lines[i]):
            if effects.operator_on_tensors(found):
                return (f"`{_segment_line(found, view)}` (line {found.lineno}) may compute with tensors: its result takes the default "
                        "dtype (and device) that the block decides")
            if isinstance(found, ast.Call) and effects.reads_run_code(found):
                return (f"`{_segment_line(found, view)}` (line {found.lineno}) reads data whose class computes when "
                        "read, or is not read (a `__len__`, `__getitem__` or property that may build tensors: of "
                        "this file, another file's or a library's): that code runs with the device and dtype the "
                        "block decides")
            if isinstance(found, (ast.Attribute, ast.Subscript)):
                kind = "an attribute" if isinstance(found, ast.Attribute) else "an item"
                return (f"`{_segment_line(found, view)}` (line {found.lineno}) reads {kind} of an object whose class is "
                        "not read (a property, `__getattr__` or `__getitem__` may build tensors, with the device and "
                        "dtype the block decides)")
            if isinstance(found, ast.Call) and isinstance(found.func, ast.Name) and effects.data_class(found.func.id):
                return (f"`{_segment_line(found, view)}` (line {found.lineno}) builds data, but is not known to be free of random draws and "
                        "tensor creation, whose generator, device and dtype the block decides")
            return (f"`{_segment_line(found, view)}` (line {found.lineno}) is not known to be data (it may build a model, "
                    "draw random numbers or create tensors)")
    for i in plan.moved:
        for k in plan.jumps.get(i, []):
            if unknown(i) is not None or unknown(k) is not None:
                return (f"moving `{layout.own_first_line(plan.lines[i])}` {plan.where[i]} the block reorders it with "
                        f"`{layout.own_first_line(plan.lines[k])}`, not known to be free of effects (random draws, files)")
    return None


def _is_run(statement: ast.stmt, knowledge: _Knowledge) -> bool:
    """``trainer.fit(...)``/``validate``/``test``/``predict`` of a known trainer (``self.trainer``
    too), as a statement or the value of an assignment."""
    call = statement.value if isinstance(statement, (ast.Expr, ast.Assign)) else None
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr in RUN_METHODS
            and (dotted_name(func.value) in knowledge.trainers or dotted_name(func.value) == "self.trainer"))


def _ordered(statement: ast.stmt, knowledge: _Knowledge) -> bool:
    """A statement whose effects do not depend on the device context: pure, or a known data call
    (``random_split``) with pure arguments, bound to pure targets. Not a run of a trainer: the hooks
    it runs build tensors with the context's device and dtype."""
    effects = knowledge.effects
    if effects.unknown_in_statement(statement) is None:
        return True
    if isinstance(statement, ast.Expr):
        targets, call = [], statement.value
    elif isinstance(statement, ast.Assign):
        targets, call = statement.targets, statement.value
    else:
        return False
    if not isinstance(call, ast.Call):
        return False
    if not effects.ordered_data_call(call):
        return False
    parts = [*targets, *call.args, *(k.value for k in call.keywords)]
    return all(effects.unknown_in(part) is None for part in parts)


def _segment_line(node: ast.AST, view) -> str:
    """The first line of a node's code, cut to 60 characters."""
    positions, text = view.positions, view.text
    if isinstance(node, ast.expr):
        code = positions.segment(node)
    else:
        code = text[positions.offset(node.lineno, node.col_offset):_line_end(positions, text, node.end_lineno)]
    line = code.strip().splitlines()[0] if code.strip() else type(node).__name__
    return line if len(line) <= 60 else line[:57] + "..."
