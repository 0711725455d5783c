"""Atomic writes: a reader (or a crash, or SIGKILL) sees the old file or the new one, never a torn one.

The bytes written are the engine's output, which already carries the file's encoding, BOM and
newline style; this module keeps the file's mode (and owner, where allowed) and writes through
symlinks to their target. ``ResultWriter`` writes a run's results one by one as they arrive, so a
run stopped part-way (Ctrl-C) keeps every file already fixed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from dataclasses import replace

from ddpfix.findings import FileResult, Problem
from ddpfix.interrupts import check as check_interrupted, deferred
from ddpfix.lazy_regex import lazy_compile

TEMP_SUFFIX = ".ddpfix.tmp"
# ``.{name}.{8 random characters}.ddpfix.tmp``: what ``tempfile.mkstemp`` makes from the prefix and
# suffix below. Only names of this shape, beside the file they were for, are ever cleaned up.
_TEMP_NAME = lazy_compile(r"\.(?P<base>.+)\.[a-z0-9_]{8}" + re.escape(TEMP_SUFFIX) + r"\Z")


class StaleFileError(Exception):
    """The file changed on disk after ddpfix read it; writing would lose that change."""


class _Tally:
    written = 0  # files this process replaced: what an interrupted run reports


_tally = _Tally()


def files_written() -> int:
    """How many files this process has written (each one complete)."""
    return _tally.written


def write_atomic(path: str, data: bytes, expected: bytes | None = None) -> None:
    """Replace ``path``'s content with ``data``.

    ``expected``: the bytes the fix was computed from; if the file no longer holds them (an editor
    saved meanwhile), nothing is written and StaleFileError is raised.
    """
    target = os.path.realpath(path)
    info = os.stat(target)
    # The write goes through a new file renamed over the old one, which a folder's permissions allow
    # even for a file marked read-only: honour the mark (for root too, who passes any access check).
    if not os.access(target, os.W_OK) or not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise PermissionError(errno.EACCES, "the file is read-only", path)
    if expected is not None:
        with open(target, "rb") as current:
            if current.read() != expected:
                raise StaleFileError(f"{path} changed on disk since it was read; not written")
    import tempfile  # loaded by a write only: a report never needs it (start-up time)

    folder, base = os.path.split(target)
    fd, temp = tempfile.mkstemp(prefix=f".{base}.", suffix=TEMP_SUFFIX, dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, stat.S_IMODE(info.st_mode))
        with contextlib.suppress(OSError):
            os.chown(temp, info.st_uid, info.st_gid)
        os.replace(temp, target)
        _tally.written += 1
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def remove_stale_temps(folder: str, before: float) -> list[str]:
    """Delete the temp files an earlier, killed ddpfix left in ``folder``; return their paths.

    A SIGKILL between creating the temp file and renaming it leaves ``.{name}.XXXXXXXX.ddpfix.tmp``
    behind (nothing can clean up after SIGKILL). The next run that writes to the folder removes them,
    and only them: regular files (not links) named exactly so, whose file ``name`` is beside them,
    last modified before ``before`` (this run's start, so a concurrent run's temp file is left alone).
    """
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    names = {entry.name for entry in entries}
    for entry in entries:
        match = _TEMP_NAME.match(entry.name)
        if not match or match["base"] not in names:
            continue
        try:
            if not entry.is_file(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_mtime >= before:
                continue
            os.unlink(entry.path)
        except OSError:
            continue
        removed.append(entry.path)
    return removed


class ResultWriter:
    """Writes each changed file of a run as its result is handed in (``__call__``), and returns the
    result as it then stands: a file that cannot be written (or that changed on disk since it was
    read) is a problem, kept in ``failed``, and its fixes count as not applied.

    Each folder written to is first rid of the temp files a killed earlier run left there (older
    than ``run_started``). A Ctrl-C during a write waits for its end (``interrupts.deferred``): a
    file is written whole and counted, or not touched.
    """

    def __init__(self, run_started: float):
        self.run_started = run_started
        self.failed: list[Problem] = []
        self._cleaned: set[str] = set()

    def __call__(self, result: FileResult) -> FileResult:
        if not result.changed:
            return result
        check_interrupted()
        with deferred():
            folder = os.path.dirname(os.path.realpath(result.path))
            if folder not in self._cleaned:
                self._cleaned.add(folder)
                remove_stale_temps(folder, self.run_started)
            try:
                write_atomic(result.path, result.fixed, expected=result.original)
            except (OSError, StaleFileError) as err:
                message = str(err) if isinstance(err, StaleFileError) else f"cannot write: {err.strerror or err}"
                self.failed.append(Problem(result.path, "E902", message))
                return FileResult(result.path, result.original, None, [replace(f, fixed=False) for f in result.findings])
        return result
