"""DDP013 manual-rank-sharding: data sharded by hand while Lightning shards it too."""

from __future__ import annotations

import ast
from collections.abc import Mapping

from ddpfix.ast_walk import child_nodes, walk
from ddpfix.imports import ImportTable
from ddpfix.analysis.ast_shapes import arguments, every_node, import_targets, resolved
from ddpfix.analysis.lightning import LIGHTNING_PACKAGES
from ddpfix.analysis.ranks import RANK_VARIABLES
from ddpfix.analysis.lightning import (
                                       FUNCTIONS, derived, arguments_in_order, builds_ddp_trainer, data_classes, keyword, single_index, string_value,
                                       )
from ddpfix.rules.base import Rule, RuleContext
from ddpfix.analysis.text import GAP, aliased, keyword_argument, pattern, word_match

REMEDIES = (
    "either let Lightning shard (drop the per-rank selection, keep use_distributed_sampler=True), or shard by hand "
    "with Trainer(use_distributed_sampler=False) and give every rank the same number of batches"
)


class ManualRankSharding(Rule):
    """
    # DDP013 manual-rank-sharding

    ## What it does
    Reports a LightningDataModule or Dataset that picks its data by rank (`self.trainer.global_rank`,
    `global_rank`, `local_rank`, `dist.get_rank()`, `LOCAL_RANK`/`RANK` from the environment) while
    no Trainer of the run turns `use_distributed_sampler` off, and a custom `sampler=` /
    `batch_sampler=` given to a DataLoader in a script that trains with DDP.

    ## Why it breaks under DDP
    With `use_distributed_sampler=True` (the default) Lightning wraps every training loader in a
    `DistributedSampler` that gives each rank `ceil(N / world_size)` samples: data sharded by hand
    is sharded twice, and each rank sees a quarter of its quarter. Shards of unequal size give ranks
    different numbers of batches, and the collectives at the end of validation stall (PL#19272,
    PL#9851). A custom sampler is wrapped in `DistributedSamplerWrapper`, which shards what it
    yields: a sampler that already yields one rank's indices is sharded twice too.

    ## Before / After
    ```python
    # before: shards by hand, and Lightning shards again
    self.files = all_files[self.trainer.global_rank :: self.trainer.world_size]
    # after (one way): leave sharding to Lightning
    self.files = all_files
    ```

    ## When it does not report
    A Trainer anywhere in the program turns the sampler off (`use_distributed_sampler=False`, 1.x
    `replace_sampler_ddp=False`, as a keyword of any call, a key of a dict literal, or a YAML
    configuration of the program: hydra's `configs/trainer/*.yaml`, a LightningCLI config): the
    training script usually lives in another folder than the data module it drives. A sampler Lightning
    keeps or replaces is not custom: torch's `RandomSampler`, `SequentialSampler`,
    `DistributedSampler`, and any `DistributedSampler` subclass of the file or the project (read
    across files, through imports and re-exports), also through a name bound once to one; an
    IterableDataset, which Lightning never shards.

    ## When it does not fix
    Always: which of the two remedies fits is a design decision.
    """

    code = "DDP013"
    name = "manual-rank-sharding"
    summary = "Data sharded by rank by hand while Lightning's DistributedSampler shards it again"
    fixable = False
    # "Data" is implied by the last group and one scan of the file rules most files out.
    triggers = ("Data", ("rank", "RANK", "SLURM_PROCID", "sampler"), ("Dataset", "DataModule", "DataLoader"))
    uses_facts = True

    @classmethod
    def triggered_by(cls, data: bytes) -> bool:
        """The words, then what ``may_apply``'s two cases need in the bytes: a base class that may
        resolve into ``torch.utils.data`` or be a ``LightningDataModule``, or both a sampler and a
        strategy keyword or a Trainer (DDP by Lightning's default). "rank" and "Dataset" are words of every other file of torch and
        transformers."""
        if not cls.has_trigger_words(data):
            return False
        if b"LightningDataModule" in data or _TORCH_UTILS.search(data):
            return True
        if b"utils" in data and aliased("torch", data):
            return True  # ``import torch as th``, then ``th.utils.data.Dataset``
        return _FROM_TORCH_IMPORT.search(data) is not None and b"utils" in data or (
            _SAMPLER_KEYWORD.search(data) is not None and (
                word_match(_STRATEGY_KEYWORD, data) or b"Trainer" in data or b"Fabric" in data)
        )

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """A superset of ``apply``'s two cases, from CPython's tree: (1) a class deriving, through the
        file's imports or its own classes, from something of ``torch.utils.data`` or from a
        Lightning package's ``LightningDataModule``, with a rank word or a rank variable of the
        environment (``SLURM_PROCID``) inside it; (2) a call with a ``sampler=`` /
        ``batch_sampler=`` and a call with ``strategy=`` or of a Trainer or Fabric (built for DDP, or
        DDP by Lightning's default)."""
        imports: list[ast.stmt] = []
        rank_aliases: set[str] = set()  # ``from torch.distributed import get_rank as where``
        classes: list[ast.ClassDef] = []
        sampler = strategy = False
        for node in every_node(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                imports.append(node)
                if isinstance(node, ast.ImportFrom):
                    rank_aliases.update(a.asname for a in node.names if a.asname and "rank" in a.name.lower())
            elif isinstance(node, ast.ClassDef):
                classes.append(node)
            elif isinstance(node, ast.Call):
                for k in node.keywords:
                    if k.arg in ("sampler", "batch_sampler") and not (isinstance(k.value, ast.Constant) and k.value.value is None):
                        sampler = True
                    elif k.arg == "strategy":
                        strategy = True
                func = node.func
                if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) in ("Trainer", "Fabric"):
                    strategy = True  # Lightning's default strategy may be DDP (``builds_ddp_trainer``)
        if sampler and strategy:
            return True

        imported = import_targets(imports)

        def data_base(base: ast.expr) -> bool:
            return any(
                full.startswith(_DATA_PREFIX)
                or (full.split(".", 1)[0] in LIGHTNING_PACKAGES and full.rsplit(".", 1)[-1] == "LightningDataModule")
                for full in resolved(base, imported)
            )

        data: set[str] = set()
        grew = True
        while grew:  # the file's own hierarchy, in any order
            grew = False
            for node in classes:
                if node.name not in data and any(
                    data_base(b) or (isinstance(b, ast.Name) and b.id in data) for b in node.bases
                ):
                    data.add(node.name)
                    grew = True
        for node in classes:
            if node.name not in data:
                continue
            for inner in walk(node):
                word = (inner.attr if isinstance(inner, ast.Attribute) else inner.id if isinstance(inner, ast.Name)
                        else inner.value if isinstance(inner, ast.Constant) and isinstance(inner.value, str) else "")
                if "rank" in word.lower() or word in RANK_VARIABLES or word in rank_aliases:
                    return True
        return False

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """Reports on CPython's tree exactly what the rule's LibCST version did (``bench/parity.py``
        compared them); every finding is an expression or a keyword, so it never needs LibCST."""
        # A Dataset often lives in a file of its own; what matters is that the run trains with Lightning.
        if not ctx.facts.uses_lightning or ctx.facts.sampler_off_for(ctx.path):
            return
        for name, cls in data_classes(tree, ctx.imports).items():
            if _iterable(cls, ctx.imports):
                continue  # Lightning never adds a sampler to an IterableDataset: sharding it is the author's job
            use = _RankUses(ctx).first_in(cls)
            if use is not None:
                ctx.report(use, f"{name} selects its data by rank; Lightning shards it again",
                           detail=_sharded_message(name), fixable=False)
        if builds_ddp_trainer(tree, ctx.imports, ctx.data):
            for arg in _custom_samplers(tree, ctx.imports, ctx.facts.of_kind("DistributedSampler", ctx.path)):
                ctx.report(arg, f"DataLoader({arg.arg}=...) in a DDP script: Lightning shards it again",
                           detail=_sampler_message(arg.arg), fixable=False)


