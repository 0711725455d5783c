"""DDP012 unseeded-random-split: every rank draws its own split, so validation data leaks into training."""

from __future__ import annotations

import ast

from ddpfix.ast_walk import child_nodes
from ddpfix import edits
from ddpfix.edits import Span
from ddpfix.analysis import lightning as tree_lightning
from ddpfix.analysis.ast_shapes import every_node, imports_of, may_be
from ddpfix.analysis.lightning import lightning_name
from ddpfix.analysis.names import statement_names as tree_statement_names
from ddpfix.rules.base import Rule, RuleContext

RANDOM_SPLIT = frozenset({"torch.utils.data.random_split", "torch.utils.data.dataset.random_split"})
DEFAULT_SEED = 42


class UnseededRandomSplit(Rule):
    """
    # DDP012 unseeded-random-split

    ## What it does
    Adds `generator=torch.Generator().manual_seed(<seed>)` to `random_split(...)` calls without a
    generator, inside a LightningDataModule, a LightningModule (its `setup` runs on every rank too) or
    a Dataset, or in a script that builds a DDP Trainer (a DDP strategy, or none with several devices
    or with devices Lightning chooses itself: `Trainer(devices=4)` and `Trainer()` on a machine with
    several GPUs are DDP in Lightning 2.x).
    The seed is the literal passed to `seed_everything(...)` in the run's files when there is exactly
    one such seed, else 42; `import torch` is added if the file lacks it.

    ## Why it breaks under DDP
    Each rank runs `setup` on its own, and `random_split` draws from the global generator, which
    differs per rank unless seeded identically right before it (PL#7728): each rank gets another
    split, so samples one rank validates on are trained on by another. A generator of its own makes
    every rank draw the same split.

    ## Before
    ```python
    def setup(self, stage=None):
        self.train, self.val = random_split(self.full, [0.9, 0.1])
    ```

    ## After
    ```python
    def setup(self, stage=None):
        self.train, self.val = random_split(self.full, [0.9, 0.1], generator=torch.Generator().manual_seed(42))
    ```

    ## When it does not fix
    A call with `*args`/`**kwargs` (the generator may be in there) is reported only; so is a call
    where the name the fix writes is not proven bound: torch imported only inside another function
    (`def prepare_data(self): import torch`), after the call, under an `if`/`try`, or that name used
    as a parameter or loop variable somewhere in the file (the fix would raise NameError when the
    split runs, which compiling cannot catch). Plain scripts without DDP are left alone.

    ## Fix safety
    Every fix is **unsafe**: it changes which samples the split draws, and a changed split is what
    a person must review. The finding says what the change costs in the file:
    - a split inside a loop or comprehension: every pass would draw the same split, where each now
      draws a new one (repeated splits to measure spread, k-fold by hand);
    - a file that seeds torch's global generator (`seed_everything(s)`, `torch.manual_seed(s)`):
      seeded alike on every rank right before the split, it is already the same on every rank; the
      fix changes it and every random draw after it (the generator no longer advances the global
      one). A seed that is not a literal (`seed_everything(args.seed)`) is not carried into the
      fix, which writes the run's literal seed or 42: a seed sweep would lose its variation;
    - a run that seeds elsewhere (`seed_everything` with a literal in a script of the folder);
    - otherwise the split still changes: whether a seed is set in a file the run did not see, by
      `PL_GLOBAL_SEED`, or whether splits are meant to differ from run to run, is not known (the
      facts pass records only literal `seed_everything` seeds, so no run proves a program unseeded).
    """

    code = "DDP012"
    name = "unseeded-random-split"
    summary = "random_split without a generator under DDP: ranks draw different splits, validation leaks"
    fixable = True
    triggers = ("random_split",)
    lightning_only = True
    uses_facts = True

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """A call that may be ``torch.utils.data.random_split`` through the file's imports (a word
        in a docstring is not one)."""
        imported = imports_of(tree)
        return any(isinstance(node, ast.Call) and may_be(node.func, RANDOM_SPLIT, imported) for node in every_node(tree))

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """The one analysis: findings, each fix's applicability, and its typed edits (the
        ``generator=`` keyword, and ``import torch`` where the file lacks it), which the engine
        carries out on LibCST's tree (a fixed call nested in another's arguments stays fixed)."""
        # Imported here, not at the top: a run loads every rule, and only files this rule checks need it.
        from ddpfix.rules._unseeded_random_split_safety import NOT_BOUND, tree_bound, tree_other_bindings

        holders = {id(cls) for cls in tree_lightning.data_classes(tree, ctx.imports).values()}
        # A LightningModule's ``setup``/``prepare_data`` run on every rank too (tutorials split there).
        holders |= {id(cls) for cls, _method in tree_lightning.lightning_methods(
            tree, ctx.imports, ctx.facts.of_kind("LightningModule", ctx.path))}
        everywhere = tree_lightning.builds_ddp_trainer(tree, ctx.imports, ctx.data)
        seeds = ctx.facts.seeds_for(ctx.path)
        seed = next(iter(seeds)) if len(seeds) == 1 else DEFAULT_SEED
        torch_name = next((local for local, target in ctx.imports.names.items() if target == "torch"), None)
        generator = f"{torch_name or 'torch'}.Generator().manual_seed({seed})"
        # Without a torch import the fix adds one; if ``torch`` already names something else, it cannot.
        added_import = [edits.AddImport("torch")] if torch_name is None else []
        splits = _tree_splits(tree, ctx, holders, everywhere)
        if not splits:
            return
        torch_taken = torch_name is None and "torch" in _tree_names_used(tree)
        unbound = torch_name is not None and tree_other_bindings(tree, torch_name)
        # Only a file that names a seed can seed torch's generator (``seed_everything``, ``manual_seed``).
        seeding = _tree_seeding(tree, ctx) if b"seed" in ctx.data or b"set_rng_state" in ctx.data else None
        for call, scopes, looped in splits:
            where = "in a DataModule or LightningModule" if not everywhere else "in a DDP script"
            message = (
                f"random_split without a generator {where}: each rank draws its own split, so data one rank "
                "validates on is trained on by another; give it a seeded generator"
            )
            short = f"random_split without a generator {where}: ranks split differently"
            if tree_lightning.has_star(call):
                ctx.report(call, short, detail=message + " (not rewritten: *args/**kwargs may carry one)", fixable=False)
            elif torch_taken:
                ctx.report(call, short, detail=message + " (not rewritten: `torch` names something else in this file)",
                           fixable=False)
            elif torch_name is not None and (unbound or not tree_bound(tree, call, scopes, torch_name)):
                ctx.report(call, short, detail=f"{message} {NOT_BOUND.format(name=torch_name)}", fixable=False)
            else:
                fix = [edits.SetKeyword(Span.of(ctx.position(call)), "generator", generator), *added_import]
                ctx.report(call, short, detail=message, fixable=True, why=_why_unsafe(ctx, seeding, looped), edits=fix)


