"""Ctrl-C: the main process alone decides, stops the workers within a deadline, and says what was written.

The console script installs ``handle_sigint`` (``install``). The first SIGINT raises ``Interrupted``
in the main thread, except inside a ``deferred()`` section (one file's atomic write), where it waits
for the section's end: so a file is either written and counted, or untouched. Worker processes ignore
SIGINT (a terminal sends it to the whole process group): ``stop_pool`` cancels their pending work and
ends them, gently first. A second SIGINT kills the workers and leaves at once.

Before ``install`` (while Python loads the command's modules, some tenths of a second) Python's own
handler raises KeyboardInterrupt; ``interrupted_exit.quiet_while_loading`` makes that end the process
the same way, one line and status 130, instead of a traceback.

``Interrupted`` derives from BaseException, as KeyboardInterrupt does: the engine's ``except
Exception`` (a file's bug costs that file, never the run) must not swallow it; and it is not a
KeyboardInterrupt, which click would turn into "Aborted." and exit 1.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator

# How a stopped run ends lives there (the console script loads it first): part of this module's word.
from ddpfix.interrupted_exit import EXIT_INTERRUPTED, leave  # noqa: F401

#: How long the workers get to finish what they hold before they are terminated, then killed.
GRACE_SECONDS = 1.0


class Interrupted(BaseException):
    """The user pressed Ctrl-C."""


class _State:
    owner = 0  # the pid that installed the handler: a forked worker, before it ignores SIGINT, is not it
    interrupted = False
    deferring = 0
    pending = False
    describe: Callable[[], str] = staticmethod(lambda: "nothing written.")  # what was written, for the last words


_state = _State()


def install(describe: Callable[[], str] = lambda: "nothing written.") -> None:
    """Let this process (the console script's) handle Ctrl-C as this module says. ``describe()``
    says what the run has written, for the message of a second Ctrl-C."""
    _state.describe = describe
    _state.owner = os.getpid()
    _state.interrupted = _state.pending = False
    signal.signal(signal.SIGINT, handle_sigint)


def written() -> str:
    """What the run has written, as the last words say it (``nothing written.``, ``3 files written ...``)."""
    return _state.describe()


def handle_sigint(signum, frame) -> None:
    if os.getpid() != _state.owner:
        return  # a worker forked a moment ago, before its initializer ignores SIGINT
    if _state.deferring:
        _state.pending = True
        return
    _act()


def check() -> None:
    """Raise the Ctrl-C that Python could not raise where it came (inside a weakref callback of the
    import system, a ``__del__``: "ignored", see ``interrupted_exit.quiet_while_loading``): the run
    calls this before it writes a file, so that such a Ctrl-C still stops it before it writes."""
    if _state.interrupted and not _state.deferring and os.getpid() == _state.owner:
        raise Interrupted


def _act() -> None:
    if _state.interrupted:
        stop_now()
    _state.interrupted = True
    raise Interrupted


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold a SIGINT that arrives inside until the block is done (one file's write: a few ms)."""
    _state.deferring += 1
    try:
        yield
    finally:
        _state.deferring -= 1
        if _state.pending and not _state.deferring:  # also when the block failed: the user asked to stop
            _state.pending = False
            _act()


def ignore_in_worker() -> None:
    """A worker's first act: Ctrl-C is the main process's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def stop_pool(pool, grace: float = GRACE_SECONDS) -> None:
    """End a ProcessPoolExecutor now: pending work is cancelled; the workers get ``grace`` seconds
    to finish the file they hold (their results are not used), then are terminated, then killed.
    Never waits longer than about three times ``grace``; a second Ctrl-C meanwhile kills them at once
    (``stop_now``, or here where no handler is installed)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    try:
        _end(processes, grace)
    except BaseException:
        _end(processes, 0)
        raise


def _end(processes, grace: float) -> None:
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    for stop in ("terminate", "kill"):
        alive = [process for process in processes if process.is_alive()]
        if not alive:
            return
        for process in alive:
            getattr(process, stop)()
        deadline = time.monotonic() + max(grace, 0.5)
        for process in alive:
            process.join(max(0.0, deadline - time.monotonic()))


def stop_now() -> None:
    """The second Ctrl-C: kill this process's workers and leave without waiting for anything."""
    import multiprocessing

    with contextlib.suppress(Exception):
        children = multiprocessing.active_children()
        for child in children:
            child.kill()
        deadline = time.monotonic() + 0.5
        for child in children:  # reaped, so none is left behind even as a zombie
            child.join(max(0.0, deadline - time.monotonic()))
    with contextlib.suppress(Exception):
        sys.stderr.write(f"Interrupted again: stopped at once; {written()}\n")
        sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)
