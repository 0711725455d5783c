"""``_lightning`` and ``_args`` for CPython's tree: the same questions, asked of ``ast`` nodes, for
the rules' ``check`` (report-only runs that never parse the file with LibCST).

Each function answers exactly what its LibCST namesake answers for the same code (the rules'
``check`` and ``apply`` are compared over every fixture by ``tests/test_tree_checks.py``). Where
the two trees differ, the difference is spelled out where it is handled: ``async def`` is its own
node here, ``True`` is a constant, and ``"a" f"b"`` is one ``JoinedStr`` (LibCST keeps the pieces).
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator, Mapping

from ddpfix.imports import ImportTable
from ddpfix.lazy_regex import lazy_compile
from ddpfix.analysis.tree_text import comment_in, end, start
from ddpfix.analysis.ast_shapes import every_node, nodes_below, parent_map
from ddpfix.ast_walk import walk, walk_outside_scopes

LIGHTNING_PACKAGES = frozenset({"lightning", "pytorch_lightning", "lightning_fabric"})
CUDA_STRING = lazy_compile(r"cuda(:\d+)?")

#: Attributes of Lightning's LightningModule (and nn.Module's): ``register_buffer`` raises
#: ``KeyError: "attribute '<name>' already exists"`` for each. Read from lightning 2.6.6 and
#: pytorch_lightning 2.6.6 (``dir`` of the class and of an instance), with names of older versions.
LIGHTNING_MODULE_ATTRIBUTES = frozenset("""
    CHECKPOINT_HYPER_PARAMS_KEY CHECKPOINT_HYPER_PARAMS_NAME CHECKPOINT_HYPER_PARAMS_TYPE
    T_destination _LightningModule__check_allowed _LightningModule__check_not_nested
    _LightningModule__to_tensor _apply _apply_batch_transfer_handler _automatic_optimization
    _backward_hooks _backward_pre_hooks _buffers _call_batch_hook _call_impl _compiled_call_impl
    _compiler_ctx _current_fx_name _device _device_mesh _device_type _distrib_type _dtype
    _example_input_array _fabric _fabric_optimizers _forward_hooks _forward_hooks_always_called
    _forward_hooks_with_kwargs _forward_pre_hooks _forward_pre_hooks_with_kwargs
    _get_backward_hooks _get_backward_pre_hooks _get_name _hparams _hparams_initial
    _hparams_name _is_full_backward_hook _jit_is_scripting _load_from_state_dict
    _load_state_dict_post_hooks _load_state_dict_pre_hooks _log_dict_through_fabric
    _log_hyperparams _maybe_warn_non_full_backward_hook _metric_attributes _modules
    _named_members _non_persistent_buffers_set _on_before_batch_transfer
    _param_requires_grad_state _parameters _register_load_state_dict_pre_hook
    _register_sharded_tensor_state_dict_hooks_if_available _register_state_dict_hook
    _replicate_for_data_parallel _results _running_manual_backward _running_torchscript
    _save_to_state_dict _set_hparams _should_prevent_trainer_and_dataloaders_deepcopy
    _slow_forward _state_dict_hooks _state_dict_pre_hooks _strict_loading _to_hparams_dict
    _trainer _truncated_bptt_steps _use_amp _verify_is_manual_optimization _version
    _wrapped_call_impl add_module all_gather allow_zero_length_dataloader_with_multiple_devices
    apply automatic_optimization backward bfloat16 buffers call_super_init children
    clip_gradients compile configure_callbacks configure_gradient_clipping configure_model
    configure_optimizers configure_sharded_model cpu cuda current_epoch device device_mesh
    double dtype dump_patches eval example_input_array extra_repr fabric float forward freeze
    get_buffer get_extra_state get_parameter get_submodule global_rank global_step half hparams
    hparams_initial ipu load_from_checkpoint load_state_dict local_rank log log_dict logger
    loggers lr_scheduler_step lr_schedulers manual_backward modules mtia named_buffers
    named_children named_modules named_parameters on_after_backward on_after_batch_transfer
    on_before_backward on_before_batch_transfer on_before_optimizer_step on_before_zero_grad
    on_fit_end on_fit_start on_gpu on_load_checkpoint on_predict_batch_end
    on_predict_batch_start on_predict_end on_predict_epoch_end on_predict_epoch_start
    on_predict_model_eval on_predict_start on_save_checkpoint on_test_batch_end
    on_test_batch_start on_test_end on_test_epoch_end on_test_epoch_start on_test_model_eval
    on_test_model_train on_test_start on_train_batch_end on_train_batch_start on_train_end
    on_train_epoch_end on_train_epoch_start on_train_start on_validation_batch_end
    on_validation_batch_start on_validation_end on_validation_epoch_end
    on_validation_epoch_start on_validation_model_eval on_validation_model_train
    on_validation_model_zero_grad on_validation_start optimizer_step optimizer_zero_grad
    optimizers parameters precision predict_dataloader predict_step prepare_data
    prepare_data_per_node print register_backward_hook register_buffer register_forward_hook
    register_forward_pre_hook register_full_backward_hook register_full_backward_pre_hook
    register_load_state_dict_post_hook register_load_state_dict_pre_hook register_module
    register_parameter register_state_dict_post_hook register_state_dict_pre_hook
    remove_ignored_hparams requires_grad_ save_hyperparameters set_extra_state set_submodule
    setup share_memory state_dict strict_loading teardown test_dataloader test_step to to_empty
    to_onnx to_tensorrt to_torchscript toggle_optimizer toggled_optimizer train train_dataloader
    trainer training training_step transfer_batch_to_device truncated_bptt_steps type unfreeze
    untoggle_optimizer use_amp use_ddp use_ddp2 use_dp val_dataloader validation_step xpu
    zero_grad