def _sharded_message(name: str) -> str:
    return (
        f"{name} selects its data by rank while use_distributed_sampler=True (the default) makes "
        f"Lightning shard it again: each rank gets a fraction of its shard, and unequal shards stall "
        f"the collectives at the end of validation; {REMEDIES}"
    )


def _sampler_message(keyword_name: str) -> str:
    return (
        f"DataLoader({keyword_name}=...) in a DDP script: Lightning wraps a custom sampler in "
        "DistributedSamplerWrapper and shards what it yields; if it already yields one rank's share, "
        f"the data is sharded twice and ranks can get different numbers of batches; {REMEDIES}"
    )


_DATA_PREFIX = "torch.utils.data."
# The ways an import may bind a name under ``torch.utils.data``: ``torch.utils`` spelt out, or
# ``from torch import utils``.
_TORCH_UTILS = pattern("torch", GAP + rb"\." + GAP + rb"utils\b")
_FROM_TORCH_IMPORT = pattern("from", GAP + rb"torch" + GAP + rb"import\b")
_SAMPLER_KEYWORD = keyword_argument("sampler")  # ``batch_sampler=`` too: no word start asked
_STRATEGY_KEYWORD = keyword_argument("strategy")


QUIET_CALLS = frozenset({"print", "log", "info", "debug", "warning", "rank_zero_info", "rank_zero_warn"})


