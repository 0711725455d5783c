"""DDP011 spawn-without-main-guard: ``ddp_spawn`` children re-run an unguarded script."""

from __future__ import annotations

import ast
import io
import tokenize

from ddpfix.ast_walk import walk
from ddpfix import edits
from ddpfix.imports import TREE_COMPOUND, dotted_name
from ddpfix.lazy_regex import lazy_compile
from ddpfix.analysis.ast_shapes import every_node
from ddpfix.analysis import lightning as tree_lightning
from ddpfix.analysis.lightning import lightning_name
from ddpfix.analysis.text import keyword_argument, word_match
from ddpfix.analysis.names import statement_names
from ddpfix.rules.base import Rule, RuleContext, TreeView

RUN_METHODS = frozenset({"fit", "validate", "test", "predict"})
PROCESS_SETTINGS = (
    "set_float32_matmul_precision", "set_default_dtype", "use_deterministic_algorithms", "torch.backends.",
    "set_num_threads", "set_printoptions", "set_grad_enabled", "warnings.filterwarnings", "logging.basicConfig",
    "set_sharing_strategy", "set_default_device", "set_default_tensor_type", "set_num_interop_threads",
    "set_flush_denormal", "set_anomaly_enabled",
)


_STRATEGY_KEYWORD = keyword_argument("strategy")  # what may_apply looks for, in the bytes

SHORT = "ddp_spawn Trainer runs without an `if __name__ == \"__main__\":` guard"
MESSAGE = (
    "ddp_spawn starts fresh interpreters that import this script: without `if __name__ == \"__main__\":` "
    "each child builds its own Trainer and runs it again (\"An attempt has been made to start a new process "
    "before the current process has finished its bootstrapping phase\"); move the script into main()"
)


class SpawnWithoutMainGuard(Rule):
    """
    # DDP011 spawn-without-main-guard

    ## What it does
    Finds a script that builds a Trainer with `strategy="ddp_spawn"` (or
    `DDPStrategy(start_method="spawn")`, also through a name the module assigns once at its top
    level: `strategy = DDPStrategy(start_method="spawn")`) and calls `fit`/`validate`/`test`/`predict` at module
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
    (`globals()["BATCH"]` in a method raises `KeyError` in the children). So is a move in a script
    another file imports (statically, or by a name made at run time: a sweep's
    `importlib.import_module(name)`): importing it runs the training, which `main()` would no
    longer run there (review helper-45, c15).
    """

    code = "DDP011"
    name = "spawn-without-main-guard"
    summary = "ddp_spawn script without if __name__ == '__main__': every spawned child re-runs it"
    fixable = True
    triggers = ("spawn", "Trainer")
    lightning_only = True
    uses_facts = True  # whether another file imports the script

    @classmethod
    def applies_to(cls, path: str) -> bool:
        return not path.endswith(".ipynb")

    @classmethod
    def triggered_by(cls, data: bytes) -> bool:
        return cls.has_trigger_words(data) and word_match(_STRATEGY_KEYWORD, data)

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """A statement of the module's top level assigns or evaluates a call with ``strategy=``:
        ``check`` looks for the Trainer there and nowhere else (Lightning's own modules name
        ``ddp_spawn`` and ``Trainer`` everywhere, inside functions)."""
        return any(
            isinstance(node, (ast.Assign, ast.Expr)) and isinstance(node.value, ast.Call)
            and any(k.arg == "strategy" for k in node.value.keywords)
            for node in tree.body
        )

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """The one analysis: the finding, whether the move is safe, and the fix as one typed edit
        (the module's statements from the first that starts the script to the end moved into
        ``main()``, the guard appended). The statements are grouped into LibCST's statement lines
        first (``a; b`` is one), so the edit's indices are positions in LibCST's ``Module.body``."""
        body = ctx.view.statement_lines(tree.body)
        trainer_at, trainer_names = _spawn_trainer(body, ctx)
        if trainer_at is None:
            return
        if not any(i > trainer_at and _runs(line, trainer_names) for i, line in enumerate(body)):
            return
        start = next(i for i, line in enumerate(body) if not _preamble(body, i, ctx.view) or i == trainer_at)
        refusal = _refusal(body, start, ctx.view)
        where = _line_span(body[trainer_at])
        if refusal:
            ctx.report(where, SHORT, detail=f"{MESSAGE} (not rewritten: {refusal})", fixable=False)
            return
        unknown = _parent_only_unproven(body, start, trainer_names, ctx) or _imported(ctx)
        into_main = edits.WrapInGuardedFunction(tuple(range(start, len(body))), "main")
        ctx.report(where, SHORT, detail=MESSAGE, fixable=True, safe=unknown is None, why=unknown or "", edits=[into_main])


