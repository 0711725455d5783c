"""DDP011 spawn-without-main-guard: ``ddp_spawn`` children re-run an unguarded script."""

from __future__ import annotations

import ast
import re

import libcst as cst

from ddpfix.imports import TREE_COMPOUND, dotted_name
from ddpfix.transforms import _tree_lightning as tree_lightning
from ddpfix.transforms._args import keyword
from ddpfix.transforms._lightning import lightning_name, string_value
from ddpfix.transforms._names import statement_names
from ddpfix.transforms._text import keyword_argument, word_match
from ddpfix.transforms._tree_names import statement_names as tree_statement_names
from ddpfix.transforms.base import NeedsLibCST, Rule, RuleContext, TreeView

RUN_METHODS = frozenset({"fit", "validate", "test", "predict"})
PROCESS_SETTINGS = (
    "set_float32_matmul_precision", "set_default_dtype", "use_deterministic_algorithms", "torch.backends.",
    "set_num_threads", "set_printoptions", "set_grad_enabled", "warnings.filterwarnings", "logging.basicConfig",
    "set_sharing_strategy", "set_default_device", "set_default_tensor_type", "set_num_interop_threads",
    "set_flush_denormal", "set_anomaly_enabled",
)


_STRATEGY_KEYWORD = keyword_argument("strategy")  # what may_apply looks for, in the bytes