_KEPT_SAMPLERS = ("DistributedSampler", "RandomSampler", "SequentialSampler")


def _iterable(cls: ast.ClassDef, imports: ImportTable) -> bool:
    # LibCST's ``base.value`` of ``*bases`` is what follows the star.
    bases = (b.value if isinstance(b, ast.Starred) else b for b in cls.bases)
    return any((imports.qualify(base) or "").endswith("IterableDataset") for base in bases)


def _custom_samplers(tree: ast.Module, imports: ImportTable, distributed: Mapping[str, frozenset[str]]) -> list[ast.keyword]:
    """``sampler=`` / ``batch_sampler=`` keywords of ``DataLoader(...)`` calls that Lightning wraps:
    not a sampler it keeps or replaces (``_KEPT_SAMPLERS``), nor a ``DistributedSampler`` subclass
    of the file or of the project (``distributed``: ``ProjectFacts.kinds``), which Lightning's
    ``_requires_distributed_sampler`` leaves alone; a name bound once to one of those is one."""
    bound: dict[str, ast.expr | None] = {}
    # The file's own DistributedSampler subclasses (a RandomSampler subclass is wrapped: it is custom).
    own = set(derived(tree, lambda base: "kept" if _kept(base, imports, distributed, ("DistributedSampler",)) else None))
    for node in every_node(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound[target.id] = node.value if target.id not in bound else None
    found = []
    for node in every_node(tree):
        if not isinstance(node, ast.Call) or (imports.qualify(node.func) or "").rsplit(".", 1)[-1] != "DataLoader":
            continue
        for name in ("sampler", "batch_sampler"):
            arg = keyword(node, name)
            if arg is None or (isinstance(arg.value, ast.Constant) and arg.value.value is None):
                continue
            value = arg.value
            if isinstance(value, ast.Name) and isinstance(bound.get(value.id), ast.Call):
                value = bound[value.id]
            # Lightning asks only ``dataloader.sampler`` whether it is a DistributedSampler: a batch
            # sampler of that kind is still re-instantiated (VITS' bucket sampler crashes on ``drop_last``).
            if name == "sampler" and isinstance(value, ast.Call) and (
                    _kept(value.func, imports, distributed) or (isinstance(value.func, ast.Name) and value.func.id in own)):
                continue  # kept as it is, or replaced by Lightning's own
            found.append(arg)
    return found


def _kept(func: ast.expr, imports: ImportTable, distributed: Mapping[str, frozenset[str]],
          torch_samplers: tuple[str, ...] = _KEPT_SAMPLERS) -> bool:
    """``func`` names a sampler Lightning keeps or replaces: torch's own, or the project's
    ``DistributedSampler`` subclass (reached by the module it comes from, as ``defined_elsewhere``)."""
    qualified = imports.qualify(func) or ""
    short = qualified.rsplit(".", 1)[-1] if qualified else (func.id if isinstance(func, ast.Name) else "")
    if short in torch_samplers and qualified.startswith("torch."):
        return True  # torch's own (a project class named DistributedSampler is not)
    if short not in distributed:
        return False
    module = qualified.rpartition(".")[0]
    return not module or module.rsplit(".", 1)[-1] in distributed[short]


class _RankUses:
    """A rank that decides which data a class holds: in an index or slice, an argument of a call
    (not a print or a log), or a variable later used in one. A rank in an ``if`` test is not.

    The use reported is the one the rule's LibCST version found: the first in LibCST's visiting
    order (the source's). LibCST's tree has ``Name`` nodes where ``ast`` has strings (an
    attribute's name, a keyword's name, a lambda's parameter): a rank variable's name there was a
    use, so here it becomes a ``Name`` placed where that text stands."""

    def __init__(self, ctx: RuleContext):
        self.imports = ctx.imports
        self.segment = ctx.view.positions.segment
        self.variables: set[str] = set()  # names assigned a rank, in the order of the walk

    def first_in(self, cls: ast.ClassDef) -> ast.AST | None:
        """The first rank use in ``cls``: at the first call or subscript, in LibCST's visiting
        order, whose arguments or index hold one (a variable counts from its assignment on)."""
        pending: list[tuple[ast.AST, bool]] = [(cls, False)]
        while pending:
            node, is_index = pending.pop()
            if is_index:  # LibCST visits a SubscriptElement before what it holds
                use = self._first_rank(node)
                if use is not None:
                    return use
            if isinstance(node, ast.Assign):
                if self._first_rank(node.value) is not None and all(isinstance(t, ast.Name) for t in node.targets):
                    self.variables.update(t.id for t in node.targets)
            elif isinstance(node, ast.Call) and _callee(node.func) not in QUIET_CALLS:
                for value in arguments(node):
                    use = self._first_rank(value)
                    if use is not None:
                        return use
            children = _source_children(node)
            pending.extend((child, isinstance(node, ast.Subscript) and child is node.slice) for child in reversed(children))
        return None

    def _first_rank(self, node: ast.AST) -> ast.AST | None:
        """The first rank expression below ``node`` in source order (one is not entered)."""
        pending = [node]
        while pending:
            current = pending.pop()
            if self._is_use(current):
                return current
            children = _source_children(current)
            if isinstance(current, ast.Attribute) and current.attr in self.variables:
                children.append(_attribute_name(current))  # after the value: ``x.rank``
            elif isinstance(current, ast.keyword) and current.arg in self.variables:
                children.insert(0, _keyword_name(current))  # before the value: ``f(rank=...)``
            pending.extend(reversed(children))
        return None

    def _is_use(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.variables  # the placed names are made only for a variable
        if isinstance(node, ast.arg):
            return node.arg in self.variables  # a lambda's parameter (the only ``arg`` an expression holds)
        if isinstance(node, ast.Attribute):
            return node.attr in ("global_rank", "local_rank")
        if isinstance(node, ast.Call):
            if self.imports.qualify(node.func) == "torch.distributed.get_rank":
                return True
            given = arguments(node)
            if isinstance(node.func, ast.Name) and node.func.id == "int" and len(given) == 1:
                return self._is_rank_variable(given[0])  # int(os.environ["LOCAL_RANK"])
        return self._is_rank_variable(node)

    def _is_rank_variable(self, node: ast.AST) -> bool:
        """``_ranks.RankTests._is_rank_variable``: ``os.environ["LOCAL_RANK"]``, ``os.environ.get("RANK")``,
        ``os.getenv("RANK")``."""
        key = None
        if isinstance(node, ast.Subscript) and self.imports.qualify(node.value) == "os.environ":
            key = single_index(node.slice, self.segment)
        elif isinstance(node, ast.Call):
            given = arguments(node)
            if given and self.imports.qualify(node.func) in ("os.environ.get", "os.getenv"):
                key = given[0]
        return key is not None and string_value(key) in RANK_VARIABLES


def _callee(func: ast.expr) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _attribute_name(node: ast.Attribute) -> ast.Name:
    """The ``Name`` LibCST has for an attribute's name: the last token of the attribute."""
    width = len(node.attr.encode("utf-8"))  # ``ast`` counts columns in UTF-8 bytes
    return ast.Name(id=node.attr, lineno=node.end_lineno, col_offset=node.end_col_offset - width,
                    end_lineno=node.end_lineno, end_col_offset=node.end_col_offset)


def _keyword_name(node: ast.keyword) -> ast.Name:
    """The ``Name`` LibCST has for a keyword's name: the first token of the keyword."""
    width = len(node.arg.encode("utf-8"))
    return ast.Name(id=node.arg, lineno=node.lineno, col_offset=node.col_offset,
                    end_lineno=node.lineno, end_col_offset=node.col_offset + width)


def _source_children(node: ast.AST) -> list[ast.AST]:
    """``node``'s children in source order, which is LibCST's visiting order. ``ast``'s field order
    is that too, except in calls (keywords apart), conditional expressions (test first), dicts (keys
    apart), parameters (defaults apart) and definitions (decorators last)."""
    if isinstance(node, ast.Call):
        return [node.func, *arguments_in_order(node)]
    if isinstance(node, ast.IfExp):
        return [node.body, node.test, node.orelse]
    if isinstance(node, ast.Dict):
        return [child for pair in zip(node.keys, node.values) for child in pair if child is not None]
    if isinstance(node, FUNCTIONS):
        return [*node.decorator_list, *_parameters(node.args), *([node.returns] if node.returns else []), *node.body]
    if isinstance(node, ast.Lambda):
        return [*_parameters(node.args), node.body]
    if isinstance(node, ast.ClassDef):
        header = sorted([*node.bases, *node.keywords], key=lambda n: (n.lineno, n.col_offset))
        return [*node.decorator_list, *header, *node.body]
    return child_nodes(node)


def _parameters(args: ast.arguments) -> list[ast.AST]:
    """Parameters and their defaults in source order."""
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    found: list[ast.AST] = []
    for parameters in (zip(positional, defaults), [(args.vararg, None)],
                       zip(args.kwonlyargs, args.kw_defaults), [(args.kwarg, None)]):
        for parameter, default in parameters:
            if parameter is not None:
                found.append(parameter)
                if default is not None:
                    found.append(default)
    return found
