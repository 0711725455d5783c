"""Bounded work per file: a time and memory budget for one file's analysis and fixes, and the
guards that refuse, before it starts, work that could not be interrupted once begun.

A file over its budget costs that file only (``E903``, the file left as it was), never the run:
a generated 4 MB module, or one expression nested thirty thousand levels deep, must not hang a
pre-commit hook or an editor.

How each limit is kept, in one process (``--jobs 1``, the language server) as in a worker:

- **Time** (wall clock): an interval timer (``setitimer``/``SIGALRM``) ticks while a file is worked
  on; the tick that finds the budget spent raises ``OverBudget`` in the Python code running then.
  Signals reach Python code only, and only in the main thread: elsewhere (a thread of the
  language server) the budget is checked at the engine's own steps (``checkpoint``).
- **Memory**: the same tick reads the process's resident set (``/proc/self/statm``: no
  ``tracemalloc``, which would slow every allocation) and compares its growth since the file began.
- **Native code** (LibCST's parser, written in Rust) cannot be interrupted by a signal: its cost is
  predicted from CPython's tree before it is called (``libcst_refusal``), from the file's size
  (memory) and from the deepest chain of nested expressions (its parse time grows with the cube of
  that depth: 2,000 nested ``+`` take LibCST ten seconds and more, 4,000 a minute and a half).

No process per file: that would cost more than most files' whole analysis.
"""

from __future__ import annotations

import ast
import os
import signal
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from ddpfix.ast_walk import child_nodes

TOO_COSTLY = "E903"

#: Defaults sized so that no real file comes near them: the largest file of torch, lightning and
#: transformers (1.4 MB) is fixed in seconds, with a few hundred MB.
DEFAULT_TIME_BUDGET = 60.0  # seconds per file
DEFAULT_MEMORY_BUDGET = 2 * 1024**3  # bytes per file, growth of the resident set
#: Files larger than this are not parsed at all (``E902``): ``--max-file-size`` / ``max-file-size``.
DEFAULT_MAX_FILE_SIZE = 4 * 1024 * 1024

#: How often the timer looks (seconds): often enough that a budget is kept to within a tick, rarely
#: enough to cost nothing measurable.
TICK = 0.05

#: LibCST's tree of a file takes about this many bytes per byte of source (measured on Lightning
#: scripts and corpus A: 250-450; the largest taken, so the prediction errs on the side of refusing
#: files only far beyond any real one).
LIBCST_BYTES_PER_BYTE = 450
#: LibCST's parse time grows with the cube of the deepest chain of nested expressions (left-leaning
#: ``a + b + c ...``, ``x.f().g()...``, ``x[0][0]...``): about this many seconds per depth**3.
LIBCST_SECONDS_PER_DEPTH_CUBED = 4e-9
#: LibCST's parse of ordinary code, seconds per MB, on a fast machine (it errs on the side of parsing).
LIBCST_SECONDS_PER_MB = 1.0
#: Below this depth no prediction is needed (LibCST takes milliseconds): the tree is not measured.
SHALLOW = 200