class SpawnWithoutMainGuard(Rule):
    """
    # DDP011 spawn-without-main-guard

    ## What it does
    Finds a script that builds a Trainer with `strategy="ddp_spawn"` (or
    `DDPStrategy(start_method="spawn")`) and calls `fit`/`validate`/`test`/`predict` at module
    level, and moves the module-level statements — from the first one that builds the Trainer or
    its inputs, to the end — into `def main():`, called under `if __name__ == "__main__":`.

    ## Why it breaks under DDP
    The spawn start method starts fresh interpreters that import the script: without the guard
    every child builds its own Trainer and calls `fit` again. Python stops that with "An attempt has
    been made to start a new process before the current process has finished its bootstrapping
    phase", and Lightning with "Launching multiple processes with the 'spawn' start method requires
    that your script guards the main function with an `if __name__ == \\"__main__\\"` clause".
    (`ddp_notebook` forks and needs no guard.)

    ## Before
    ```python
    model = Model()
    trainer = L.Trainer(devices=2, strategy="ddp_spawn")
    trainer.fit(model)
    ```

    ## After
    ```python
    def main():
        model = Model()
        trainer = L.Trainer(devices=2, strategy="ddp_spawn")
        trainer.fit(model)


    if __name__ == "__main__":
        main()
    ```

    Imports, definitions, docstrings, literal constants and process-wide settings
    (`torch.set_float32_matmul_precision`, `torch.multiprocessing.set_sharing_strategy`,
    `torch.backends.*`, ..., also inside a top-level `if`/`try`/`with`) before that stay at the top
    level, where the children still run them.

    ## When it does not fix
    When a function or class is defined after the first moved statement (children import them
    from the module's top level), when a process-wide setting comes after it (moved into `main()`,
    the children would lose it; kept at the top, it may read names that moved), when a function
    above uses a name those statements bind (it would no longer be global), when the script
    already has a main guard, or when `main` is taken.
    Notebooks are left to DDP015 `notebook-strategy`: a kernel cannot spawn at all, so the fix
    there is `strategy="ddp_notebook"`, not a guard.

    ## Fix safety
    The children no longer run what moves into `main()`, so the move is **safe** only when every
    moved statement is proven to be needed by the parent alone:
    - the spawning Trainer and its run calls (`fit`/`validate`/`test`/`predict`) on it;
    - assignments of Lightning's Trainer, `DDPStrategy`, callbacks (`ModelCheckpoint`,
      `EarlyStopping`, `LearningRateMonitor`, progress bars, model summaries) and loggers
      (`CSVLogger`, `TensorBoardLogger`), of literals, names and containers of them;
    - construction of a LightningModule/LightningDataModule of this file that keeps Lightning's own
      constructor (bases only Lightning's, no dunder method, no decorator or metaclass);
    - Lightning's `seed_everything(...)`: it sets `PL_GLOBAL_SEED`, the children inherit it, and the
      Trainer's DDP strategy reseeds each child from it (`reset_seed()` in `setup_distributed`)
      after the child's import, so every child is seeded as before.

    The process state the Trainer sets (`deterministic`, `benchmark`) is carried into the children
    by Lightning's spawn launcher, and environment variables are inherited. Anything else moved,
    an unknown call above all (`model = Model()` of another file, `setup_runtime()`, a class with
    its own `__init__`, an import, an `if`), is **unsafe**: it may set what every process needs
    (a precision, a sharing strategy, a registry filled on import), which the children would then
    lose; the finding says which statement. Every move is **unsafe** in a file that reads its
    module's names at run time — `globals()`, `vars()`, `locals()`, `eval`/`exec`, `__import__`,
    `importlib.import_module`, `sys.modules`, a frame's or function's globals, `"__main__"` or
    `import __main__` — since a name moved into `main()` is no longer global there
    (`globals()["BATCH"]` in a method raises `KeyError` in the children).
    """

    code = "DDP011"
    name = "spawn-without-main-guard"
    summary = "ddp_spawn script without if __name__ == '__main__': every spawned child re-runs it"
    fixable = True
    triggers = ("spawn", "Trainer")
    lightning_only = True

    @classmethod
    def applies_to(cls, path: str) -> bool:
        return not path.endswith(".ipynb")

    @classmethod
    def triggered_by(cls, data: bytes) -> bool:
        return cls.has_trigger_words(data) and word_match(_STRATEGY_KEYWORD, data)

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """A statement of the module's top level assigns or evaluates a call with ``strategy=``:
        ``apply`` looks for the Trainer there and nowhere else (Lightning's own modules name
        ``ddp_spawn`` and ``Trainer`` everywhere, inside functions)."""
        return any(
            isinstance(node, (ast.Assign, ast.Expr)) and isinstance(node.value, ast.Call)
            and any(k.arg == "strategy" for k in node.value.keywords)
            for node in tree.body
        )

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        body = list(module.body)
        trainer_at, trainer_names = _spawn_trainer(body, ctx)
        if trainer_at is None:
            return module
        run_at = next((i for i, s in enumerate(body) if i > trainer_at and _runs(s, trainer_names)), None)
        if run_at is None:
            return module
        start = next(i for i, s in enumerate(body) if not _preamble(s) or i == trainer_at)
        message = (
            "ddp_spawn starts fresh interpreters that import this script: without `if __name__ == \"__main__\":` "
            "each child builds its own Trainer and runs it again (\"An attempt has been made to start a new process "
            "before the current process has finished its bootstrapping phase\"); move the script into main()"
        )
        refusal = _refusal(body, start, ctx)
        if refusal:
            ctx.report(body[trainer_at], f"{message} (not rewritten: {refusal})", fixable=False)
            return module
        if not ctx.report(body[trainer_at], message, fixable=True):
            return module
        moved = body[start:]
        first_lines = moved[0].leading_lines
        moved[0] = moved[0].with_changes(leading_lines=[])
        # Two blank lines before the new top-level def, as PEP 8 has it, whatever was there.
        blank = [line for line in first_lines if line.comment is None]
        first_lines = [cst.EmptyLine()] * max(0, 2 - len(blank)) + list(first_lines)
        main = cst.FunctionDef(
            name=cst.Name("main"),
            params=cst.Parameters(),
            body=cst.IndentedBlock(body=moved),
            leading_lines=first_lines,
        )
        guard = cst.parse_statement('if __name__ == "__main__":\n    main()\n')
        guard = guard.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
        return module.with_changes(body=[*body[:start], main, guard])

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """``apply`` on CPython's tree, report-only. The module's statements are grouped into
        LibCST's statement lines first (``a; b`` is one). Raises ``NeedsLibCST`` where LibCST's
        layout decides: a process-setting word only in the comments above a statement (which
        LibCST may give to the statement or to the block before it), ``__name__`` only in an
        ``if`` header outside its test, an f-string whose literal kind is unclear."""
        body = ctx.view.statement_lines(tree.body)
        trainer_at, trainer_names = _tree_spawn_trainer(body, ctx)
        if trainer_at is None:
            return
        if not any(i > trainer_at and _tree_runs(line, trainer_names) for i, line in enumerate(body)):
            return
        start = next(i for i, line in enumerate(body) if not _tree_preamble(body, i, ctx.view) or i == trainer_at)
        message = (
            "ddp_spawn starts fresh interpreters that import this script: without `if __name__ == \"__main__\":` "
            "each child builds its own Trainer and runs it again (\"An attempt has been made to start a new process "
            "before the current process has finished its bootstrapping phase\"); move the script into main()"
        )
        refusal = _tree_refusal(body, start, ctx.view)
        where = _line_span(body[trainer_at])
        if refusal:
            ctx.report(where, f"{message} (not rewritten: {refusal})", fixable=False)
        else:
            unknown = _parent_only_unproven(body, start, trainer_names, ctx)
            ctx.report(where, message, fixable=True, safe=unknown is None, why=unknown or "")


