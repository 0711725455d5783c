"""DDP015 notebook-strategy: in a notebook, DDP must fork; ``ddp``/``ddp_spawn`` are refused there."""

from __future__ import annotations

import ast
import io
import tokenize

from ddpfix.ast_walk import child_nodes
from ddpfix import edits
from ddpfix.edits import Span
from ddpfix.lazy_regex import lazy_compile
from ddpfix.analysis.ast_shapes import every_node
from ddpfix.analysis import lightning as tree_lightning
from ddpfix.analysis.lightning import lightning_name
from ddpfix.rules.base import Rule, RuleContext, clip

NOTEBOOK_SUFFIX = ".ipynb"
# The launcher-only twins of each DDP strategy name: same DDP, started by fork. The Trainer registers
# every one of these; Fabric only the plain ``ddp_notebook``.
TRAINER_NOTEBOOK_STRATEGY = {
    "ddp": "ddp_notebook",
    "ddp_spawn": "ddp_notebook",
    "ddp_find_unused_parameters_false": "ddp_notebook_find_unused_parameters_false",
    "ddp_find_unused_parameters_true": "ddp_notebook_find_unused_parameters_true",
    "ddp_spawn_find_unused_parameters_false": "ddp_notebook_find_unused_parameters_false",
    "ddp_spawn_find_unused_parameters_true": "ddp_notebook_find_unused_parameters_true",
}
FABRIC_NOTEBOOK_STRATEGY = {"ddp": "ddp_notebook", "ddp_spawn": "ddp_notebook"}
FORKING = frozenset({"fork"})


class NotebookStrategy(Rule):
    """
    # DDP015 notebook-strategy

    ## What it does
    In a Jupyter notebook (`*.ipynb`), rewrites `Trainer(strategy="ddp")` and
    `Trainer(strategy="ddp_spawn")` (and their `_find_unused_parameters_*` variants) to the notebook
    twin, `"ddp_notebook"`; the same for `Fabric(strategy=...)`. A `DDPStrategy(...)` /
    `DDPStrategy(start_method="spawn")` passed as the strategy gets `start_method="fork"`.

    ## Why it breaks under DDP
    `"ddp"` starts one new Python process per device by re-running the script, and `"ddp_spawn"`
    pickles the objects into spawned processes; a notebook has no script to re-run and its classes
    cannot be pickled by reference. Lightning checks this up front and stops with
    "`Trainer(strategy='ddp')` is not compatible with an interactive environment. Run your code as a
    script, or choose a notebook-compatible strategy: `Trainer(strategy='ddp_notebook')`".
    `"ddp_notebook"` is the same DDP, started by forking the kernel.

    ## Before
    ```python
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp")
    ```

    ## After
    ```python
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp_notebook")
    ```

    ## When it does not fix
    Only notebooks are touched: the same line in a `.py` script is right as it is. A strategy held
    in a variable or built elsewhere is not followed. `Fabric(strategy="ddp_find_unused_parameters_true")`
    is reported without a fix: Fabric has no notebook twin of it. Neither is a `DDPStrategy(...)`
    whose `start_method` is not a literal, or with `*args`/`**kwargs`.

    ## Fix safety
    In a Jupyter kernel (IPython sets `sys.ps1`, so Lightning sees an interactive environment, also
    under nbconvert or papermill) the Trainer's constructor raises for every launcher but `fork`,
    before anything else runs. The twin is the same `DDPStrategy` (same `find_unused_parameters`)
    started by forking the kernel. So:
    - `Trainer(strategy="ddp"/"ddp_spawn"/...)` with a literal name, and `Trainer(strategy=DDPStrategy(...))`
      with keyword arguments only, in a cell's top-level code (in a loop or an `if` too): **safe**.
      The original can only stop with Lightning's refusal; the fix changes nothing else.
    - The same inside a function, lambda or class body: **unsafe**. The function may run in a
      process of its own (spawned by the notebook, where Lightning does not refuse) or under a
      caller's `except`.
    - The same inside `try` or `with`: **unsafe**. An `except` (or a context manager) may handle the
      refusal, and that path would no longer run.
    - `Fabric(strategy=...)` and a `DDPStrategy` given to Fabric: **unsafe**. Fabric's notebook
      strategy runs only through `fabric.launch(function)`; `fabric.launch()` without one then fails.
    - `DDPStrategy(...)` with positional arguments: **unsafe** (`start_method` may be among them).
    """

    code = "DDP015"
    name = "notebook-strategy"
    summary = "strategy='ddp'/'ddp_spawn' in a notebook: Lightning refuses it; use 'ddp_notebook'"
    fixable = True
    triggers = (("ddp", "DDP"), ("Trainer", "Fabric", "DDPStrategy"))
    lightning_only = True

    @classmethod
    def applies_to(cls, path: str) -> bool:
        return path.endswith(NOTEBOOK_SUFFIX)

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """The one analysis: findings, each fix's applicability and its typed edits (the strategy
        string replaced by its twin in the same quotes, or ``start_method="fork"`` set), which the
        engine carries out on LibCST's tree. A strategy argument with a comment inside is not
        rewritten (the replaced string would lose it)."""
        string_strategies, ddp_strategies = _tree_strategy_calls(tree, ctx)
        parents = {id(child): node for node in every_node(tree) for child in child_nodes(node)}
        for arg, owner in string_strategies:
            name = tree_lightning.string_value(arg.value)
            twins = TRAINER_NOTEBOOK_STRATEGY if owner == "Trainer" else FABRIC_NOTEBOOK_STRATEGY
            message = (f"{owner}(strategy={name!r}) in a notebook: Lightning refuses it in an interactive "
                       "environment ('not compatible with an interactive environment')")
            twin = twins.get(name)
            short = f"{owner}(strategy={clip(repr(name))}) in a notebook: use {twin or 'ddp_notebook'!r}"
            if twin is None:
                ctx.report(arg, short, detail=f"{message}; {owner} has no notebook twin of it: use 'ddp_notebook'",
                           fixable=False)
                continue
            if tree_lightning.has_comment(arg.value, ctx.view):
                ctx.report(arg, short, detail=f"{message}; use {twin!r} (not rewritten: a comment inside the call "
                           "would be lost)", fixable=False)
                continue
            unsafe = _unproven(arg, owner, parents)
            edit = edits.ReplaceExpression(Span.of(ctx.position(arg.value)), _in_same_quotes(ctx.view.positions.segment(arg.value), twin))
            ctx.report(arg, short, detail=f"{message}; use {twin!r}", fixable=True, safe=unsafe is None, why=unsafe or "",
                       edits=[edit])
        for call in ddp_strategies:
            start = tree_lightning.keyword(call, "start_method")
            if start is not None and tree_lightning.string_value(start.value) in FORKING:
                continue
            message = "DDPStrategy in a notebook must fork: 'popen' and 'spawn' are refused in an interactive environment"
            short = "DDPStrategy in a notebook needs start_method=\"fork\""
            if start is not None and tree_lightning.string_value(start.value) is None or tree_lightning.has_star(call):
                ctx.report(call, short, detail=message + "; pass start_method=\"fork\"", fixable=False)
                continue
            owner = lightning_name(ctx.imports, parents[id(parents[id(call)])].func)
            unsafe = "DDPStrategy's arguments are positional: `start_method` may be among them" if call.args else None
            unsafe = unsafe or _unproven(call, owner, parents)
            ctx.report(call, short, detail=message + "; start_method=\"fork\" added", fixable=True, safe=unsafe is None,
                       why=unsafe or "",
                       edits=[edits.SetKeyword(Span.of(ctx.position(call)), "start_method", '"fork"')])


