"""When DDP008's fixes are safe: which load builds the model trained under DDP, and how the run starts.

Only ``device_map_under_ddp.check`` asks (applicability is decided on CPython's tree). Every test is
an allowlist: a load, a strategy or a launch not shown here to be the known case makes a fix unsafe.
"""

from __future__ import annotations

import ast

from ddpfix.ast_walk import child_nodes, walk
from ddpfix.analysis.ast_shapes import every_node
from ddpfix.analysis import lightning as tree_lightning
from ddpfix.rules._hardcoded_device_safety import devices_in_order
from ddpfix.analysis.lightning import lightning_name

# LightningModule methods that build the module Lightning then places (and DDP wraps): they run
# before ``strategy.setup`` moves the model. ``setup`` and ``configure_model`` run in every rank's
# process, also under ``ddp_spawn``; ``__init__`` runs where the module is constructed.
BUILD_METHODS = frozenset({"__init__", "setup", "configure_model"})
IN_RANK_PROCESS = frozenset({"setup", "configure_model"})
# Strategies whose processes Lightning's subprocess launcher starts by running the script again, each
# with ``LOCAL_RANK`` set (the first process, rank 0, without it: ``os.environ.get(..., 0)``).
SCRIPT_LAUNCHED = frozenset({"ddp", "ddp_find_unused_parameters_false", "ddp_find_unused_parameters_true"})
# device_map strings that spread a model over every visible GPU (model parallelism in one process).
SPREADING = frozenset({"auto", "balanced", "balanced_low_0", "sequential"})


class Run:
    """How the file's Trainers (or Fabrics) run: whether every one is DDP, and whether each is
    launched by running the script again (where ``LOCAL_RANK`` is set in each process)."""

    def __init__(self, tree: ast.Module, imports, text: str):
        builders = [node for node in every_node(tree) if isinstance(node, ast.Call)
                    and lightning_name(imports, node.func) in ("Trainer", "Fabric")]
        strategies = [tree_lightning.keyword(call, "strategy") for call in builders]
        self.ddp = bool(builders) and all(
            s is not None and tree_lightning.is_ddp_strategy(s.value, imports) for s in strategies)
        self.script_launched = self.ddp and all(_script_launched(s.value, imports) for s in strategies)
        # Rank N runs on GPU N (``LOCAL_RANK`` is then the GPU's index) only where every Trainer's
        # ``devices`` is a count or 0..n-1 in order: ``devices=[2, 3]`` puts rank 0 on GPU 2.
        self.devices_in_order = all(devices_in_order(call) for call in builders)
        # SLURM (srun) starts the processes itself: Lightning's launcher does not run, LOCAL_RANK is
        # unset everywhere (SLURM_LOCALID is set). Only visible where the file names it.
        self.slurm = "SLURM" in text or "slurm" in text


def _script_launched(value: ast.expr, imports) -> bool:
    text = tree_lightning.string_value(value)
    if text is not None:
        return text in SCRIPT_LAUNCHED
    if isinstance(value, ast.Call) and lightning_name(imports, value.func) == "DDPStrategy":
        method = tree_lightning.keyword(value, "start_method")
        return method is None or tree_lightning.string_value(method.value) == "popen"
    return False


def training_loads(tree: ast.Module, kinds: dict[str, str]) -> dict[int, str]:
    """The ``from_pretrained`` calls (by ``id``) that build the model trained under DDP, each with
    where: the name of a LightningModule's build method, or ``"fit"`` for a load in the same block
    as, and before, a ``.fit(...)`` call whose arguments it flows into (through plain assignments)."""
    found: dict[int, str] = {}
    for cls in every_node(tree):
        if not isinstance(cls, ast.ClassDef) or kinds.get(cls.name) != "lightning":
            continue
        for method in cls.body:
            if isinstance(method, tree_lightning.FUNCTIONS) and method.name in BUILD_METHODS:
                for node in every_node(method):
                    if _is_load(node):
                        found.setdefault(id(node), method.name)
    for block in _blocks(tree):
        for index, statement in enumerate(block):
            fit = _fit_call(statement)
            if fit is None:
                continue
            flowing = {n.id for arg in [*fit.args, *(k.value for k in fit.keywords)]
                       for n in walk(arg) if isinstance(n, ast.Name)}
            for earlier in reversed(block[:index]):
                if not isinstance(earlier, ast.Assign):
                    continue
                targets = {t.id for t in earlier.targets if isinstance(t, ast.Name)}
                if len(targets) != len(earlier.targets) or not targets & flowing:
                    continue
                flowing |= {n.id for n in walk(earlier.value) if isinstance(n, ast.Name)}
                for node in walk(earlier.value):
                    if _is_load(node):
                        found.setdefault(id(node), "fit")
    return found