# --- CPython's tree (``check``) ---------------------------------------------------------------
# A "line" is what LibCST's ``module.body`` holds: a compound statement alone, or the simple
# statements of one ``SimpleStatementLine`` (joined by ``;``).

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_REST_OF_LINE = re.compile(r"[^\r\n]*")


def _simple(line: list[ast.stmt]) -> bool:
    return not isinstance(line[0], TREE_COMPOUND)


def _line_span(line: list[ast.stmt]) -> ast.AST:
    """A node spanning the statement line, as LibCST's ``SimpleStatementLine`` range does: from
    its first statement to the end of its last (a trailing ``;`` left out)."""
    first, last = line[0], line[-1]
    return ast.Pass(lineno=first.lineno, col_offset=first.col_offset,
                    end_lineno=last.end_lineno, end_col_offset=last.end_col_offset)


# --- Fix safety (``check`` only) -------------------------------------------------------------
# Spawned children import the script and run its top level; what main() holds they no longer run.
# A move is safe only where every moved statement is proven to be needed by the parent alone: the
# Trainer, Lightning's callbacks and loggers, the run calls, and LightningModules/DataModules of this
# file that keep Lightning's own constructor. Their effects on process state are either none or
# ones Lightning carries into the children itself (``Trainer(deterministic=..., benchmark=...)``:
# the spawn launcher's ``_GlobalStateSnapshot`` restores them, environment variables are inherited).

#: Lightning classes whose construction changes no process state a child would need.
PARENT_ONLY_CONSTRUCTORS = frozenset({
    "Trainer", "DDPStrategy", "ModelCheckpoint", "EarlyStopping", "LearningRateMonitor", "TQDMProgressBar",
    "RichProgressBar", "ModelSummary", "RichModelSummary", "CSVLogger", "TensorBoardLogger",
})
#: Bases whose constructors are Lightning's own (a class of the file deriving only from them, with no
#: dunder method of its own, is built by Lightning's code alone).
LIGHTNING_DATA_AND_MODELS = frozenset({"LightningModule", "LightningDataModule"})


def _parent_only_unproven(body: list[list[ast.stmt]], start: int, trainers: set[str], ctx: RuleContext) -> str | None:
    """None when every statement moved into main() is proven to be needed by the parent alone;
    else why not (the first statement that is not)."""
    dynamic = _dynamic_global_access(ctx)
    if dynamic is not None:
        return (f"the file reads its module's names at run time ({dynamic}): a name that moves into main() "
                "would no longer be global, and spawned children would not find it")
    plain = _plain_lightning_classes(body, ctx)
    for line in body[start:]:
        for statement in line:
            if not _parent_only(statement, trainers, plain, ctx):
                code = ast.get_source_segment(ctx.view.text, statement) or type(statement).__name__
                code = code.splitlines()[0] + (" ..." if "\n" in code else "")
                return (f"`{code}` is not known to be needed by the parent alone: spawned children would no "
                        "longer run it (a setting or side effect they relied on would be lost)")
    return None


#: Builtins that read or run code against the module's globals by name (``vars`` with no argument).
DYNAMIC_BUILTINS = frozenset({"globals", "locals", "vars", "eval", "exec", "__import__"})
#: Attributes that reach a module's or a frame's globals.
DYNAMIC_ATTRIBUTES = frozenset({"f_globals", "__globals__"})