""".split())


def lightning_name(imports: ImportTable, node: ast.expr) -> str | None:
    """``Trainer`` for ``L.Trainer``, ``pl.Trainer``, ``lightning.pytorch.trainer.trainer.Trainer``...; else None."""
    short_names = set()
    for qualified in imports.qualify_all(node):
        root, _, rest = qualified.partition(".")
        if root not in LIGHTNING_PACKAGES or not rest:
            return None
        short_names.add(rest.rsplit(".", 1)[-1])
    # ``try: import lightning as L / except ImportError: import pytorch_lightning as L`` is one meaning.
    return short_names.pop() if len(short_names) == 1 else None


def is_torch_nn_module(imports: ImportTable, node: ast.expr) -> bool:
    """``torch.nn.Module`` itself or any class of ``torch.nn`` (``nn.Linear``, ``nn.Sequential``...)."""
    qualified = imports.qualify(node)
    return qualified is not None and qualified.startswith("torch.nn.") and qualified[9:10].isupper()


# Methods of a LightningModule that run with the module already on its device.
_DEVICE_HOOK_PREFIXES = ("on_train_batch", "on_validation_batch", "on_test_batch", "on_predict_batch", "on_before_", "on_after_")
_DEVICE_HOOKS = frozenset({
    "forward", "training_step", "validation_step", "test_step", "predict_step",
    "on_train_epoch_start", "on_train_epoch_end", "on_validation_epoch_start", "on_validation_epoch_end",
    "on_test_epoch_start", "on_test_epoch_end", "on_predict_epoch_start", "on_predict_epoch_end",
    "on_train_start", "on_validation_start", "on_test_start", "on_predict_start",
})
# Methods that run before the module is on its device (``self.device`` is still the CPU there).
BEFORE_PLACEMENT = frozenset({"__init__", "setup", "prepare_data", "configure_model", "train_dataloader",
                              "val_dataloader", "test_dataloader", "predict_dataloader"})


def runs_on_device(method_name: str) -> bool:
    """A hook that Lightning calls with the module on its device: ``self.device`` is the rank's device there."""
    return method_name in _DEVICE_HOOKS or method_name.startswith(_DEVICE_HOOK_PREFIXES)


TENSOR_FACTORIES = frozenset(
    f"torch.{name}" for name in ("zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "linspace", "eye", "tensor")
)


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


# --- arguments -------------------------------------------------------------------------------


def keyword(call: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == name), None)


def is_true(arg: ast.keyword | None) -> bool:
    """``name=True`` (LibCST: the ``Name`` ``True``; here a constant)."""
    return arg is not None and isinstance(arg.value, ast.Constant) and arg.value.value is True


def has_star(call: ast.Call) -> bool:
    """``*args`` or ``**kwargs`` among the arguments (LibCST: an ``Arg`` with ``star``)."""
    return any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)


def arguments_in_order(call: ast.Call) -> list[ast.expr | ast.keyword]:
    """Positional arguments and keywords in source order, as LibCST's ``call.args`` lists them
    (``ast`` keeps them apart: ``f(a=1, *b)`` has ``*b`` first in ``args``)."""
    return sorted([*call.args, *call.keywords], key=lambda a: (a.lineno, a.col_offset))


# --- strings and devices ---------------------------------------------------------------------