# --- Fix safety (``check`` only) -------------------------------------------------------------
# In a Jupyter kernel (IPython sets ``sys.ps1``, so Lightning's ``_IS_INTERACTIVE`` holds, also under
# nbconvert/papermill) ``Trainer(strategy="ddp"/"ddp_spawn"/...)`` raises in its constructor, before
# anything else runs: the accelerator connector refuses every launcher but ``fork``. The twin is the
# same ``DDPStrategy`` (same ``find_unused_parameters``) with ``start_method="fork"``. So where that
# refusal is certain to end the program, the fix changes nothing but the failure. It is not certain:
# - in a function, lambda or class body: the code may run in a process of its own (spawned by the
#   user, where Lightning does not refuse) or under a caller's ``except``;
# - inside ``try`` or ``with``: an ``except`` or a context manager may handle the refusal;
# - for ``Fabric``: its notebook strategy runs only through ``fabric.launch(function)``; a notebook
#   that calls ``fabric.launch()`` without one fails there instead.

_HANDLERS = (ast.Try, ast.With, ast.AsyncWith, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _unproven(node: ast.AST, owner: str | None, parents: dict[int, ast.AST]) -> str | None:
    """None when Lightning's refusal of the original strategy is certain to end the notebook here;
    else why it is not."""
    if owner != "Trainer":
        return "Fabric's `ddp_notebook` runs only through `fabric.launch(function)`: not checked that this notebook launches so"
    parent = parents.get(id(node))
    while parent is not None:
        if isinstance(parent, _SCOPES):
            return ("inside a function or class: it may run in a process of its own, where Lightning does not "
                    "refuse the strategy, or under a caller's `except`")
        if isinstance(parent, _HANDLERS):
            return "inside `try`/`with`: Lightning's refusal may be handled, and the handler's path would change"
        parent = parents.get(id(parent))
    return None


def _tree_strategy_calls(tree: ast.Module, ctx: RuleContext) -> tuple[list[tuple[ast.keyword, str]], list[ast.Call]]:
    """``_StrategyCalls`` on CPython's tree: the ``strategy=`` keywords naming a DDP strategy that
    has notebook twins (with ``Trainer``/``Fabric``), and the ``DDPStrategy(...)`` calls passed as one."""
    string_strategies: list[tuple[ast.keyword, str]] = []
    ddp_strategies: list[ast.Call] = []
    for node in every_node(tree):
        if not isinstance(node, ast.Call):
            continue
        owner = lightning_name(ctx.imports, node.func)
        if owner not in ("Trainer", "Fabric"):
            continue
        strategy = tree_lightning.keyword(node, "strategy")
        if strategy is None:
            continue
        name = tree_lightning.string_value(strategy.value)
        if name is not None:
            if name in TRAINER_NOTEBOOK_STRATEGY:
                string_strategies.append((strategy, owner))
        elif isinstance(strategy.value, ast.Call) and lightning_name(ctx.imports, strategy.value.func) == "DDPStrategy":
            ddp_strategies.append(strategy.value)
    return string_strategies, ddp_strategies


_STRING_PREFIX = lazy_compile(r"[A-Za-z]*")


def _in_same_quotes(source: str, text: str) -> str:
    """``text`` as a string literal written as ``source`` is (its prefix, less ``f``, and its quotes);
    an implicit concatenation becomes one double-quoted string."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.STRING]
    except (tokenize.TokenError, SyntaxError):
        tokens = []
    if len(tokens) != 1 or tokens[0].string != source.strip():
        return f'"{text}"'
    literal = tokens[0].string
    prefix = _STRING_PREFIX.match(literal).group()
    quote = literal[len(prefix):len(prefix) + 3] if literal[len(prefix):len(prefix) + 3] in ('"""', "'''") else literal[len(prefix)]
    return f"{prefix.replace('f', '').replace('F', '')}{quote}{text}{quote}"