# --- The script, on CPython's tree --------------------------------------------------------------
# A "line" is what LibCST's ``module.body`` holds (the fix's edit counts them so): a compound
# statement alone, or the simple statements of one ``SimpleStatementLine`` (joined by ``;``).

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_REST_OF_LINE = lazy_compile(r"[^\r\n]*")
#: One line of text with its line break, as LibCST splits the source.
_LINE = lazy_compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")
#: What may stand between an ``if`` test's end and its colon: closing parentheses, layout, comments.
_CLOSING_PARENTHESES = lazy_compile(r"(?:[\s)\\]|#[^\r\n]*)*")


def _simple(line: list[ast.stmt]) -> bool:
    return not isinstance(line[0], TREE_COMPOUND)


def _line_span(line: list[ast.stmt]) -> ast.AST:
    """A node spanning the statement line, as LibCST's ``SimpleStatementLine`` range does: from
    its first statement to the end of its last (a trailing ``;`` left out)."""
    first, last = line[0], line[-1]
    return ast.Pass(lineno=first.lineno, col_offset=first.col_offset,
                    end_lineno=last.end_lineno, end_col_offset=last.end_col_offset)


# --- Fix safety (``check`` only) -------------------------------------------------------------


def _imported(ctx: RuleContext) -> str | None:
    """Why the file may not only run as a script: another file imports it (or may load it by a
    name made at run time), and then its top level, the run, is what importing it does."""
    where = ctx.facts.imported_elsewhere(ctx.path)
    if where is None:
        return None
    return (f"{where} may import this module: importing it runs its top level, the run itself, which a "
            "`main()` would no longer run there")
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
                return (f"`{code}` (line {statement.lineno}) is not known to be needed by the parent alone: spawned children would no "
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
    for node in every_node(ctx.view.tree):
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
        if any(cls.name in statement_names(other).binds for i, other in enumerate(body) if i != index):
            continue
        found.add(cls.name)
    return found


def _plain_class_statement(item: ast.stmt, view: TreeView) -> bool:
    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return not (item.name.startswith("__") and item.name.endswith("__")) and not item.decorator_list
    if isinstance(item, ast.Pass):
        return True
    if isinstance(item, ast.Expr):
        return _string(item.value, view)
    if isinstance(item, (ast.Assign, ast.AnnAssign)):
        return item.value is not None and _literal(item.value, view)
    return False


def _parent_only(statement: ast.stmt, trainers: set[str], plain: set[str], ctx: RuleContext) -> bool:
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr):
        value = statement.value
        return _string(value, ctx.view) or _run_call(value, trainers, plain, ctx) or _lightning_seed(value, plain, ctx)
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


def _spawn_trainer(body: list[list[ast.stmt]], ctx: RuleContext) -> tuple[int | None, set[str]]:
    for index, line in enumerate(body):
        if not _simple(line):
            continue
        for small in line:
            value = small.value if isinstance(small, (ast.Assign, ast.Expr)) else None
            if isinstance(value, ast.Call) and lightning_name(ctx.imports, value.func) == "Trainer" and _spawns(value, ctx):
                names = {t.id for t in small.targets if isinstance(t, ast.Name)} if isinstance(small, ast.Assign) else set()
                return index, names
    return None, set()


def _spawns(trainer: ast.Call, ctx: RuleContext) -> bool:
    strategy = tree_lightning.keyword(trainer, "strategy")
    if strategy is None:
        return False
    value = _module_value(strategy.value, ctx.view.tree)
    text = tree_lightning.string_value(value)
    if text is not None:
        return text.startswith("ddp_spawn")
    if isinstance(value, ast.Call) and lightning_name(ctx.imports, value.func) == "DDPStrategy":
        method = tree_lightning.keyword(value, "start_method")
        return method is not None and tree_lightning.string_value(method.value) == "spawn"
    return False