def string_value(node: ast.expr, text: str | None = None) -> str | None:
    """A string literal's value (LibCST: ``SimpleString`` / ``ConcatenatedString`` of plain strings).
    ``"a" f"b"`` is a ``JoinedStr`` here and a ``ConcatenatedString`` there, which LibCST cannot
    evaluate either: None in both."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def logged_names(call: ast.Call) -> list[str] | None:
    """The metric names a ``self.log``/``self.log_dict`` call logs, when they are literals."""
    first = next((a for a in arguments_in_order(call)
                  if not isinstance(a, ast.keyword) or a.arg in (None, "name", "dictionary")), None)
    if first is None or isinstance(first, ast.Starred) or (isinstance(first, ast.keyword) and first.arg is None):
        return None
    value = first.value if isinstance(first, ast.keyword) else first
    if call.func.attr == "log":
        name = string_value(value)
        return [name] if name is not None else None
    if isinstance(value, ast.Dict):
        keys = [string_value(k) if k is not None else None for k in value.keys]  # None: ``**d``
        return keys if keys and all(k is not None for k in keys) else None
    return None


def log_label(call: ast.Call) -> str:
    """``self.log('val_loss')`` for a finding: the call with the metric names it logs (``...`` when
    they are not literals), cut short for a long ``log_dict``."""
    names = logged_names(call)
    shown = ", ".join(repr(n) for n in names) if names else "..."
    if len(shown) > 40:
        shown = shown[:39] + "…"
    return f"self.{call.func.attr}({shown})"


def device_kind(node: ast.expr, imports: ImportTable, segment) -> str:
    """``_lightning.device_kind`` on CPython's tree: ``"cuda"``, ``"cpu"`` or ``"unknown"``.

    ``segment(node)`` gives a node's source text: an f-string that is implicitly concatenated with
    other strings (``f"cu" "da"``) is one ``JoinedStr`` here but a ``ConcatenatedString`` to LibCST,
    which calls it ``"unknown"``; only the text tells them apart.
    """
    text = string_value(node)
    if text is not None:
        return "cuda" if CUDA_STRING.fullmatch(text) else "cpu"
    if isinstance(node, ast.JoinedStr):
        if concatenated(segment(node)):
            return "unknown"
        if all(isinstance(part, ast.Constant) for part in node.values):
            joined = "".join(part.value for part in node.values)
            return "cuda" if CUDA_STRING.fullmatch(joined) else "cpu"
        first = node.values[0] if node.values else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("cuda"):
            return "cuda"
        return "unknown"
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return "cuda"  # an ordinal names a CUDA device
    if isinstance(node, ast.Call) and imports.qualify(node.func) == "torch.device" and (node.args or node.keywords):
        first = next((a for a in arguments_in_order(node)
                      if not isinstance(a, ast.keyword) or a.arg in (None, "type")), None)
        if first is None or isinstance(first, ast.Starred) or (isinstance(first, ast.keyword) and first.arg is None):
            return "unknown"
        value = first.value if isinstance(first, ast.keyword) else first
        if isinstance(value, ast.JoinedStr) or (isinstance(value, ast.Constant) and isinstance(value.value, (str, bytes))):
            return device_kind(value, imports, segment)
    return "unknown"


def concatenated(source: str) -> bool:
    """Whether an f-string's source is more than one string token (``f"a" "b"``): LibCST's
    ``ConcatenatedString``, where ``ast`` has one ``JoinedStr``."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
                  if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.ENDMARKER)]
    except (tokenize.TokenError, SyntaxError):
        return True
    starts = [t for t in tokens if t.type in (tokenize.STRING, getattr(tokenize, "FSTRING_START", -1))]
    return len(starts) != 1




def single_index(index: ast.expr, segment) -> ast.expr | None:
    """What LibCST sees as the one index of a subscript (its only ``SubscriptElement``), if it sees
    one; ``segment(node)`` gives a node's source text. ``x["k",]`` is one element (with a comma)
    there and a tuple here; ``x[("k",)]`` is a tuple in both, and ``x["a", "b"]`` or a slice is
    no single index: None."""
    if isinstance(index, ast.Slice):
        return None
    if isinstance(index, ast.Tuple):
        if len(index.elts) != 1 or not segment(index).endswith(","):
            return None  # several elements, or a parenthesised tuple
        return index.elts[0]
    return index


# --- statements, classes, methods ------------------------------------------------------------


