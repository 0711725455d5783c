"""Whether a file's reads of the rank may shape its data: asked where a fix rests on every rank's
dataset having the same length (DDP004's batch sizes Lightning infers).

The project's facts find the rank's words in a file by a cheap text scan (``PROJECT_HAZARDS``:
``is_global_zero``, ``LOCAL_RANK``, ``get_rank``...). Many files read the rank for one thing only:
what to report (``if self.trainer.is_global_zero: self.log(...)``, ``self.log("rank",
float(self.global_rank))``). A read in a statement that only reports, or in the test of an ``if``
whose branches only report, changes no data, where nothing there calls more than pure computations
(a random draw in a printed example would move the rank's random state; review round 13). A
docstring or a comment that names the rank runs nothing. Any other read, one the scan finds where the tree shows none (a comment, a string), or a file that
cannot be read or parsed, may shape it.

Code that runs on some ranks only shapes data too: ``prepare_data``, which Lightning runs on local
rank 0 alone, where it keeps state on the instance (``prepare_data_keeps_nothing``).
"""

from __future__ import annotations

import ast
import functools
import os
import re
import warnings

from ddpfix.analysis.ast_shapes import every_node
from ddpfix.analysis.comments import without_comments
from ddpfix.analysis.values import TENSOR_METHODS

#: Calls that only report: Lightning's logging, ``print``, a logger's or an experiment's methods.
_REPORTING = frozenset({"log", "log_dict", "print", "info", "warning", "warn", "debug", "error", "log_metrics",
                        "log_hyperparams", "log_image", "log_text", "log_table", "add_scalar", "add_scalars",
                        "add_image", "add_text", "add_histogram", "add_figure"})
#: Builtins that read their argument without consuming it (``max``, ``sum``, ``sorted`` use up an
#: iterator: a generator consumed on rank 0 alone; review round 14).
_READING_BUILTINS = frozenset({"len", "float", "int", "abs", "round", "bool", "str", "repr"})
#: Calls that read the rank or the environment, and nothing else (``get`` only of ``os.environ``).
_RANK_CALLS = frozenset({"get_rank", "get_world_size", "get_local_rank", "getenv", "is_initialized",
                         "is_available"})
#: Tensor methods whose name a container's method shares that changes it: ``list.sort()`` sorts in
#: place, ``queue.get()`` takes an item (on rank 0 alone, the ranks' data would then differ).
_SHARED_WITH_CHANGES = frozenset({"sort", "get"})
_PURE_METHODS = (TENSOR_METHODS - _SHARED_WITH_CHANGES) | _RANK_CALLS


def _environment_read(func: ast.Attribute) -> bool:
    """``os.environ.get``/``environ.get``: a read of the environment."""
    receiver = func.value
    return func.attr == "get" and ((isinstance(receiver, ast.Attribute) and receiver.attr == "environ")
                                   or (isinstance(receiver, ast.Name) and receiver.id == "environ"))


def _pure(node: ast.AST) -> bool:
    """Every call below ``node`` computes without effects: a builtin such as ``int``/``len``/``str``,
    a tensor method (``argmax``, ``mean``), a read of the rank or the environment."""
    for part in ast.walk(node):
        if isinstance(part, ast.NamedExpr):
            return False
        if isinstance(part, ast.Call):
            func = part.func
            if isinstance(func, ast.Name) and func.id in _READING_BUILTINS:
                continue
            if isinstance(func, ast.Attribute) and (func.attr in _PURE_METHODS or _environment_read(func)):
                continue
            return False
    return True