def _is_load(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "from_pretrained" and tree_lightning.keyword(node, "device_map") is not None)


def _fit_call(statement: ast.stmt) -> ast.Call | None:
    """``trainer.fit(...)`` as a statement of its own."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Attribute) and func.attr == "fit":
            return statement.value
    return None


def _blocks(tree: ast.Module):
    """Every list of statements outside classes: the module's, and each function's and compound
    statement's bodies."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block
        pending.extend(child_nodes(node))


def _current_device(value: ast.expr) -> bool:
    """``"cuda"`` or ``{"": "cuda"}``: the current CUDA device when the model is loaded."""
    if isinstance(value, ast.Dict) and len(value.keys) == 1 and value.keys[0] is not None \
            and tree_lightning.string_value(value.keys[0]) == "":
        value = value.values[0]
    return tree_lightning.string_value(value) == "cuda"


def load_safety(call: ast.Call, where: str | None, run: Run, quantised: bool, value: ast.expr) -> tuple[bool, str]:
    """(whether a load's fix is proven to change nothing but the DDP failure, what was not proven).
    ``where``: ``training_loads``'s answer for the load; ``value``: the ``device_map=`` value."""
    text = tree_lightning.string_value(value)
    if where is None:
        return False, ("this load is not shown to build the model that fit trains under DDP (a LightningModule's "
                       "__init__/setup/configure_model, or a model passed to trainer.fit): a model loaded after fit "
                       "or for one rank keeps its device map on purpose, and without it stays on the CPU")
    if not run.ddp:
        return False, ("this file builds no Trainer whose strategy is DDP (or also another one): in one process "
                       "the device map may be what is meant")
    if text in SPREADING:
        return False, (f'device_map="{text}" spreads the model over the visible GPUs: whether it fits one GPU '
                       "cannot be decided statically")
    if quantised:
        if where in IN_RANK_PROCESS and _current_device(value):
            return False, (f"in {where} Lightning has already made the rank's GPU the current device, so a map "
                           "to \"cuda\" loads each rank's copy onto its own GPU: the original may be right, and "
                           "LOCAL_RANK is the rank's index, not always its GPU's")
        if not run.devices_in_order:
            return False, ("a Trainer of this file is not given its GPUs as a count or as 0..n-1 in order "
                           "(devices=[2, 3], or a value ddpfix cannot read): LOCAL_RANK is the rank's index, "
                           "not its GPU's, so the per-rank map would load onto other GPUs")
        if run.slurm:
            return False, ("the file names SLURM: srun starts the processes without LOCAL_RANK (it sets "
                           "SLURM_LOCALID), so every rank's copy would still load onto GPU 0")
        if not run.script_launched and where not in IN_RANK_PROCESS:
            return False, ("the strategy is not one whose processes rerun the script (ddp_spawn, ddp_fork, a "
                           "start method): the module is built in the launching process, where LOCAL_RANK is "
                           "not set, so every rank's copy would load onto GPU 0; load it in configure_model")
        return False, (f"{USED_OUTSIDE}; and whether LOCAL_RANK is each process's GPU depends on how the program "
                       "is started (srun, a launch script, a device the program sets itself), which is not read")
    return False, (f"{USED_OUTSIDE}; and dropping device_map also turns off transformers' low-memory loading "
                   "(each rank then builds the whole model in host memory first, and before transformers 4.36 "
                   "draws the initial values of weights missing from the checkpoint in another order)")


#: Why moving a loaded model off the device its map names is not proven harmless: the analysis does
#: not follow the model's uses (review helper-41: a generate before fit, a frozen encoder that
#: embeds data, a teacher handed to a data module, another file that builds the class for inference).
USED_OUTSIDE = ("the model may be used where Lightning does not place it (before fit, by a data module, a "
                "metric or another file that builds the class), and there it would no longer be on the "
                "device its inputs are sent to; its uses are not read")