class OverBudget(BaseException):
    """A file's work went over its budget. A ``BaseException``, so that no ``except Exception`` of a
    rule or a library swallows it on its way out."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def raise_if_wrapped(err: BaseException) -> None:
    """Raise the ``OverBudget``, or the Ctrl-C (``KeyboardInterrupt``, ``interrupts.Interrupted``),
    that ``err`` wraps, if it does. The timer and SIGINT raise wherever Python code runs, and some
    code hands what it catches on inside an error of its own: a class body that an import was
    running when the tick or the key came (``__set_name__`` turns it into a RuntimeError). The file
    is then over its budget (E903), or the run was interrupted: not a rule's bug. Whatever is no
    ``Exception`` stops the work it reaches, so it is raised as it is."""
    seen: set[int] = set()
    cause: BaseException | None = err
    while cause is not None and id(cause) not in seen:
        if not isinstance(cause, Exception):
            raise cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__


def size_setting(value: object, what: str) -> int:
    """A size in bytes from a setting: an integer, or a string such as ``4MiB``, ``500k``, ``2 GB``
    (K/M/G count 1024s, as the defaults are written). ValueError names ``what`` on a bad value."""
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a size such as 4MiB or 8000000, not {value!r}")
    if isinstance(value, int):
        number, unit = value, ""
    elif isinstance(value, str):
        text = value.strip().replace(" ", "")
        digits = text.rstrip("KkMmGgIiBb")
        unit = text[len(digits):].lower().rstrip("b").rstrip("i")
        try:
            number = float(digits)
        except ValueError:
            raise ValueError(f"{what} must be a size such as 4MiB or 8000000, not {value!r}") from None
        if unit not in ("", "k", "m", "g"):
            raise ValueError(f"{what} must be a size such as 4MiB or 8000000, not {value!r}")
    else:
        raise ValueError(f"{what} must be a size such as 4MiB or 8000000, not {value!r}")
    size = int(number * {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[unit])
    if size <= 0:
        raise ValueError(f"{what} must be a positive size, not {value!r}")
    return size


def seconds_setting(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{what} must be a positive number of seconds, not {value!r}")
    return float(value)


def limit_setting(key: str, value: object, what: str | None = None) -> int | float:
    """The value of one of the limit settings (``max-file-size``, ``fix-time-budget``,
    ``fix-memory-budget``), from ``[tool.ddpfix]`` or the command line; ValueError names ``what``
    (default: the key)."""
    if key == "fix-time-budget":
        return seconds_setting(value, what or key)
    return size_setting(value, what or key)


def limit_options(config, max_file_size: str | None, time_budget: float | None, memory_budget: str | None) -> dict:
    """The engine's options for the limits: a flag wins over ``[tool.ddpfix]``, which wins over the
    defaults (left out: the engine knows them). ValueError names the flag."""
    options: dict[str, object] = {}
    for key, flag, config_value in (("max-file-size", max_file_size, config.max_file_size),
                                    ("fix-time-budget", time_budget, config.fix_time_budget),
                                    ("fix-memory-budget", memory_budget, config.fix_memory_budget)):
        value = limit_setting(key, flag, f"--{key}") if flag is not None else config_value
        if value is not None:
            options[key.replace("-", "_")] = value
    return options


def _seconds(value: float) -> str:
    return f"{value:.1f}" if value >= 1 else f"{value:.2f}"


def describe_limit(key: str, value: int | float | None) -> str:
    """A limit setting's value as ``--show-settings`` prints it (None: the default, said so)."""
    default = {"max-file-size": DEFAULT_MAX_FILE_SIZE, "fix-time-budget": DEFAULT_TIME_BUDGET,
               "fix-memory-budget": DEFAULT_MEMORY_BUDGET}[key]
    shown = value if value is not None else default
    text = f"{_seconds(shown)} s" if key == "fix-time-budget" else describe_size(int(shown))
    return text if value is not None else f"{text} (default)"


def describe_size(size: int) -> str:
    """``4 MiB``, ``1.5 GiB``, ``976.6 KiB``: as the settings are written."""
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


