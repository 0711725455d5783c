"""Whether a file's reads of the rank may shape its data: asked where a fix rests on every rank's
dataset having the same length (DDP004's batch sizes Lightning infers).

The project's facts find the rank's words in a file by a cheap text scan (``PROJECT_HAZARDS``:
``is_global_zero``, ``LOCAL_RANK``, ``get_rank``...). Most such files read the rank for one thing
only: whether to log (``if self.trainer.is_global_zero: self.log(...)``). A read that only decides
which log, print or logger calls run changes no data. Any other read, one the scan finds where the
tree shows none (a comment, a string), or a file that cannot be read or parsed, may shape it.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import warnings

from ddpfix.analysis.ast_shapes import every_node

#: Calls that only report: Lightning's logging, ``print``, a logger's or an experiment's methods.
_REPORTING = frozenset({"log", "log_dict", "print", "info", "warning", "warn", "debug", "error", "log_metrics",
                        "log_hyperparams", "log_image", "log_text", "log_table", "add_scalar", "add_scalars",
                        "add_image", "add_text", "add_histogram", "add_figure"})


def _reports_only(block: list[ast.stmt]) -> bool:
    for statement in block:
        if isinstance(statement, ast.Pass):
            continue
        if isinstance(statement, ast.If) and _reports_only(statement.body) and _reports_only(statement.orelse):
            continue
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
            return False
        func = statement.value.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name not in _REPORTING:
            return False
    return True


@functools.lru_cache(maxsize=256)
def _only_decide_reporting(real_path: str, pattern: str, stamp: tuple[int, int]) -> bool:
    try:
        with open(real_path, "rb") as handle:
            data = handle.read()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data, real_path)
    except (OSError, SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    lines = data.split(b"\n")
    found = {number + 1 for number, line in enumerate(lines) if re.search(pattern.encode(), line)}
    excused: set[int] = set()
    for node in every_node(tree):
        if isinstance(node, ast.If) and _reports_only(node.body) and _reports_only(node.orelse) \
                and not any(isinstance(part, ast.NamedExpr) for part in ast.walk(node.test)):
            excused.update(range(node.test.lineno, (node.test.end_lineno or node.test.lineno) + 1))
    # a line the scan finds outside every such test: a read that may shape data, or one the tree
    # does not show (a comment, a string), taken as one
    return bool(found) and found <= excused


def only_decide_reporting(real_path: str, pattern: str) -> bool:
    """Every line of the file at ``real_path`` where ``pattern`` (the rank's words) matches is the
    test of an ``if`` whose branches only log, print or call a logger: its reads of the rank change
    no data. False where any other line matches, or the file cannot be read or parsed."""
    try:
        status = os.stat(real_path)
    except OSError:
        return False
    return _only_decide_reporting(real_path, pattern, (status.st_mtime_ns, status.st_size))