def _dynamic_global_access(ctx: RuleContext) -> str | None:
    """Code of the file that may read a global by a name ddpfix does not see: ``globals()``,
    ``vars()``, ``eval``/``exec``, ``__import__``, ``sys.modules``, a frame's or function's globals,
    the ``__main__`` module by name. The first found, as code; None when there is none."""
    for node in ast.walk(ctx.view.tree):
        found = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in DYNAMIC_BUILTINS:
            if node.func.id != "vars" or not node.args:
                found = node
        elif isinstance(node, ast.Attribute) and node.attr in DYNAMIC_ATTRIBUTES:
            found = node
        elif isinstance(node, (ast.Name, ast.Attribute)) and ctx.imports.qualify_all(node) & {"sys.modules", "importlib.import_module"}:
            found = node
        elif isinstance(node, ast.Constant) and node.value == "__main__":
            found = node
        elif isinstance(node, ast.alias) and node.name.split(".")[0] == "__main__":
            return "`__main__` imported"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "__main__":
            return "`__main__` imported"
        if found is not None:
            code = ast.get_source_segment(ctx.view.text, found) or type(found).__name__
            return f"`{code.splitlines()[0]}`"
    return None


def _plain_lightning_classes(body: list[list[ast.stmt]], ctx: RuleContext) -> set[str]:
    """Classes of the file's top level built by Lightning's constructor alone: every base is
    Lightning's LightningModule/LightningDataModule, no keywords (metaclass), no decorators, no
    dunder method, a body of methods, docstrings and literal constants, and the name bound once."""
    found: set[str] = set()
    for index, line in enumerate(body):
        cls = line[0]
        if not isinstance(cls, ast.ClassDef) or cls.keywords or cls.decorator_list or not cls.bases:
            continue
        if not all(lightning_name(ctx.imports, base) in LIGHTNING_DATA_AND_MODELS for base in cls.bases):
            continue
        if not all(_plain_class_statement(item, ctx.view) for item in cls.body):
            continue
        if any(cls.name in tree_statement_names(other).binds for i, other in enumerate(body) if i != index):
            continue
        found.add(cls.name)
    return found


def _plain_class_statement(item: ast.stmt, view: TreeView) -> bool:
    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return not (item.name.startswith("__") and item.name.endswith("__")) and not item.decorator_list
    if isinstance(item, ast.Pass):
        return True
    if isinstance(item, ast.Expr):
        return _tree_string(item.value, view)
    if isinstance(item, (ast.Assign, ast.AnnAssign)):
        return item.value is not None and _tree_literal(item.value, view)
    return False