class Budget:
    """One file's limits, read from the run's options (``fix_time_budget``, ``fix_memory_budget``)."""

    def __init__(self, options: Mapping[str, object] | None):
        options = options or {}
        self.seconds = float(options.get("fix_time_budget") or DEFAULT_TIME_BUDGET)
        self.memory = int(options.get("fix_memory_budget") or DEFAULT_MEMORY_BUDGET)
        self.started = time.monotonic()
        self.base_rss = _rss()
        #: Whether the timer keeps this budget (else the engine's ``checkpoint`` calls do).
        self.timed = False

    def spent(self) -> str | None:
        """Why the file is over its budget, or None."""
        elapsed = time.monotonic() - self.started
        if elapsed > self.seconds:
            return (f"too slow to fix: still working after {_seconds(elapsed)} s, over the {self.seconds:g} s budget "
                    "per file (fix-time-budget)")
        rss = _rss()
        if rss is not None and self.base_rss is not None and rss - self.base_rss > self.memory:
            return (f"too large to fix: {describe_size(rss - self.base_rss)} of memory taken, over the "
                    f"{describe_size(self.memory)} budget per file (fix-memory-budget)")
        return None


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _rss() -> int | None:
    """The process's resident set now, in bytes (None where /proc is not there)."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return None


_current: Budget | None = None  # the budget being kept, in this process (one file at a time)


@contextmanager
def bounded(options: Mapping[str, object] | None) -> Iterator[Budget]:
    """Keep one file's budget while the block runs: ``OverBudget`` is raised inside it once the
    budget is spent. Nested use keeps the outer budget (a notebook's steps share the notebook's)."""
    global _current
    if _current is not None:
        yield _current
        return
    budget = _current = Budget(options)
    timed = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    previous = None
    budget.timed = timed
    if timed:
        def tick(_signum, _frame) -> None:
            if _current is budget:  # not after the block has ended (a tick already on its way)
                reason = budget.spent()
                if reason is not None:
                    raise OverBudget(reason)

        previous = signal.signal(signal.SIGALRM, tick)
        # Someone else's timer (an embedding program's alarm) is put back afterwards, less the time spent.
        other_delay, other_interval = signal.setitimer(signal.ITIMER_REAL, min(TICK, budget.seconds), TICK)
    try:
        yield budget
    finally:
        _current = None
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
            signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
            if other_delay > 0:
                left = other_delay - (time.monotonic() - budget.started)
                signal.setitimer(signal.ITIMER_REAL, max(left, 0.001), other_interval)


def checkpoint() -> None:
    """Raise ``OverBudget`` if the file being worked on is over its budget: for the steps of the
    engine, where no timer can interrupt (a thread other than the main one)."""
    budget = _current
    if budget is not None and not budget.timed:
        reason = budget.spent()
        if reason is not None:
            raise OverBudget(reason)


def libcst_refusal(tree: ast.Module, size: int) -> str | None:
    """Why LibCST's parse of a file (``size`` bytes, CPython's ``tree`` of it) would not keep
    within the current budget, predicted before it is called (it cannot be interrupted); None
    when it would. Memory from the size; time from the deepest chain of nested expressions."""
    budget = _current
    memory = budget.memory if budget is not None else DEFAULT_MEMORY_BUDGET
    seconds = budget.seconds if budget is not None else DEFAULT_TIME_BUDGET
    if size * LIBCST_BYTES_PER_BYTE > memory:
        return (f"too large to fix: LibCST's tree of this {describe_size(size)} file would take about "
                f"{describe_size(size * LIBCST_BYTES_PER_BYTE)}, over the {describe_size(memory)} budget per file "
                "(fix-memory-budget)")
    depth, line = expression_depth(tree)
    predicted = LIBCST_SECONDS_PER_DEPTH_CUBED * depth**3
    if depth > SHALLOW and predicted > seconds:
        return (f"too deeply nested to fix: an expression at line {line} is nested {depth:,} levels deep; "
                f"LibCST would take about {predicted:,.0f} s to parse it, over the {seconds:g} s budget per file "
                "(fix-time-budget)")
    # The time left must hold the parse too: once started, it runs to its end, over budget or not.
    spent = time.monotonic() - budget.started if budget is not None else 0.0
    predicted += size / 1e6 * LIBCST_SECONDS_PER_MB
    if spent + predicted > seconds:
        return (f"too slow to fix: {_seconds(spent)} s of the {seconds:g} s budget per file spent, and LibCST's "
                f"parse of this {describe_size(size)} file would take about {_seconds(predicted)} s more "
                "(fix-time-budget)")
    return None


def expression_depth(tree: ast.AST) -> tuple[int, int]:
    """The deepest nesting of expressions in ``tree`` (statements do not count: LibCST's cost lies
    in long expression chains) and the line where it is, without recursion (a tree this deep would
    exhaust Python's stack). Only depths over ``SHALLOW`` matter: an expression on one line that is
    shorter than that (each level of nesting takes a character at least) is not entered."""
    deepest, where = 0, 0
    todo: list[tuple[ast.AST, int]] = [(tree, 0)]
    pop, push = todo.pop, todo.append
    while todo:
        node, depth = pop()
        if isinstance(node, ast.expr):
            depth += 1
            if depth > deepest:
                deepest, where = depth, node.lineno
        else:
            depth = 0
        for child in child_nodes(node):
            if depth == 0 and not isinstance(child, ast.stmt):
                end = getattr(child, "end_lineno", None)
                if end is not None and end == child.lineno and child.end_col_offset - child.col_offset < SHALLOW:
                    continue  # a short line's expression: far too shallow to matter
            push((child, depth))
    return deepest, where
