"""Atomic writes: a reader (or a crash, or SIGKILL) sees the old file or the new one, never a torn one.

The bytes written are the engine's output, which already carries the file's encoding, BOM and
newline style; this module keeps the file's mode (and owner, where allowed) and writes through
symlinks to their target.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile

TEMP_SUFFIX = ".ddpfix.tmp"


class StaleFileError(Exception):
    """The file changed on disk after ddpfix read it; writing would lose that change."""


def write_atomic(path: str, data: bytes, expected: bytes | None = None) -> None:
    """Replace ``path``'s content with ``data``.

    ``expected``: the bytes the fix was computed from; if the file no longer holds them (an editor
    saved meanwhile), nothing is written and StaleFileError is raised.
    """
    target = os.path.realpath(path)
    info = os.stat(target)
    if expected is not None:
        with open(target, "rb") as current:
            if current.read() != expected:
                raise StaleFileError(f"{path} changed on disk since it was read; not written")
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
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