def _reporting(statement: ast.stmt) -> bool:
    """A statement that only reports: a reporting call whose arguments compute without effects."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return False
    call = statement.value
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return name in _REPORTING and all(_pure(argument) for argument in [*call.args, *(k.value for k in call.keywords)])


def _reports_only(block: list[ast.stmt]) -> bool:
    return all(isinstance(s, ast.Pass) or _reporting(s)
               or (isinstance(s, ast.If) and _pure(s.test) and _reports_only(s.body) and _reports_only(s.orelse))
               for s in block)


def _header(statement: ast.stmt) -> list[ast.AST]:
    """What a statement runs itself: a simple statement whole; a compound one's header (a test,
    an iterable, decorators, defaults, bases), not its body."""
    if not hasattr(statement, "body"):
        return [statement]
    parts: list[ast.AST] = []
    for field in ("test", "iter", "target", "subject", "items", "decorator_list", "args", "returns", "bases", "keywords"):
        value = getattr(statement, field, None)
        parts.extend(value if isinstance(value, list) else [value] if isinstance(value, ast.AST) else [])
    return [p for p in parts if hasattr(p, "lineno")]


def _lines(node: ast.AST) -> range:
    return range(node.lineno, (node.end_lineno or node.lineno) + 1)


@functools.lru_cache(maxsize=64)
def _parsed(real_path: str, stamp: tuple[int, int]) -> tuple[bytes, ast.Module] | None:
    """The file's bytes and CPython's tree (``stamp``: its mtime and size, so an edit reads again);
    None where it cannot be read or parsed."""
    try:
        with open(real_path, "rb") as handle:
            data = handle.read()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return data, ast.parse(data, real_path)
    except (OSError, SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _stamp(real_path: str) -> tuple[int, int] | None:
    try:
        status = os.stat(real_path)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


@functools.lru_cache(maxsize=256)
def _only_decide_reporting(real_path: str, pattern: str, stamp: tuple[int, int]) -> bool:
    parsed = _parsed(real_path, stamp)
    if parsed is None:
        return False
    data, tree = parsed
    words = re.compile(pattern.encode())
    # the lines where the words stand outside comments (``# 11 samples per rank`` runs nothing)
    found = {number + 1 for number, line in enumerate(re.split(rb"\r\n|\r|\n", without_comments(data)))  # Python's line ends
             if words.search(line)}
    excused: set[int] = set()
    contested: set[int] = set()  # lines that other code shares (``print(rank); n += rank`` on one line)
    for node in every_node(tree):
        if isinstance(node, ast.If) and _pure(node.test) and _reports_only(node.body) and _reports_only(node.orelse):
            excused.update(_lines(node.test))
        elif isinstance(node, ast.stmt) and _reporting(node):
            excused.update(_lines(node))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            excused.update(_lines(node))  # a docstring: text that runs nothing
        elif isinstance(node, ast.stmt):
            for part in _header(node):
                contested.update(_lines(part))
    excused -= contested
    # a line the scan finds outside all of these: a read that may shape data, or one the tree does
    # not show (a comment, a string), taken as one
    return found <= excused


def only_decide_reporting(real_path: str, pattern: str) -> bool:
    """Every line of the file at ``real_path`` where ``pattern`` (the rank's words) matches is in a
    statement that only reports, or in the test of an ``if`` whose branches only report, with no
    call there but pure ones: its reads of the rank change no data. False where any other line
    matches, or the file cannot be read or parsed."""
    stamp = _stamp(real_path)
    return stamp is not None and _only_decide_reporting(real_path, pattern, stamp)


def _rooted_at_self(node: ast.expr) -> bool:
    """``self``, ``self.a``, ``self.a[0].b``: a place reached from the instance."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "self"


def _keeps_state(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether running ``function`` may leave state behind in the process: a store through ``self``
    (``self.split = ...``, ``self.cache[k] = ...``, ``self.n += 1``), a method called on the instance
    or on what it holds (``self.build_vocab()``, ``self.items.append(x)``: code that may store), a
    ``global`` or ``nonlocal`` name, ``setattr``, or ``super()`` (a base class's ``prepare_data``).
    Handing ``self.data_dir`` to a call (``MNIST(self.data_dir, download=True)``) keeps nothing."""
    for node in every_node(function):
        if node is function:
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return True
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and _rooted_at_self(node):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and _rooted_at_self(func.value):
                return True
            if isinstance(func, ast.Name) and func.id in ("setattr", "super", "vars"):
                return True
    return False


@functools.lru_cache(maxsize=256)
def _prepare_data_keeps_nothing(real_path: str, stamp: tuple[int, int]) -> bool:
    parsed = _parsed(real_path, stamp)
    if parsed is None:
        return False
    tree = parsed[1]
    return not any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "prepare_data"
                   and _keeps_state(node) for node in every_node(tree))


def prepare_data_keeps_nothing(real_path: str) -> bool:
    """No ``prepare_data`` of the file at ``real_path`` keeps state in the process. Lightning runs
    that hook on local rank 0 alone (before a barrier): what it keeps on the instance (a split, a
    vocabulary, a count) exists on that rank only, and the ranks' data may then differ. Writing
    files that ``setup`` reads on every rank is its purpose, and shapes no rank's data alone. False
    where the file cannot be read or parsed."""
    stamp = _stamp(real_path)
    return stamp is not None and _prepare_data_keeps_nothing(real_path, stamp)