def child_blocks(statement: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The blocks of a compound statement in the order of ``imports.child_blocks``: body,
    ``elif``/``else`` (a ``try``'s ``else`` too), handlers, ``finally``, cases. An ``elif`` is an
    ``If`` alone in ``orelse`` here; LibCST yields its blocks without the ``If`` itself."""
    if isinstance(statement, ast.Match):
        for case in statement.cases:
            yield case.body
        return
    body = getattr(statement, "body", None)
    if isinstance(body, list):
        yield body
    orelse = getattr(statement, "orelse", None)
    if orelse:
        if isinstance(statement, ast.If) and len(orelse) == 1 and isinstance(orelse[0], ast.If) and is_elif(statement, orelse[0]):
            yield from child_blocks(orelse[0])
        else:
            yield orelse
    yield from (h.body for h in getattr(statement, "handlers", ()))
    finalbody = getattr(statement, "finalbody", None)
    if finalbody:
        yield finalbody


def is_elif(parent: ast.If, inner: ast.If) -> bool:
    # ``else:\n    if x:`` is an else block holding an ``if`` (a statement of its own to LibCST);
    # ``elif x:`` starts on the keyword's column. Only the column of the inner ``if`` tells.
    return inner.col_offset == parent.col_offset


def statements(node) -> Iterator[ast.stmt]:
    """Every statement below ``node`` (a module, a compound statement or a list of statements), in
    source order, depth first: ``_lightning.statements``. A one-line body (``if x: f()``) is
    LibCST's ``SimpleStatementSuite``, whose statements ``_lightning.statements`` does not list,
    and a line of statements joined by ``;`` is one ``SimpleStatementLine`` there: callers that
    care ask ``TreeView.one_line_body`` and ``TreeView.statement_start``."""
    body = node if isinstance(node, list) else getattr(node, "body", ())
    for statement in body:
        yield statement
        if isinstance(statement, _COMPOUND):
            for block in child_blocks(statement):
                yield from statements(block)


_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, *FUNCTIONS, ast.ClassDef,
             ast.Match, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


def classes(node) -> list[ast.ClassDef]:
    if not isinstance(node, ast.Module):
        return [s for s in statements(node) if isinstance(s, ast.ClassDef)]
    # A module's are kept on its tree: the rules ask for them once per class of the file.
    known = getattr(node, "_ddpfix_classes", None)
    if known is None:
        known = node._ddpfix_classes = [s for s in statements(node) if isinstance(s, ast.ClassDef)]
    return list(known)


def all_functions(node) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [s for s in statements(node) if isinstance(s, FUNCTIONS)]


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def defined_elsewhere(parent: ast.expr, imports: ImportTable, elsewhere: Mapping[str, frozenset[str]]) -> bool:
    """``parent`` names a LightningModule class of another file of the run: same class name, and
    when it comes from an import, from a module of that file's name (``from model import Base``)."""
    qualified = imports.qualify(parent)
    if qualified is None:
        return _last_name(parent) in elsewhere  # a relative import, or a name we cannot place
    module_path, _, name = qualified.rpartition(".")
    return name in elsewhere and module_path.rsplit(".", 1)[-1] in elsewhere[name]


def derived(node, kind_of) -> dict[str, tuple[str, ast.ClassDef]]:
    """``_lightning._derived``: the file's classes whose base ``kind_of`` recognises, directly or
    through the file's own classes: name -> (kind, class); the last class of a name wins."""
    by_name = {c.name: c for c in classes(node)}
    found: dict[str, tuple[str, ast.ClassDef]] = {}
    grew = True
    while grew:
        grew = False
        for name, cls in by_name.items():
            if name in found:
                continue
            for base in cls.bases:
                if isinstance(base, ast.Starred):
                    base = base.value  # LibCST: an ``Arg`` with a star and no keyword, read like any base
                kind = kind_of(base)
                if kind is None and isinstance(base, ast.Name) and base.id in found:
                    kind = found[base.id][0]
                if kind is not None:
                    found[name] = (kind, cls)
                    grew = True
                    break
    return found


def class_hierarchy(node, imports: ImportTable, lightning_elsewhere: Mapping[str, frozenset[str]] = {}) -> dict[str, str]:
    """``_lightning.class_hierarchy``: name -> ``"lightning"`` or ``"torch"``."""
    def kind_of(parent: ast.expr) -> str | None:
        if lightning_name(imports, parent) == "LightningModule":
            return "lightning"
        if is_torch_nn_module(imports, parent):
            return "torch"
        if defined_elsewhere(parent, imports, lightning_elsewhere):
            return "lightning"
        return None

    return {name: kind for name, (kind, _cls) in derived(node, kind_of).items()}


def lightning_methods(tree: ast.Module, imports: ImportTable, lightning_elsewhere: Mapping[str, frozenset[str]] = {}):
    """(class, method) for every method (``def`` or ``async def``) of every LightningModule class."""
    kinds = class_hierarchy(tree, imports, lightning_elsewhere)
    for cls in classes(tree):
        if kinds.get(cls.name) != "lightning":
            continue
        for statement in cls.body:
            if isinstance(statement, FUNCTIONS):
                yield cls, statement


def data_classes(tree: ast.Module, imports: ImportTable) -> dict[str, ast.ClassDef]:
    """``_lightning.data_classes``: LightningDataModule or torch Dataset subclasses of the file."""
    def kind_of(base: ast.expr) -> str | None:
        if lightning_name(imports, base) == "LightningDataModule":
            return "datamodule"
        return "dataset" if (imports.qualify(base) or "").startswith("torch.utils.data.") else None

    return {name: cls for name, (_kind, cls) in derived(tree, kind_of).items()}


# --- expressions -----------------------------------------------------------------------------


#: Nodes that hold no call: what a search for calls need not enter (a name holds its context only).
_NO_CALLS = (ast.Name, ast.Constant, ast.expr_context)


def _calls_outside_functions(node) -> list[ast.Call]:
    """Every call below ``node`` (a node or a list of statements), pre-order, without entering a
    nested ``def`` (which runs when it is called, not here); ``node`` itself is entered."""
    # Built in place, each node's children pushed last one first so that they come off the stack
    # in their order, names and constants (half of the nodes) never pushed: every hook of a file
    # is searched so, and the walk itself cost more than the questions asked of the calls.
    first = None if isinstance(node, list) else node
    pending = list(reversed(node)) if first is None else [node]
    found: list[ast.Call] = []
    while pending:
        current = pending.pop()
        if current is not first and isinstance(current, FUNCTIONS):
            continue
        if isinstance(current, ast.Call):
            found.append(current)
        for field in reversed(current._fields):
            value = getattr(current, field, None)
            if isinstance(value, list):
                pending.extend([item for item in reversed(value)
                                if isinstance(item, ast.AST) and not isinstance(item, _NO_CALLS)])
            elif isinstance(value, ast.AST) and not isinstance(value, _NO_CALLS):
                pending.append(value)
    return found


def self_method_calls(node, names: frozenset[str]) -> list[ast.Call]:
    """``_lightning.self_method_calls``: calls ``self.<name>(...)`` inside ``node``, nested
    functions left out. For a function, kept on its node per set of names (each rule's proof asks
    it of every hook, and again of each hook's logs); a copy, so a caller may change its list."""
    if not isinstance(node, FUNCTIONS):
        return _self_method_calls(node, names)
    kept = node.__dict__.get("_ddpfix_self_calls")
    if kept is None:
        kept = node._ddpfix_self_calls = {}
    found = kept.get(names)
    if found is None:
        found = kept[names] = _self_method_calls(node, names)
    return list(found)


def self_method_calls_in_body(method, names: frozenset[str]) -> list[ast.Call]:
    """``self_method_calls(method.body, names)``, from the list kept on the method: its calls that
    start where the body does or later (a decorator's, a default's or an annotation's come before),
    in the same order."""
    start = (method.body[0].lineno, method.body[0].col_offset)
    return [call for call in self_method_calls(method, names) if (call.lineno, call.col_offset) >= start]


def _self_method_calls(node, names: frozenset[str]) -> list[ast.Call]:
    return [
        n for n in _calls_outside_functions(node)
        if isinstance(n.func, ast.Attribute) and n.func.attr in names
        and isinstance(n.func.value, ast.Name) and n.func.value.id == "self"
    ]


def metric_attributes(cls: ast.ClassDef, imports: ImportTable) -> set[str]:
    """``_lightning.metric_attributes``: ``self.<name>`` attributes assigned a torchmetrics object.
    Kept on the class's node (``imports`` is its file's table, which the tree decides): DDP004 and
    DDP005 ask it of each class and of its bases. Read only."""
    known = cls.__dict__.get("_ddpfix_metric_attributes")
    if known is None:
        known = cls._ddpfix_metric_attributes = _metric_attributes(cls, imports)
    return known


def _metric_attributes(cls: ast.ClassDef, imports: ImportTable) -> set[str]:
    found: set[str] = set()
    for node in nodes_below(cls):  # a set: the walks kept on the methods, in any order
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
            continue
        if (imports.qualify(node.value.func) or "").split(".")[0] != "torchmetrics":
            continue
        for target in node.targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                found.add(target.attr)
    return found


def builds_ddp_trainer(tree: ast.Module, imports: ImportTable, data: bytes | None = None) -> bool:
    """``_lightning.builds_ddp_trainer``: the file builds a Trainer (or Fabric) with a DDP strategy,
    or one that Lightning's default makes DDP: no strategy (or ``"auto"``) with several devices, or
    devices it does not choose itself from what is written (``devices`` left out or ``"auto"``: every
    GPU of the machine; ``-1``; a count or list of more than one; a value not read), on an
    accelerator not known to be the CPU's or MPS's (Lightning 2.x ``_choose_strategy``: ``"ddp"``,
    ``"ddp_fork"`` in a notebook; 1.x ``gpus=2`` too). ``Trainer(devices=4)`` is DDP on a GPU machine."""
    if data is not None and b"Trainer" not in data and b"Fabric" not in data:
        return False
    for node in every_node(tree):
        if not isinstance(node, ast.Call) or lightning_name(imports, node.func) not in ("Trainer", "Fabric"):
            continue
        if any(arg.arg == "strategy" and is_ddp_strategy(arg.value, imports) for arg in node.keywords):
            return True
        if _default_ddp(node):
            return True
    return False


def _default_ddp(call: ast.Call) -> bool:
    """A Trainer or Fabric that Lightning's default strategy may make DDP (``builds_ddp_trainer``)."""
    if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return True  # ``Trainer(**cfg)``: its strategy and devices are not read
    named = {k.arg: k.value for k in call.keywords}
    strategy = named.get("strategy")
    if strategy is not None and string_value(strategy) != "auto":
        # Another strategy (a DDP one is read by the caller). One held in a name or built at run
        # time is not followed: lit-llama's `DeepSpeedStrategy(...) if devices > 1 else "auto"`
        # read as DDP made three wrong DDP013 findings.
        return False
    accelerator = string_value(named["accelerator"]) if "accelerator" in named else None
    if accelerator in ("cpu", "mps") and "devices" not in named:
        return False  # one CPU process, or the one MPS device
    for key in ("devices", "gpus"):
        if key not in named:
            continue
        value = named[key]
        if isinstance(value, ast.Constant) and value.value in (None, 0, 1, "1", "0"):
            continue
        if isinstance(value, (ast.List, ast.Tuple)) and len(value.elts) <= 1:
            continue
        return True  # several, all (-1, "auto"), or a value not read
    return "devices" not in named and "gpus" not in named and accelerator not in ("cpu", "mps")


def is_ddp_strategy(value: ast.expr, imports: ImportTable) -> bool:
    """A ``strategy=`` value that names DDP: a string starting with ``ddp`` or a ``DDPStrategy(...)``
    call (the test ``_lightning.builds_ddp_trainer`` makes of a LibCST ``Arg``'s value)."""
    text = string_value(value)
    return (text or "").startswith("ddp") or (
        isinstance(value, ast.Call) and lightning_name(imports, value.func) == "DDPStrategy"
    )


# --- comments --------------------------------------------------------------------------------


def has_comment(node: ast.AST, view) -> bool:
    """Whether a comment stands inside ``node``'s source (``view`` a ``TreeView``). A fix that edits
    a call's arguments can lose or repeat such a comment, which only LibCST's tree shows: a rule's
    ``check`` raises ``NeedsLibCST`` for it rather than guess."""
    return comment_in(view, start(node, view), end(node, view))


def comment_before_colon(header: str) -> bool:
    """Whether a compound statement's header (its text up to its body) holds a comment before the
    colon that ends it: inside brackets, where LibCST counts it as part of the expression."""
    depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(header).readline):
            if token.type == tokenize.COMMENT:
                return True
            if token.type == tokenize.OP:
                if token.string in "([{":
                    depth += 1
                elif token.string in ")]}":
                    depth -= 1
                elif token.string == ":" and depth == 0:
                    return False
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return True
    return True


#: The Lightning classes whose ``transfer_batch_to_device`` is Lightning's own move.
_BATCH_MOVING_ROOTS = frozenset({"LightningModule", "LightningDataModule"})


def moves_like_lightning(tree: ast.Module, method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """An override of ``transfer_batch_to_device`` that leaves every tensor of what it returns
    where Lightning's own move puts it: a straight run of statements (no branch, loop or ``with``)
    that only deletes fields of the batch it was handed (``del batch["crs"]``: what cannot be
    moved), binds names to Lightning's own move (``super().transfer_batch_to_device(batch, device,
    dataloader_idx)``) of that batch or of a field of it, with the ``device`` it was handed, and
    returns such a move or such a name. What is moved is so always this rank's own batch (no
    gathered one, no object made of it), and what is returned went through the move, which moves
    every tensor of a collection (a class's own ``to`` is a question of its own). ``super()``
    reaches Lightning's: the class and its bases of the file derive from ``LightningModule`` or
    ``LightningDataModule`` alone (``_derives_from_lightning_alone``), and none of them binds the
    name otherwise than by a ``def`` (each of which is asked this question too). Whether a class
    elsewhere puts another base between them (multiple inheritance) is the program's question."""
    owner = enclosing_class(tree, method)
    if owner is None or method.decorator_list or not isinstance(method, ast.FunctionDef):
        return False
    chain = _lightning_chain(tree, owner)
    if chain is None or any(method.name in names_bound_by(statement) and not isinstance(statement, ast.FunctionDef)
                            for cls in chain for statement in cls.body):
        return False
    positional = [*method.args.posonlyargs, *method.args.args]
    if len(positional) < 3 or method.args.vararg is not None:
        return False
    batch, device = positional[1].arg, positional[2].arg

    def lightning_move(node: ast.expr | None) -> bool:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "transfer_batch_to_device" and isinstance(node.func.value, ast.Call)
                and isinstance(node.func.value.func, ast.Name) and node.func.value.func.id == "super"
                and not has_star(node)):
            return False
        handed = node.args[1] if len(node.args) > 1 else getattr(keyword(node, "device"), "value", None)
        moved = node.args[0] if node.args else getattr(keyword(node, "batch"), "value", None)
        if isinstance(moved, ast.Subscript) and isinstance(moved.slice, ast.Constant):
            moved = moved.value
        return isinstance(handed, ast.Name) and handed.id == device and isinstance(moved, ast.Name) and moved.id == batch

    holding: set[str] = set()  # names that hold a move's result now
    returned = False
    for statement in method.body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue  # a docstring
        if isinstance(statement, ast.Delete) and all(
                isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == batch
                and isinstance(t.slice, ast.Constant) for t in statement.targets):
            continue
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name) \
                and statement.targets[0].id != device and lightning_move(statement.value):
            holding.add(statement.targets[0].id)
            continue
        if isinstance(statement, ast.Return) and (lightning_move(statement.value) or (
                isinstance(statement.value, ast.Name) and statement.value.id in holding)):
            returned = True
            break  # what follows never runs
        return False
    return returned