def _tree_names_used(tree: ast.Module) -> set[str]:
    """``_names_used`` on CPython's tree."""
    names = tree_statement_names(tree)
    return names.reads | names.binds


def _tree_splits(tree: ast.Module, ctx: RuleContext, holders: set[int], everywhere: bool) -> list[ast.Call]:
    """``_splits`` on CPython's tree: unseeded ``random_split`` calls, inside a data class (any node
    of it: decorators and bases too, as LibCST's visitor counts them) unless ``everywhere``."""
    found: list[tuple[ast.Call, tuple[ast.AST, ...], bool]] = []
    pending: list[tuple[ast.AST, bool, tuple[ast.AST, ...], bool]] = [(tree, False, (), False)]
    while pending:
        node, inside, scopes, looped = pending.pop()
        inside = inside or id(node) in holders
        if isinstance(node, ast.Call) and (everywhere or inside) and ctx.imports.qualify(node.func) in RANDOM_SPLIT:
            positional = [a for a in node.args if not isinstance(a, ast.Starred)]
            if tree_lightning.keyword(node, "generator") is None and len(positional) < 3:
                found.append((node, scopes, looped))
        if isinstance(node, _TREE_SCOPES):
            scopes, looped = (*scopes, node), False
        elif isinstance(node, _TREE_LOOPS):
            looped = True
        pending.extend((child, inside, scopes, looped) for child in child_nodes(node))
    return found


_TREE_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_TREE_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
#: What seeds torch's global generator, by qualified name (and Lightning's ``seed_everything``).
TORCH_SEEDS = frozenset({"torch.manual_seed", "torch.random.manual_seed", "torch.set_rng_state", "torch.random.set_rng_state"})


def _tree_seeding(tree: ast.Module, ctx: RuleContext) -> str | None:
    """The first call of this file that seeds torch's global generator, as written (said when its
    seed is not a literal); None if none."""
    for node in every_node(tree):
        if isinstance(node, ast.Call) and (
                lightning_name(ctx.imports, node.func) == "seed_everything" or ctx.imports.qualify(node.func) in TORCH_SEEDS):
            text = ast.get_source_segment(ctx.view.text, node) or "seed_everything(...)"
            literal = bool(node.args) and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, int)
            return f"`{text}`, line {node.lineno}" if literal else \
                f"`{text}`, line {node.lineno}, not a literal: the fix writes 42 for it"
    return None


def _why_unsafe(ctx: RuleContext, seeding: str | None, looped: bool) -> str:
    """Every fix changes which samples the split draws (design.md: a changed split is unsafe); this
    says what the change would cost here, the worst first."""
    if looped:
        return "inside a loop: every pass would draw the same split, where it now draws a new one"
    if seeding is not None:
        return (f"this file seeds torch's generator ({seeding}): the split it draws now, the same on every rank "
                "when seeded alike, and every random draw after it would change")
    seeds = ctx.facts.seeds_for(ctx.path)
    if seeds:
        return (f"the run seeds with {sorted(seeds)[0]} (`seed_everything` in a script of this folder or above it): "
                "the split the program draws now and every random draw after it change")
    return ("the split changes: a seed set elsewhere (another file, PL_GLOBAL_SEED), or splits meant to differ from "
            "run to run, cannot be ruled out")
