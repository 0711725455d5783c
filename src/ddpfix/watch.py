"""``--watch``: check again whenever a Python file or notebook under the paths changes, as Ruff's
``--watch`` does. Each check is a fresh ``ddpfix`` process (no state carried from one to the
next); the files are polled twice a second (no watcher library: ddpfix depends on none). Ctrl-C
ends it with status 0, the normal way out."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from ddpfix.runner import DEFAULT_EXCLUDES, SOURCE_SUFFIXES
from ddpfix.spellings import MODES  # what already names a mode (the spellings are translated first)


def snapshot(paths: list[str]) -> dict[str, float]:
    """Modification times of the files a check could read under ``paths``."""
    seen: dict[str, float] = {}
    for given in paths or ["."]:
        if os.path.isfile(given):
            candidates = [given]
        else:
            candidates = []
            for folder, dirs, names in os.walk(given):
                dirs[:] = [d for d in dirs if d not in DEFAULT_EXCLUDES and not d.startswith(".")]
                candidates += [os.path.join(folder, n) for n in names if n.endswith(SOURCE_SUFFIXES) or n == "pyproject.toml"]
        for path in candidates:
            try:
                seen[path] = os.stat(path).st_mtime_ns
            except OSError:
                continue
    return seen


def watch(args: list[str], paths: list[str], interval: float = 0.5) -> int:
    """Run ``ddpfix ARGS`` now and after each change; a check mode unless ARGS name one."""
    if not MODES & set(args):
        args = ["--check", *args]
    command = [sys.executable, "-m", "ddpfix", *args]
    clear = sys.stdout.isatty()
    try:
        while True:
            if clear:
                sys.stdout.write("\x1b[2J\x1b[H")
            sys.stdout.write(f"[{time.strftime('%H:%M:%S')}] ddpfix {' '.join(args)}\n")
            sys.stdout.flush()
            subprocess.run(command)
            before = snapshot(paths)
            sys.stdout.write("Watching for changes (Ctrl-C to stop)...\n")
            sys.stdout.flush()
            while snapshot(paths) == before:
                time.sleep(interval)
    except KeyboardInterrupt:
        return 0
