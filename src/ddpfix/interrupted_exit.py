"""How a run that Ctrl-C stopped ends: one line on stderr, status 130, no traceback.

The console script loads this module first, before the modules that take it a few tenths of a second
to load (``cli``): it imports nothing that Python's start-up has not loaded already, so the hook is
in place a few milliseconds into the run. ``interrupts`` decides everything after that.
"""

from __future__ import annotations

import os
import sys

#: The exit status of a process ended by SIGINT, as shells report it (128 + 2).
EXIT_INTERRUPTED = 130


def leave(message: str) -> None:
    """Say ``message`` and end the process with status 130, without waiting on threads (a pool's
    manager thread, which interpreter exit would join) that an interrupted run may have left."""
    try:
        sys.stdout.flush()
    except Exception:  # a closed pipe: the line on stderr still counts
        pass
    try:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
    except Exception:
        pass
    os._exit(EXIT_INTERRUPTED)


def quiet_while_loading() -> None:
    """Until ``interrupts.install`` sets its own handler, Python's raises KeyboardInterrupt at a
    Ctrl-C, and a traceback of whatever module was loading at the time was printed. An uncaught
    KeyboardInterrupt (or ``interrupts.Interrupted``) now ends the process as a later Ctrl-C does:
    ``Interrupted: nothing written.``, status 130. Through ``sys.excepthook``, which Python calls
    only for what nothing caught: a process that imports the command's modules without running the
    command (a test run) catches its KeyboardInterrupt as before. A hook set by someone else is
    left alone.

    A KeyboardInterrupt that Python cannot raise where the program is (inside a weakref callback of
    the import system's module locks, a ``__del__``) is "ignored": printed, and the run went on as
    if Ctrl-C had not been pressed (1 in 600 Ctrl-Cs sent during loading). It ends the process too;
    ddpfix's own ``Interrupted`` lost that way is kept quiet and raised where the run next checks
    (``interrupts.check``, before each write), where the workers are stopped as for any Ctrl-C."""
    if sys.excepthook is sys.__excepthook__:
        sys.excepthook = _uncaught
    if sys.unraisablehook is sys.__unraisablehook__:
        sys.unraisablehook = _unraisable


def _uncaught(kind, value, traceback) -> None:
    interrupts = sys.modules.get("ddpfix.interrupts")  # loaded by the time its Interrupted exists
    causes = _chain(value) if value is not None else [kind]
    if any(issubclass(cause, KeyboardInterrupt) for cause in causes):
        leave("Interrupted: nothing written.")
    if interrupts is not None and any(issubclass(cause, interrupts.Interrupted) for cause in causes):
        leave(f"Interrupted: {interrupts.written()}")
    sys.__excepthook__(kind, value, traceback)


def _chain(error: BaseException) -> list[type]:
    """The kinds of ``error`` and of every exception it was raised from or while handling. Python
    turns some exceptions into others as they pass through it: a KeyboardInterrupt raised while a
    class is created, inside a ``__set_name__`` (a dataclass field's), reaches the top as
    ``RuntimeError: Error calling __set_name__``, the Ctrl-C as its cause. Such an error is the
    Ctrl-C all the same."""
    kinds, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        kinds.append(type(error))
        error = error.__cause__ or error.__context__
    return kinds


def _unraisable(unraisable) -> None:
    if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
        leave("Interrupted: nothing written.")
    interrupts = sys.modules.get("ddpfix.interrupts")
    if interrupts is not None and unraisable.exc_type is not None and issubclass(unraisable.exc_type, interrupts.Interrupted):
        return  # said where the run next checks (``interrupts.check``), after it stops its workers
    sys.__unraisablehook__(unraisable)
