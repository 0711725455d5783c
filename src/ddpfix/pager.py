"""Paging a long preview on a terminal, as git pages its diffs.

The pager is ``$DDPFIX_PAGER``, else ``$PAGER``, else ``less -FRX`` (quit at once when the text fits
one screen, keep colours, leave the text on the screen when it quits) where the terminal is not a
dumb one. An empty value or ``cat`` means no pager. A pager that cannot be started is no error: the text is written as it is.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

DEFAULT_PAGER = "less -FRX"


def pager_command(environ: dict[str, str] | None = None) -> str | None:
    """The pager to run, or None for none."""
    environ = os.environ if environ is None else environ
    for name in ("DDPFIX_PAGER", "PAGER"):
        if name in environ:
            command = environ[name].strip()
            return None if command in ("", "cat") else command
    if environ.get("TERM", "dumb") == "dumb":
        return None  # less cannot page on a terminal that cannot move the cursor
    return DEFAULT_PAGER if shutil.which("less") else None


def page(data: bytes) -> None:
    """Show ``data`` through the pager and wait for it to quit; without one, write it to stdout."""
    command = pager_command()
    if command is None or not _run(command, data):
        _write(data)


def _run(command: str, data: bytes) -> bool:
    """Whether the pager ran (it may have been quit before reading everything)."""
    environ = dict(os.environ)
    # As git does: ``less`` named in $PAGER without options still quits on short text and keeps colours.
    environ.setdefault("LESS", "FRX")
    environ.setdefault("LV", "-c")
    try:
        # A pager setting is a command line ("less -R", "delta --side-by-side"): the shell reads it, as git's.
        process = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=environ)
    except OSError:
        return False
    try:
        process.stdin.write(data)
        process.stdin.close()
    except (BrokenPipeError, OSError):
        pass  # the reader quit early ("q" in less): what it did not read is not wanted
    while True:
        try:
            code = process.wait()
            break
        except KeyboardInterrupt:
            continue  # Ctrl-C inside less belongs to less (git waits for its pager too)
    # 127: the shell did not find the command; 126: it could not run it.
    return code not in (126, 127) or _first_word_exists(command)


def _first_word_exists(command: str) -> bool:
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return bool(words) and shutil.which(words[0]) is not None


def _write(data: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
