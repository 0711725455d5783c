"""Which files make the program: the project root of any path named.

The root is the folder of the nearest ``pyproject.toml``, ``setup.cfg``, ``setup.py`` or ``.git`` at
or above the path. Where there is none, the program is the folder of the named file (a lone
``train.py`` and the modules beside it are a whole program) or the named folder itself: a script
never runs code from folders above it without a package that says so. Every file of the root is read
for facts, including files left out of fixing.
"""

from __future__ import annotations

import functools
import os

#: Files whose folder is a project's root (as Ruff and Black look for their settings; ``.git``
#: ends a repository).
PROJECT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")


def marked_root(path: str) -> str | None:
    """The folder (a real path) of the nearest project marker at or above ``path``; None where no
    folder above it has one. Looked up from where the path is named (a symbolic link belongs to the
    project it lies in, not its target's)."""
    folder = os.path.abspath(path)
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    while True:
        if any(os.path.exists(os.path.join(folder, marker)) for marker in PROJECT_MARKERS):
            return os.path.realpath(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def program_root(path: str) -> str:
    """The root of the program ``path`` belongs to: ``marked_root``, else the named folder, else the
    folder of the named file."""
    return _program_root(os.path.abspath(path))


@functools.lru_cache(maxsize=4096)
def _program_root(absolute: str) -> str:
    marked = marked_root(absolute)
    if marked is not None:
        return marked
    return os.path.realpath(absolute if os.path.isdir(absolute) else os.path.dirname(absolute))
