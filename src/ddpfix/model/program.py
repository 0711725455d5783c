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
import re

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


# --- which files of a program can run in one process ----------------------------------------------

# ``import a.b, c as d`` and ``from a.b import x``: found as the word, then its line's start checked.
_IMPORT = re.compile(rb"(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[\w, \t]*(?:\\\r?\n[\w, \t]*)*)"
                     rb"|import[ \t]+([\w., \t]+))")
#: Words of code that imports modules it names at run time (hydra's ``_target_``, LightningCLI's
#: ``class_path``, importlib, runpy, exec): such a file may run any file of its program in its own
#: process. Not ``subprocess``: what it starts runs in another process, whose files are joined by
#: their own imports (a test suite that runs scripts would otherwise join every file of a project).
_DYNAMIC = (b"importlib", b"__import__", b"instantiate", b"LightningCLI", b"_target_", b"class_path", b"runpy",
            b"exec(")


def imported_modules(data: bytes) -> tuple[tuple[str, ...], bool]:
    """The last parts of the modules a file imports (``a.b`` -> ``b``; ``from . import x`` -> ``x``;
    ``from pkg import mod`` -> ``pkg`` and ``mod``, since ``mod`` may be a module), and whether it
    may import modules it names at run time."""
    found: set[str] = set()
    if b"import" in data:
        for match in _IMPORT.finditer(data):
            start = match.start()
            line_start = data.rfind(b"\n", 0, start) + 1
            if data[line_start:start].strip(b" \t") not in (b"", b"try:", b"else:"):
                continue
            if match.group(3) is not None:
                for part in match.group(3).split(b","):
                    words = part.split()
                    if words:
                        found.add(words[0].rsplit(b".", 1)[-1].decode("ascii", "replace"))
            else:
                module = match.group(1).lstrip(b".")
                if module:
                    found.add(module.rsplit(b".", 1)[-1].decode("ascii", "replace"))
                for part in match.group(2).strip(b"()").replace(b"\\", b" ").split(b","):
                    words = part.split()
                    if words:
                        found.add(words[0].decode("ascii", "replace"))
    dynamic = any(word in data for word in _DYNAMIC)
    return tuple(sorted(found)), dynamic


class ProcessGroups:
    """Files that may run in one process: the parts of the program's import graph (an edge from a
    file to every file of the run whose module key is a module it imports, matched by the last part
    of the name, so over-approximated), a file that imports at run time joined to every file.

    A hazard or a default-device switch in one file bears on another only if both can run in one
    process: a tutorial's ``IterableDataset`` says nothing of an unrelated tutorial's model."""

    def __init__(self, files: dict[str, tuple[str, tuple[str, ...], bool]]):
        """``files``: real path -> (module key, modules it imports, whether it imports at run time)."""
        self._parent: dict[str, str] = {path: path for path in files}
        by_key: dict[str, list[str]] = {}
        for path, (key, _modules, _dynamic) in files.items():
            by_key.setdefault(key, []).append(path)
        dynamic = [path for path, (_k, _m, is_dynamic) in files.items() if is_dynamic]
        for path, (_key, modules, _dynamic) in files.items():
            for module in modules:
                for other in by_key.get(module, ()):
                    self._join(path, other)
        everything = list(files)
        for path in dynamic:
            for other in everything:
                self._join(path, other)
            break  # one joins all: the others follow through it
        for path in dynamic[1:]:
            self._join(path, dynamic[0])

    def _find(self, path: str) -> str:
        while self._parent[path] != path:
            self._parent[path] = self._parent[self._parent[path]]
            path = self._parent[path]
        return path

    def _join(self, one: str, other: str) -> None:
        first, second = self._find(one), self._find(other)
        if first != second:
            self._parent[max(first, second)] = min(first, second)

    def group(self, path: str) -> str | None:
        """The representative of the file's group (files that may run together share it); None
        where the file is not one of the run."""
        return self._find(path) if path in self._parent else None

    def together(self, one: str, other: str) -> bool | None:
        """Whether the two files may run in one process; None where one is not a file of the run."""
        if one not in self._parent or other not in self._parent:
            return None
        return self._find(one) == self._find(other)
