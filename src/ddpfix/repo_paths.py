"""Paths as CI services want them: relative to the root of the repository, not the current folder.

GitHub code scanning, GitHub annotations and GitLab's Code Quality widget match a reported path to
a file of the repository; a path relative to the current folder only matches when ddpfix runs from
the root. So the machine formats for CI (sarif, github, gitlab) name files relative to the git
root: the nearest folder at or above the current one that holds ``.git`` (a folder, or the file a
worktree or submodule has). Outside any repository the current folder stands in for the root. A
file outside the root keeps its absolute path (each format says how it shows one).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def _root_of(cwd: str) -> Path:
    folder = Path(cwd)
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


def repository_root() -> Path:
    """The git root above the current folder, or the current folder outside any repository."""
    return _root_of(os.path.realpath(os.getcwd()))


def repository_path(path: str) -> str | None:
    """``path`` relative to ``repository_root()`` with ``/`` separators, or None when it lies outside."""
    root = str(repository_root())
    # The path as named first (a symlink inside the repository is its own file there), then with
    # links resolved (a root reached through a linked folder).
    for absolute in (os.path.abspath(path), os.path.realpath(path)):
        if absolute == root or absolute.startswith(root.rstrip(os.sep) + os.sep):
            return os.path.relpath(absolute, root).replace(os.sep, "/")
    return None


def ci_path(path: str) -> str:
    """How a CI format names a file: from the repository's root, else absolute (stdin stays ``-``)."""
    if path == "-":
        return path
    relative = repository_path(path)
    return relative if relative is not None else os.path.abspath(path)