def _module_value(value: ast.expr, tree: ast.Module) -> ast.expr:
    """``value``, or for a name the module binds exactly once, by a plain assignment at its top
    level (``strategy = DDPStrategy(start_method="spawn")``), the value assigned: a name bound
    anywhere else too (another assignment, a loop, an import, a function's ``global``) stays a name."""
    if not isinstance(value, ast.Name):
        return value
    assigned = [s.value for s in tree.body if isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name) and s.targets[0].id == value.id]
    bindings = [n for n in every_node(tree) if isinstance(n, ast.Name) and n.id == value.id
                and isinstance(n.ctx, (ast.Store, ast.Del))]
    rebound = any(isinstance(n, (ast.Global, ast.Nonlocal)) and value.id in n.names
                  or isinstance(n, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name.split(".")[0]) == value.id for a in n.names)
                  or isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == value.id
                  for n in every_node(tree))
    return assigned[0] if len(assigned) == 1 and len(bindings) == 1 and not rebound else value


def _runs(line: list[ast.stmt], trainers: set[str]) -> bool:
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


def _process_setting(body: list[list[ast.stmt]], index: int, view: TreeView) -> bool:
    """``torch.set_float32_matmul_precision(...)`` and kin: process state that spawned children only
    get by importing the script, so it must stay at the top level. A statement line is read as the
    code the fix moves with it: its own lines (trailing comment included) and the comment lines
    above it that are its own (``_leading_lines``)."""
    line = body[index]
    if not _simple(line):
        return _compound_setting(line[0])
    positions, text = view.positions, view.text
    own_start = positions.line_start(line[0].lineno)
    own_end = _REST_OF_LINE.match(text, positions.offset(line[-1].end_lineno, line[-1].end_col_offset)).end()
    if any(word in text[own_start:own_end] for word in PROCESS_SETTINGS):
        return True
    if index == 0:
        return False  # the lines above the first statement are the module's header
    previous = body[index - 1]
    gap = text[positions.line_start(previous[-1].end_lineno + 1):own_start]
    if not any(word in gap for word in PROCESS_SETTINGS):
        return False  # the common case, decided without asking whose lines they are
    return any(word in _leading_lines(previous, gap, view) for word in PROCESS_SETTINGS)


def _leading_lines(previous: list[ast.stmt], gap: str, view: TreeView) -> str:
    """Of the blank and comment lines ``gap`` between the statement line ``previous`` and the next
    one, those that are the next one's own (its ``leading_lines`` in LibCST, which move with it):
    after a statement line, all of them; after a compound statement, those after the last one that
    starts with the indentation of its last block (an indented block keeps those as its footer,
    LibCST's ``IndentedBlock.footer``; a block on its clause's line keeps none)."""
    indent = None if _simple(previous) else _last_block_indent(previous[0], view)
    if indent is None:
        return gap
    lines = _LINE.findall(gap)
    footer = max((i + 1 for i, line in enumerate(lines) if line.startswith(indent)), default=0)
    return "".join(lines[footer:])


def _last_block_indent(statement: ast.stmt, view: TreeView) -> str | None:
    """The indentation of the last block of a top-level compound statement (``else:``'s, the last
    ``except``'s, a nested statement's outer block), when that block is indented; None when it
    stands on its clause's line (``else: y``, or after a line continuation), where the tokenizer
    opens no block. Read from the tokens: the last INDENT one level deep, if the statement's last
    logical line is inside it."""
    positions, text = view.positions, view.text
    source = text[positions.line_start(statement.lineno):
                  _REST_OF_LINE.match(text, positions.offset(statement.end_lineno, statement.end_col_offset)).end()]
    depth, indent, last_line_depth = 0, None, 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.INDENT:
                depth += 1
                if depth == 1:
                    indent = token.string
            elif token.type == tokenize.DEDENT:
                depth -= 1
            elif token.type == tokenize.NEWLINE:
                last_line_depth = depth
    except (tokenize.TokenError, SyntaxError):
        return None  # not expected (CPython compiled the statement): then every line counts as above
    return indent if last_line_depth else None


