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

    Under a Lightning pinned before 1.7, `"ddp_spawn"` is the notebook's strategy (interactive
    runs spawn there) and is left alone; `"ddp"` is reported, to be replaced by `"ddp_spawn"`.

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
      with keyword arguments only, in a cell's top-level code (in a `for` loop too), with a Lightning
      in force that has the twin (`ddp_notebook` since 1.7, its `_find_unused_parameters_false`
      twin by 1.8.6, `_true` since 2.0; `DDPStrategy(start_method=...)` since 1.9): **safe**. The
      original can only stop with Lightning's refusal; the fix changes nothing else. Pinned before
      the twin, there is no fix. A version not found, or a range reaching below the twin: still
      **safe** for the script launcher (`"ddp"`, a `DDPStrategy`), which every version refuses in a
      kernel (where the twin is missing, the rewrite fails too); **unsafe** for `"ddp_spawn"`,
      which ran in a kernel before 1.7 (the notebook's strategy then).
    - The same under an `if` (a `while`, a `match`) whose test may tell a kernel from a script
      (anything but literals, the main guard `__name__ == "__main__"` and names the notebook binds
      once to a literal, `TRAIN = True`): **unsafe**. The branch may be the one for runs outside a kernel (the notebook exported by `nbconvert --to
      script` and started by torchrun, `if IN_JUPYTER: ... else: Trainer(strategy="ddp")`), where
      the strategy is right as it is.
    - The same inside a function, lambda or class body: **unsafe**. The function may run in a
      process of its own (spawned by the notebook, where Lightning does not refuse) or under a
      caller's `except`.
    - The same inside `try` or `with`: **unsafe**. An `except` (or a context manager) may handle the
      refusal, and that path would no longer run.
    - `Fabric(strategy=...)` and a `DDPStrategy` given to Fabric: **unsafe**. Fabric's notebook
      strategy runs only through `fabric.launch(function)`; `fabric.launch()` without one then fails.
    - `DDPStrategy(...)` with positional arguments: **unsafe** (`start_method` may be among them).
    - A notebook the program may also run as a script: **unsafe**. A `.py` twin beside it, a jupytext
      pairing, or a file that exports notebooks to scripts (`nbconvert --to script`, `jupytext --to
      py`) in a Makefile, a shell script or a CI workflow: run by torchrun, `"ddp"` is right there,
      and `"ddp_notebook"` forks again in every process (review helper-44 c21, helper-45 c06).
    """

    code = "DDP015"
    name = "notebook-strategy"
    summary = "strategy='ddp'/'ddp_spawn' in a notebook: Lightning refuses it; use 'ddp_notebook'"
    fixable = True
    triggers = (("ddp", "DDP"), ("Trainer", "Fabric", "DDPStrategy"))
    lightning_only = True
    uses_facts = True  # whether the program also runs the notebook as a script

    @classmethod
    def applies_to(cls, path: str) -> bool:
        return path.endswith(NOTEBOOK_SUFFIX)

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """The one analysis: findings, each fix's applicability and its typed edits (the strategy
        string replaced by its twin in the same quotes, or ``start_method="fork"`` set), which the
        engine carries out on LibCST's tree. A strategy argument with a comment inside is not
        rewritten (the replaced string would lose it)."""
        from ddpfix.model.versions import imported_package, version_in_force

        string_strategies, ddp_strategies = _tree_strategy_calls(tree, ctx)
        parents = {id(child): node for node in every_node(tree) for child in child_nodes(node)}
        version = version_in_force(ctx.path, imported_package(ctx.data)) if string_strategies or ddp_strategies else None
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
            lacking, missing = _written_feature(version, f"strategy={twin!r}")
            spawned = name.startswith("ddp_spawn")
            if missing and _written_feature(version, "strategy='ddp_notebook'")[1]:
                # Before 1.7 spawning was the notebook's way (``ddp_spawn`` is interactive-compatible
                # there) and ``ddp_notebook`` an unknown name: only the script launcher is refused.
                if owner == "Trainer" and not spawned:
                    ctx.report(arg, f"{owner}(strategy={clip(repr(name))}) in a notebook: use 'ddp_spawn'",
                               detail=f"{message}; use 'ddp_spawn', the notebook's strategy before Lightning 1.7 "
                               f"(not rewritten: {lacking})", fixable=False)
                continue
            if missing:
                ctx.report(arg, short, detail=f"{message}; use {twin!r} (not rewritten: {lacking})", fixable=False)
                continue
            # The script launcher (``ddp``) is refused in a kernel by every version: where some allowed
            # version lacks the twin, the rewrite fails there too, and runs where it exists. A spawning
            # strategy ran in a kernel before 1.7: there the rewrite would break a working notebook.
            unsafe = (lacking if spawned else None) or _unproven(arg, owner, parents, tree) or _run_as_script(ctx, repr(name))
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
            lacking, missing = _written_feature(version, "DDPStrategy(start_method=...)")
            if missing:
                ctx.report(call, short, detail=f"{message}; pass start_method=\"fork\" (not rewritten: {lacking})",
                           fixable=False)
                continue
            # (the strategy's own launcher is refused in a kernel by every version: where ``start_method``
            # is missing, the rewrite fails there too)
            unsafe = "DDPStrategy's arguments are positional: `start_method` may be among them" if call.args else None
            unsafe = unsafe or _unproven(call, owner, parents, tree) or _run_as_script(ctx, "a DDPStrategy")
            ctx.report(call, short, detail=message + "; start_method=\"fork\" added", fixable=True, safe=unsafe is None,
                       why=unsafe or "",
                       edits=[edits.SetKeyword(Span.of(ctx.position(call)), "start_method", '"fork"')])


# --- Fix safety (``check`` only) -------------------------------------------------------------


def _run_as_script(ctx: RuleContext, strategy: str) -> str | None:
    """Why the notebook may also run as a script (``ProjectFacts.notebook_run_as_script``), where the
    strategy it names is right and the fork would run again in each process torchrun starts."""
    where = ctx.facts.notebook_run_as_script(ctx.path)
    if where is None:
        return None
    return (f"the notebook may also run as a script ({where}): there {strategy!s} is right, and a notebook "
            "strategy would fork again in every process the launcher starts")
# In a Jupyter kernel (IPython sets ``sys.ps1``, so Lightning's ``_IS_INTERACTIVE`` holds, also under
# nbconvert/papermill) ``Trainer(strategy="ddp"/"ddp_spawn"/...)`` raises in its constructor, before
# anything else runs: the accelerator connector refuses every launcher but ``fork``. The twin is the
# same ``DDPStrategy`` (same ``find_unused_parameters``) with ``start_method="fork"``. So where that
# refusal is certain to end the program, the fix changes nothing but the failure. It is not certain:
# - in a function, lambda or class body: the code may run in a process of its own (spawned by the
#   user, where Lightning does not refuse) or under a caller's ``except``;
# - inside ``try`` or ``with``: an ``except`` or a context manager may handle the refusal;
# - under an ``if`` (a ``while``, a ``match``): the branch may be the one for runs outside a kernel;
# - for ``Fabric``: its notebook strategy runs only through ``fabric.launch(function)``; a notebook
#   that calls ``fabric.launch()`` without one fails there instead.

_HANDLERS = (ast.Try, ast.With, ast.AsyncWith, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# A branch a test chooses (``if IN_JUPYTER: ... else: Trainer(strategy="ddp")``): the notebook may
# run outside a kernel too, exported by ``nbconvert --to script`` and started by torchrun, and the
# branch written for that (review round 15, proven: the rewrite failed under torchrun).
_BRANCHES = (ast.If, ast.IfExp, ast.While, ast.Match)


def _written_feature(version, feature: str) -> tuple[str | None, bool]:
    """Whether the Lightning in force has what the fix writes (``model.versions.FEATURES``: the twin
    strategy's name, ``DDPStrategy``'s ``start_method``): (why not proven, or None; whether no allowed
    version has it). Before 1.7 ``ddp_spawn`` was the notebook's strategy and ``ddp_notebook`` an
    unknown name (review round 15)."""
    from ddpfix.model.versions import FEATURES, feature_problem

    if feature not in FEATURES:
        return None, False
    return feature_problem(version, feature), version is not None and version.has(feature) is False


def _unproven(node: ast.AST, owner: str | None, parents: dict[int, ast.AST], tree: ast.Module) -> str | None:
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
        if isinstance(parent, _BRANCHES) and not _same_in_a_script(parent, tree):
            return (f"under the `{type(parent).__name__.lower()}` at line {parent.lineno}: the branch may be the one "
                    "for runs outside a kernel (the notebook exported as a script, under torchrun), where the "
                    "strategy is right as it is")
        parent = parents.get(id(parent))
    return None


def _same_in_a_script(node: ast.AST, tree: ast.Module) -> bool:
    """The branch's test has the same value in a kernel and in the notebook exported as a script:
    made of literals, the main guard (``__name__ == "__main__"``, true in both) and names the
    notebook binds only to literals at its top level (``TRAIN = True``), joined by ``and``/``or``/
    ``not`` and comparisons. Anything else (``hasattr(sys, "ps1")``, ``IN_JUPYTER``, an environment
    variable torchrun sets) may tell them apart."""
    test = getattr(node, "test", None)
    if test is None:
        return False  # a ``match``
    flags = _literal_flags(tree)
    for part in ast.walk(test):
        if isinstance(part, ast.Name):
            if part.id != "__name__" and part.id not in flags:
                return False
        elif not isinstance(part, (ast.BoolOp, ast.UnaryOp, ast.Compare, ast.Constant, ast.boolop, ast.unaryop,
                                   ast.cmpop, ast.Load)):
            return False
    return True


def _literal_flags(tree: ast.Module) -> set[str]:
    """Names bound once in the whole notebook, by a top-level ``NAME = <literal>``."""
    stores: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                stores[name] = stores.get(name, 0) + 2
    return {statement.targets[0].id for statement in tree.body
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Constant)
            and stores.get(statement.targets[0].id) == 1}


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