#: ``torch.<f>`` functions whose result is a tensor, whatever they are handed (or an error).
_TORCH_TENSOR_RESULTS = frozenset({
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "from_numpy", "tensor", "as_tensor", "asarray",
    "empty", "zeros", "ones", "full", "arange", "linspace", "eye", "empty_like", "zeros_like", "ones_like",
    "full_like", "where", "flatten", "squeeze", "unsqueeze", "reshape", "clone", "cumsum", "exp", "log",
})
#: Tensor methods whose result is a tensor again (on a collection element Lightning would move).
_TENSOR_TO_TENSOR = frozenset({
    "float", "double", "half", "bfloat16", "long", "int", "bool", "unsqueeze", "squeeze", "view", "reshape",
    "flatten", "contiguous", "clone", "detach", "permute", "transpose", "t", "type_as",
})

#: Tensor methods that read it into a new value of another kind (a NumPy view, numbers).
_TENSOR_READS = frozenset({"numpy", "tolist", "item", "size", "dim", "numel"})


def prepares_a_movable_batch(tree: ast.Module, method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """An ``on_before_batch_transfer`` whose result Lightning's move then enters whole: every value
    it returns is a tensor, a number, a string or None, the loader's own batch or a part of it, or a
    dict, list or tuple written out of these. Lightning moves every tensor of such a collection
    after the hook (what the hook makes on the CPU, ``torch.from_numpy(x).float()``, too); what it
    would not enter is an object of another class (``Batch(x, y)``), which no such value is. A
    tensor is what ``torch.<f>(...)`` gives for ``f`` of ``_TORCH_TENSOR_RESULTS`` (whatever it
    is handed: else it raises), and a tensor method of ``_TENSOR_TO_TENSOR`` on a value of these.
    The batch's own parts count only where the method neither binds the batch's name again nor
    uses it otherwise than to read a part (a call handed the batch, a store into it, may put an
    object in it), and no function or lambda nested in it names the batch (it shares the variable
    and the object, and may change either when called). What the hook does besides (reads, calls on other objects) decides nothing of
    the returned batch's kind. Undecorated, not a generator (which would hand Lightning a
    generator), with no ``torch`` of its own."""
    if method.decorator_list or not isinstance(method, ast.FunctionDef):
        return False
    positional = [*method.args.posonlyargs, *method.args.args]
    if len(positional) < 2 or method.args.vararg is not None:
        return False
    batch = positional[1].arg
    imports = ImportTable.from_tree(tree)
    body = list(walk_outside_scopes(method))
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in body) or any(
            isinstance(n, ast.Name) and n.id == "torch" and not isinstance(n.ctx, ast.Load) for n in body):
        return False

    def tensor_function(call: ast.Call) -> bool:
        qualified = imports.qualify(call.func)
        return qualified is not None and qualified.startswith("torch.") \
            and qualified.removeprefix("torch.") in _TORCH_TENSOR_RESULTS

    # A nested function or lambda shares the batch's variable and object: what it does with them
    # (a store, ``nonlocal batch``) runs whenever it is called, before the return too.
    shared = any(isinstance(n, ast.Name) and n.id == batch or isinstance(n, (ast.Nonlocal, ast.Global)) and batch in n.names
                 for scope in every_node(method) if scope is not method and isinstance(
                     scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
                 for n in walk(scope))
    parts_kept = not shared and _batch_only_read(method, body, batch, tensor_function)

    def movable(node: ast.expr | None) -> bool:
        if node is None or isinstance(node, ast.Constant):
            return True
        if isinstance(node, (ast.List, ast.Tuple)):
            return all(movable(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(k is not None and movable(v) for k, v in zip(node.keys, node.values))
        if isinstance(node, ast.IfExp):
            return movable(node.body) and movable(node.orelse)
        return tensor(node) or (parts_kept and _part_of(node, batch))

    def tensor(node: ast.expr) -> bool:
        if not isinstance(node, ast.Call):
            return False
        if isinstance(node.func, ast.Attribute) and node.func.attr in _TENSOR_TO_TENSOR and (tensor(node.func.value) or (
                parts_kept and _part_of(node.func.value, batch))):
            return True
        return tensor_function(node)

    return all(movable(n.value) for n in body if isinstance(n, ast.Return))


def _part_of(node: ast.expr, batch: str) -> bool:
    """``batch`` or a part of it read by subscripts (``batch["x"][:, None]``)."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Name) and node.id == batch


def _batch_only_read(method: ast.AST, body: list[ast.AST], batch: str, tensor_function) -> bool:
    """Every use of ``batch`` in ``body`` (``method``'s nodes outside its nested scopes) reads it or
    a part of it into a new value: a subscript, a collection written out, a comparison, a tensor
    method of ``_TENSOR_TO_TENSOR`` or ``_TENSOR_READS``, ``torch.<f>(...)`` (``tensor_function(call)``), or the value
    returned. Nothing binds it again, stores into it or hands it (or a part) to other code, which
    may put an object in it."""
    parents = parent_map(method)
    for node in body:
        if not (isinstance(node, ast.Name) and node.id == batch):
            continue
        if not isinstance(node.ctx, ast.Load):
            return False
        child, parent = node, parents.get(id(node))
        while isinstance(parent, (ast.Subscript, ast.List, ast.Tuple, ast.Dict, ast.IfExp, ast.ListComp,
                                  ast.GeneratorExp, ast.comprehension)):
            if isinstance(parent, ast.Subscript) and not isinstance(parent.ctx, ast.Load) \
                    or isinstance(parent, (ast.List, ast.Tuple)) and not isinstance(parent.ctx, ast.Load):
                return False
            child, parent = parent, parents.get(id(parent))
        if isinstance(parent, (ast.Return, ast.Compare)):
            continue
        if isinstance(parent, ast.Attribute) and parent.attr in _TENSOR_TO_TENSOR | _TENSOR_READS \
                and isinstance(parents.get(id(parent)), ast.Call) and parents[id(parent)].func is parent:
            continue  # a tensor's own method: what it gives holds no part of the batch's collections
        if isinstance(parent, ast.Call) and child is not parent.func and tensor_function(parent):
            continue
        return False
    return True


def names_bound_by(statement: ast.stmt) -> set[str]:
    """The names a statement of a class's or module's body binds there (not inside the functions
    it defines): targets, imports, ``def``/``class`` names, loop and ``with`` targets."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    found: set[str] = set()
    for node in [statement, *nodes_below(statement)]:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) and node is not statement:
            if not isinstance(node, ast.Lambda):
                found.add(node.name)
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return found


def _lightning_chain(tree: ast.Module, cls: ast.ClassDef) -> list[ast.ClassDef] | None:
    """``cls`` and its bases of the file, where every base, undecorated and with no metaclass, is
    ``LightningModule`` / ``LightningDataModule`` or a class the file binds once, by its ``class``
    statement at the top, that derives so: no code of another library stands between it and
    Lightning's hooks. None where one does not."""
    imports = ImportTable.from_tree(tree)
    bound: dict[str, int] = {}
    classes: dict[str, ast.ClassDef] = {}
    for statement in tree.body:
        for name in names_bound_by(statement):
            bound[name] = bound.get(name, 0) + 1
        if isinstance(statement, ast.ClassDef):
            classes[statement.name] = statement
    chain: list[ast.ClassDef] = []
    todo = [cls]
    while todo:
        current = todo.pop()
        if any(current is known for known in chain):
            continue
        chain.append(current)
        if current.decorator_list or current.keywords or not current.bases:
            return None
        for base in current.bases:
            if lightning_name(imports, base) in _BATCH_MOVING_ROOTS:
                continue
            if not (isinstance(base, ast.Name) and base.id in classes and bound.get(base.id) == 1):
                return None
            todo.append(classes[base.id])
    return chain


def enclosing_class(tree: ast.Module, method: ast.AST) -> ast.ClassDef | None:
    """The class whose body defines ``method`` directly; None for a function of no class."""
    return next((node for node in every_node(tree) if isinstance(node, ast.ClassDef) and method in node.body), None)