def _parent_only(statement: ast.stmt, trainers: set[str], plain: set[str], ctx: RuleContext) -> bool:
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr):
        value = statement.value
        return _tree_string(value, ctx.view) or _run_call(value, trainers, plain, ctx) or _lightning_seed(value, plain, ctx)
    if isinstance(statement, (ast.Assign, ast.AnnAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if statement.value is None or not all(_plain_target(t) for t in targets):
            return False
        value = statement.value
        return _inert(value, plain, ctx) or _run_call(value, trainers, plain, ctx)
    return False


def _lightning_seed(value: ast.expr, plain: set[str], ctx: RuleContext) -> bool:
    """``seed_everything(...)`` (Lightning's), its arguments inert: it sets ``PL_GLOBAL_SEED`` (and
    ``PL_SEED_WORKERS``) in the parent, the spawned children inherit the environment, and the Trainer's
    DDP strategy calls ``reset_seed()`` in each child before anything draws (``DDPStrategy.
    setup_distributed``), after the child's import: every child ends up seeded as before."""
    return (isinstance(value, ast.Call) and lightning_name(ctx.imports, value.func) == "seed_everything"
            and _inert_arguments(value, plain, ctx))


def _plain_target(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(t, ast.Name) for t in target.elts)


def _run_call(value: ast.expr, trainers: set[str], plain: set[str], ctx: RuleContext) -> bool:
    """``trainer.fit(...)`` / ``validate`` / ``test`` / ``predict`` on the spawning Trainer, its
    arguments inert."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute) or value.func.attr not in RUN_METHODS:
        return False
    owner = value.func.value
    if not (isinstance(owner, ast.Name) and owner.id in trainers):
        return False
    return _inert_arguments(value, plain, ctx)


def _inert(value: ast.expr, plain: set[str], ctx: RuleContext) -> bool:
    """An expression whose evaluation changes no process state: literals, names, attribute reads
    of names, containers of them, and calls of the constructors above."""
    if isinstance(value, (ast.Constant, ast.Name)):
        return True
    if isinstance(value, ast.Attribute):
        return isinstance(value.value, (ast.Name, ast.Attribute)) and _inert(value.value, plain, ctx)
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return all(_inert(e, plain, ctx) for e in value.elts)
    if isinstance(value, ast.Dict):
        return all(k is not None and _inert(k, plain, ctx) for k in value.keys) and all(_inert(v, plain, ctx) for v in value.values)
    if isinstance(value, ast.UnaryOp):
        return isinstance(value.operand, ast.Constant)
    if isinstance(value, ast.BinOp):
        return isinstance(value.left, ast.Constant) and isinstance(value.right, ast.Constant)
    if isinstance(value, ast.Call):
        known = lightning_name(ctx.imports, value.func) in PARENT_ONLY_CONSTRUCTORS
        local = isinstance(value.func, ast.Name) and value.func.id in plain
        return (known or local) and _inert_arguments(value, plain, ctx)
    return False


def _inert_arguments(call: ast.Call, plain: set[str], ctx: RuleContext) -> bool:
    return all(_inert(a.value if isinstance(a, ast.Starred) else a, plain, ctx) for a in call.args) and all(
        _inert(k.value, plain, ctx) for k in call.keywords)


def _tree_spawn_trainer(body: list[list[ast.stmt]], ctx: RuleContext) -> tuple[int | None, set[str]]:
    for index, line in enumerate(body):
        if not _simple(line):
            continue
        for small in line:
            value = small.value if isinstance(small, (ast.Assign, ast.Expr)) else None
            if isinstance(value, ast.Call) and lightning_name(ctx.imports, value.func) == "Trainer" and _tree_spawns(value, ctx):
                names = {t.id for t in small.targets if isinstance(t, ast.Name)} if isinstance(small, ast.Assign) else set()
                return index, names
    return None, set()


def _tree_spawns(trainer: ast.Call, ctx: RuleContext) -> bool:
    strategy = tree_lightning.keyword(trainer, "strategy")
    if strategy is None:
        return False
    text = tree_lightning.string_value(strategy.value)
    if text is not None:
        return text.startswith("ddp_spawn")
    value = strategy.value
    if isinstance(value, ast.Call) and lightning_name(ctx.imports, value.func) == "DDPStrategy":
        method = tree_lightning.keyword(value, "start_method")
        return method is not None and tree_lightning.string_value(method.value) == "spawn"
    return False


def _tree_runs(line: list[ast.stmt], trainers: set[str]) -> bool:
    if not _simple(line):
        return False
    for small in line:
        value = small.value if isinstance(small, (ast.Assign, ast.Expr)) else None
        func = value.func if isinstance(value, ast.Call) else None
        if isinstance(func, ast.Attribute) and func.attr in RUN_METHODS:
            owner = func.value
            if (isinstance(owner, ast.Name) and owner.id in trainers) or isinstance(owner, ast.Call):
                return True
    return False


def _tree_process_setting(body: list[list[ast.stmt]], index: int, view: TreeView) -> bool:
    """``_process_setting``, which reads the statement line's code: its own lines (trailing comment
    included) and the comment lines above it that LibCST gives it: all of them after a statement
    line; after a block or at the top of the file (the module's header) that depends on LibCST's
    parse, so a word only there defers."""
    line = body[index]
    if not _simple(line):
        return _tree_compound_setting(line[0])
    positions, text = view.positions, view.text
    own_start = positions.line_start(line[0].lineno)
    own_end = _REST_OF_LINE.match(text, positions.offset(line[-1].end_lineno, line[-1].end_col_offset)).end()
    if any(word in text[own_start:own_end] for word in PROCESS_SETTINGS):
        return True
    above_start = positions.line_start(body[index - 1][-1].end_lineno + 1) if index else 0
    if not any(word in text[above_start:own_start] for word in PROCESS_SETTINGS):
        return False
    if index and _simple(body[index - 1]):
        return True  # after a statement line, the comment lines above are this line's leading lines
    raise NeedsLibCST("a process-setting word in the comments above a statement")


def _tree_compound_setting(statement: ast.stmt) -> bool:
    """``_compound_setting`` on CPython's tree: the same dotted names, comments left out."""
    if isinstance(statement, _DEFINITIONS):
        return False
    return any(
        isinstance(node, (ast.Name, ast.Attribute)) and _names_setting(dotted_name(node))
        for node in ast.walk(statement)
    )


def _names_setting(dotted: str | None) -> bool:
    return dotted is not None and any(word in dotted for word in PROCESS_SETTINGS)


def _tree_preamble(body: list[list[ast.stmt]], index: int, view: TreeView) -> bool:
    """``_preamble`` on CPython's tree."""
    line = body[index]
    if isinstance(line[0], _DEFINITIONS) or _tree_process_setting(body, index, view):
        return True
    if not _simple(line):
        return False
    for small in line:
        if isinstance(small, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(small, ast.Expr) and _tree_string(small.value, view):
            continue
        if isinstance(small, (ast.Assign, ast.AnnAssign)) and small.value is not None and _tree_literal(small.value, view):
            continue
        return False
    return True


def _tree_string(value: ast.expr, view: TreeView) -> bool:
    """LibCST's ``SimpleString`` or ``ConcatenatedString``: a str or bytes literal, or an f-string
    concatenated with other strings (``"a" f"{b}"``; a lone f-string is a ``FormattedString``)."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, (str, bytes))
    return isinstance(value, ast.JoinedStr) and tree_lightning.concatenated(view.positions.segment(value))


def _tree_literal(value: ast.expr, view: TreeView) -> bool:
    """``_literal``: a number (not imaginary), a string, ``True``/``False``/``None``."""
    if isinstance(value, ast.Constant) and not isinstance(value.value, (complex, str, bytes)):
        return value.value is not Ellipsis
    return _tree_string(value, view)


def _tree_refusal(body: list[list[ast.stmt]], start: int, view: TreeView) -> str | None:
    """``_refusal`` on CPython's tree, its reasons in the same order."""
    for line in body:
        statement = line[0]
        if isinstance(statement, ast.If) and _mentions_name_dunder(statement, view):
            return "the script already has a main guard"
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == "main":
            return "`main` is already defined"
    if any(_tree_process_setting(body, i, view) for i in range(start, len(body))):
        return "a process-wide setting comes after the script starts; spawned children would lose it inside main()"
    later = next((line[0] for line in body[start:] if isinstance(line[0], _DEFINITIONS)), None)
    if later is not None:
        return f"`{later.name}` is defined after the script starts, and children import it from the top level"
    bound = tree_statement_names([s for line in body[start:] for s in line]).binds
    if "main" in bound:
        return "`main` is already bound"
    for line in body[:start]:
        if isinstance(line[0], _DEFINITIONS):
            used = tree_statement_names(line[0].body).reads & bound
            if used:
                return f"`{line[0].name}` uses `{sorted(used)[0]}`, which would stop being global"
    if any(_simple(line) and any(isinstance(s, ast.Global) for s in line) for line in body[start:]):
        return "a `global` statement would change meaning"
    if any(_simple(line) and any(isinstance(s, ast.ImportFrom) and s.names[0].name == "*" for s in line) for line in body[start:]):
        return STAR_IMPORT
    return None


def _mentions_name_dunder(statement: ast.If, view: TreeView) -> bool:
    """``__name__`` in the ``if``'s test (LibCST's test: its parentheses and the comments in them
    included). Found only elsewhere in the header (a comment after the colon, or one inside the
    test's outer parentheses, which ``ast`` leaves out of the test) defers."""
    positions = view.positions
    if "__name__" in positions.segment(statement.test):
        return True
    first = statement.body[0]
    header = view.text[positions.offset(statement.lineno, statement.col_offset):positions.offset(first.lineno, first.col_offset)]
    if "__name__" in header:
        raise NeedsLibCST("`__name__` in an if header outside its test")
    return False


def _spawn_trainer(body, ctx: RuleContext) -> tuple[int | None, set[str]]:
    for index, statement in enumerate(body):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
            if isinstance(value, cst.Call) and lightning_name(ctx.imports, value.func) == "Trainer" and _spawns(value, ctx):
                names = {t.target.value for t in small.targets if isinstance(t.target, cst.Name)} if isinstance(small, cst.Assign) else set()
                return index, names
    return None, set()


def _spawns(trainer: cst.Call, ctx: RuleContext) -> bool:
    strategy = keyword(trainer, "strategy")
    if strategy is None:
        return False
    text = string_value(strategy.value)
    if text is not None:
        return text.startswith("ddp_spawn")
    value = strategy.value
    if isinstance(value, cst.Call) and lightning_name(ctx.imports, value.func) == "DDPStrategy":
        method = keyword(value, "start_method")
        return method is not None and string_value(method.value) == "spawn"
    return False


def _runs(statement: cst.CSTNode, trainers: set[str]) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
        func = value.func if isinstance(value, cst.Call) else None
        if isinstance(func, cst.Attribute) and func.attr.value in RUN_METHODS:
            owner = func.value
            if (isinstance(owner, cst.Name) and owner.value in trainers) or isinstance(owner, cst.Call):
                return True
    return False


def _process_setting(statement: cst.CSTNode) -> bool:
    """``torch.set_float32_matmul_precision(...)`` and kin: process state that spawned children only
    get by importing the script, so it must stay at the top level."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return _compound_setting(statement)
    code = cst.Module([]).code_for_node(statement)
    return any(word in code for word in PROCESS_SETTINGS)


def _compound_setting(statement: cst.CSTNode) -> bool:
    """A top-level ``if``/``try``/``with``/loop whose code names a process setting
    (``if torch.cuda.is_available(): torch.set_float32_matmul_precision("high")``): read from its
    dotted names, comments left out. Definitions are not settings (their bodies run when called)."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return False
    found = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.append(_names_setting(dotted_name(node)))

        def visit_Attribute(self, node: cst.Attribute) -> None:
            found.append(_names_setting(dotted_name(node)))

    statement.visit(Names())
    return any(found)


def _preamble(statement: cst.CSTNode) -> bool:
    """Imports, definitions, docstrings, literal constants and process settings: what stays at the top."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or _process_setting(statement):
        return True
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            continue
        if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
            continue
        if isinstance(small, (cst.Assign, cst.AnnAssign)) and _literal(small.value):
            continue
        return False
    return True


def _literal(value) -> bool:
    return isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)) or (
        isinstance(value, cst.Name) and value.value in ("True", "False", "None")
    )


def _refusal(body, start: int, ctx: RuleContext) -> str | None:
    for statement in body:
        if isinstance(statement, cst.If) and "__name__" in cst.Module([]).code_for_node(statement.test):
            return "the script already has a main guard"
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "main":
            return "`main` is already defined"
    setting = next((s for s in body[start:] if _process_setting(s)), None)
    if setting is not None:
        return "a process-wide setting comes after the script starts; spawned children would lose it inside main()"
    later = next((s for s in body[start:] if isinstance(s, (cst.FunctionDef, cst.ClassDef))), None)
    if later is not None:
        return f"`{later.name.value}` is defined after the script starts, and children import it from the top level"
    bound = set().union(*(statement_names(s).binds for s in body[start:]))
    if "main" in bound:
        return "`main` is already bound"
    for statement in body[:start]:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            used = statement_names(statement.body).reads & bound
            if used:
                return f"`{statement.name.value}` uses `{sorted(used)[0]}`, which would stop being global"
    if any(isinstance(s, cst.SimpleStatementLine) and any(isinstance(x, cst.Global) for x in s.body) for s in body[start:]):
        return "a `global` statement would change meaning"
    if any(isinstance(s, cst.SimpleStatementLine) and any(isinstance(x, cst.ImportFrom) and isinstance(x.names, cst.ImportStar) for x in s.body)
           for s in body[start:]):
        return STAR_IMPORT
    return None


# ``from m import *`` is only allowed at a module's top level: inside main() it does not compile.
STAR_IMPORT = "`from ... import *` cannot move into main()"
