"""DDP013 manual-rank-sharding: data sharded by hand while Lightning shards it too."""

from __future__ import annotations

import ast

import libcst as cst

from ddpfix.transforms._args import keyword
from ddpfix.transforms._ast_shapes import import_targets, resolved
from ddpfix.transforms._lightning import LIGHTNING_PACKAGES, builds_ddp_trainer, data_classes
from ddpfix.transforms._ranks import RankTests
from ddpfix.transforms.base import Rule, RuleContext
from ddpfix.transforms._text import GAP, keyword_argument, pattern, word_match
from ddpfix.transforms._walk import walk

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

    ## When it does not fix
    Always: which of the two remedies fits is a design decision.
    """

    code = "DDP013"
    name = "manual-rank-sharding"
    summary = "Data sharded by rank by hand while Lightning's DistributedSampler shards it again"
    fixable = False
    # "Data" is implied by the last group and one scan of the file rules most files out.
    triggers = ("Data", ("rank", "RANK", "sampler"), ("Dataset", "DataModule", "DataLoader"))
    uses_facts = True

    @classmethod
    def triggered_by(cls, data: bytes) -> bool:
        """The words, then what ``may_apply``'s two cases need in the bytes: a base class that may
        resolve into ``torch.utils.data`` or be a ``LightningDataModule``, or both a sampler and a
        strategy keyword. "rank" and "Dataset" are words of every other file of torch and
        transformers."""
        if not cls.has_trigger_words(data):
            return False
        if b"LightningDataModule" in data or _TORCH_UTILS.search(data):
            return True
        return _FROM_TORCH_IMPORT.search(data) is not None and b"utils" in data or (
            _SAMPLER_KEYWORD.search(data) is not None and word_match(_STRATEGY_KEYWORD, data)
        )

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """A superset of ``apply``'s two cases, from CPython's tree: (1) a class deriving, through the
        file's imports or its own classes, from something of ``torch.utils.data`` or from a
        Lightning package's ``LightningDataModule``, with a rank word inside it; (2) a call with a ``sampler=`` / ``batch_sampler=`` and
        a call with ``strategy=`` (a Trainer built for DDP)."""
        imports: list[ast.stmt] = []
        rank_aliases: set[str] = set()  # ``from torch.distributed import get_rank as where``
        classes: list[ast.ClassDef] = []
        sampler = strategy = False
        for node in ast.walk(tree):
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
            for inner in ast.walk(node):
                word = (inner.attr if isinstance(inner, ast.Attribute) else inner.id if isinstance(inner, ast.Name)
                        else inner.value if isinstance(inner, ast.Constant) and isinstance(inner.value, str) else "")
                if "rank" in word.lower() or word in rank_aliases:
                    return True
        return False

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        # A Dataset often lives in a file of its own; what matters is that the run trains with Lightning.
        if not ctx.facts.uses_lightning or ctx.facts.sampler_off_for(ctx.path):
            return module
        tests = RankTests(ctx.imports)
        for name, cls in data_classes(module, ctx.imports).items():
            if _iterable(cls, ctx):
                continue  # Lightning never adds a sampler to an IterableDataset: sharding it is the author's job
            use = _first_rank_use(cls, tests)
            if use is not None:
                ctx.report(
                    use,
                    f"{name} selects its data by rank while use_distributed_sampler=True (the default) makes "
                    f"Lightning shard it again: each rank gets a fraction of its shard, and unequal shards stall "
                    f"the collectives at the end of validation; {REMEDIES}",
                    fixable=False,
                )
        if builds_ddp_trainer(module, ctx.imports, ctx.data):
            for call, arg in _custom_samplers(module, ctx):
                ctx.report(
                    arg,
                    f"DataLoader({arg.keyword.value}=...) in a DDP script: Lightning wraps a custom sampler in "
                    "DistributedSamplerWrapper and shards what it yields; if it already yields one rank's share, "
                    f"the data is sharded twice and ranks can get different numbers of batches; {REMEDIES}",
                    fixable=False,
                )
        return module


_DATA_PREFIX = "torch.utils.data."
# The ways an import may bind a name under ``torch.utils.data``: ``torch.utils`` spelt out, or
# ``from torch import utils``.
_TORCH_UTILS = pattern("torch", GAP + rb"\." + GAP + rb"utils\b")
_FROM_TORCH_IMPORT = pattern("from", GAP + rb"torch" + GAP + rb"import\b")
_SAMPLER_KEYWORD = keyword_argument("sampler")  # ``batch_sampler=`` too: no word start asked
_STRATEGY_KEYWORD = keyword_argument("strategy")


def _iterable(cls: cst.ClassDef, ctx: RuleContext) -> bool:
    return any((ctx.imports.qualify(base.value) or "").endswith("IterableDataset") for base in cls.bases)


QUIET_CALLS = frozenset({"print", "log", "info", "debug", "warning", "rank_zero_info", "rank_zero_warn"})


def _first_rank_use(cls: cst.ClassDef, tests: RankTests) -> cst.CSTNode | None:
    """A rank that decides which data this object holds: in an index or slice, an argument of a
    call (not a print or a log), or a variable later used in one. A rank in an ``if`` test is not."""

    def is_rank(node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Attribute) and node.attr.value in ("global_rank", "local_rank"):
            return True
        if isinstance(node, cst.Call) and tests.imports.qualify(node.func) == "torch.distributed.get_rank":
            return True
        return tests._is_rank_variable(node) or (isinstance(node, cst.Call) and tests._is_rank(node))

    found: list[cst.CSTNode] = []
    rank_variables: set[str] = set()

    class Ranks(cst.CSTVisitor):
        """Every rank expression below a node."""

        def __init__(self):
            super().__init__()
            self.hits: list[cst.CSTNode] = []

        def on_visit(self, node: cst.CSTNode) -> bool:
            if is_rank(node) or (isinstance(node, cst.Name) and node.value in rank_variables):
                self.hits.append(node)
                return False
            return True

    def ranks_in(node: cst.CSTNode) -> list[cst.CSTNode]:
        collector = Ranks()
        walk(node, collector)
        return collector.hits

    class Collect(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if ranks_in(node.value) and all(isinstance(t.target, cst.Name) for t in node.targets):
                rank_variables.update(t.target.value for t in node.targets)

        def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
            found.extend(ranks_in(node))

        def visit_Call(self, node: cst.Call) -> None:
            callee = node.func.attr.value if isinstance(node.func, cst.Attribute) else getattr(node.func, "value", None)
            if callee in QUIET_CALLS:
                return
            for arg in node.args:
                found.extend(ranks_in(arg.value))

    walk(cls, Collect())
    return found[0] if found else None


def _custom_samplers(module: cst.Module, ctx: RuleContext):
    found = []

    class Collect(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if (ctx.imports.qualify(node.func) or "").rsplit(".", 1)[-1] != "DataLoader":
                return
            for name in ("sampler", "batch_sampler"):
                arg = keyword(node, name)
                if arg is None or (isinstance(arg.value, cst.Name) and arg.value.value == "None"):
                    continue
                value = arg.value
                kind = (ctx.imports.qualify(value.func) or "").rsplit(".", 1)[-1] if isinstance(value, cst.Call) else ""
                if kind in ("DistributedSampler", "RandomSampler", "SequentialSampler"):
                    continue  # kept as it is, or replaced by Lightning's own DistributedSampler
                found.append((node, arg))

    walk(module, Collect())
    return found