def _compound_setting(statement: ast.stmt) -> bool:
    """A top-level ``if``/``try``/``with``/loop whose code names a process setting
    (``if torch.cuda.is_available(): torch.set_float32_matmul_precision("high")``): read from its
    dotted names, comments left out. Definitions are not settings (their bodies run when called)."""
    if isinstance(statement, _DEFINITIONS):
        return False
    return any(
        isinstance(node, (ast.Name, ast.Attribute)) and _names_setting(dotted_name(node))
        for node in walk(statement)
    )


def _names_setting(dotted: str | None) -> bool:
    return dotted is not None and any(word in dotted for word in PROCESS_SETTINGS)


def _preamble(body: list[list[ast.stmt]], index: int, view: TreeView) -> bool:
    """Imports, definitions, docstrings, literal constants and process settings: what stays at the top."""
    line = body[index]
    if isinstance(line[0], _DEFINITIONS) or _process_setting(body, index, view):
        return True
    if not _simple(line):
        return False
    for small in line:
        if isinstance(small, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(small, ast.Expr) and _string(small.value, view):
            continue
        if isinstance(small, (ast.Assign, ast.AnnAssign)) and small.value is not None and _literal(small.value, view):
            continue
        return False
    return True


def _string(value: ast.expr, view: TreeView) -> bool:
    """LibCST's ``SimpleString`` or ``ConcatenatedString``: a str or bytes literal, or an f-string
    concatenated with other strings (``"a" f"{b}"``; a lone f-string is a ``FormattedString``)."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, (str, bytes))
    return isinstance(value, ast.JoinedStr) and tree_lightning.concatenated(view.positions.segment(value))


def _literal(value: ast.expr, view: TreeView) -> bool:
    """A number (not imaginary), a string, ``True``/``False``/``None``."""
    if isinstance(value, ast.Constant) and not isinstance(value.value, (complex, str, bytes)):
        return value.value is not Ellipsis
    return _string(value, view)


def _refusal(body: list[list[ast.stmt]], start: int, view: TreeView) -> str | None:
    """Why the script cannot move into main(), if it cannot: the first reason found."""
    for line in body:
        statement = line[0]
        if isinstance(statement, ast.If) and _mentions_name_dunder(statement, view):
            return "the script already has a main guard"
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == "main":
            return "`main` is already defined"
    if any(_process_setting(body, i, view) for i in range(start, len(body))):
        return "a process-wide setting comes after the script starts; spawned children would lose it inside main()"
    later = next((line[0] for line in body[start:] if isinstance(line[0], _DEFINITIONS)), None)
    if later is not None:
        return f"`{later.name}` is defined after the script starts, and children import it from the top level"
    bound = statement_names([s for line in body[start:] for s in line]).binds
    if "main" in bound:
        return "`main` is already bound"
    for line in body[:start]:
        if isinstance(line[0], _DEFINITIONS):
            used = statement_names(line[0].body).reads & bound
            if used:
                return f"`{line[0].name}` uses `{sorted(used)[0]}`, which would stop being global"
    if any(_simple(line) and any(isinstance(s, ast.Global) for s in line) for line in body[start:]):
        return "a `global` statement would change meaning"
    if any(_simple(line) and any(isinstance(s, ast.ImportFrom) and s.names[0].name == "*" for s in line) for line in body[start:]):
        return STAR_IMPORT
    return None


def _mentions_name_dunder(statement: ast.If, view: TreeView) -> bool:
    """``__name__`` in the ``if``'s test with its parentheses and the comments inside them, which
    ``ast`` leaves out of the test (``if (  # __name__ ...``); not in a comment after the colon.
    Between ``if`` and the colon only the test, its parentheses and layout can stand, and a
    comment only inside those parentheses."""
    positions, text = view.positions, view.text
    after_if = positions.offset(statement.lineno, statement.col_offset) + len("if")
    colon = _CLOSING_PARENTHESES.match(text, positions.offset(statement.test.end_lineno, statement.test.end_col_offset)).end()
    return "__name__" in text[after_if:colon]


# ``from m import *`` is only allowed at a module's top level: inside main() it does not compile.
STAR_IMPORT = "`from ... import *` cannot move into main()"
