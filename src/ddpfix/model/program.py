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
#: Code that imports modules it names at run time, as calls (a word in a comment or a docstring,
#: "simply instantiate the class", runs nothing): hydra's ``instantiate``/``call``/``get_class``,
#: LightningCLI (its ``class_path``), importlib's loaders, ``__import__``, runpy, ``exec``. Such a file
#: may run any file of its program in its own process. Not ``subprocess``: what it starts runs in
#: another process, whose files are joined by their own imports (a test suite that runs scripts would
#: otherwise join every file of a project). Not ``importlib.metadata``: it reads versions, no code.
_DYNAMIC_CALL = re.compile(
    rb"(?<![\w.])(?:hydra\.utils\.)?(?:instantiate|get_class|get_method|LightningCLI|CLI|__import__|exec"
    rb"|spec_from_file_location|SourceFileLoader|load_source|run_path|run_module|exec_module)[ \t]*\("
    rb"|\.(?:instantiate|get_class|get_method|run_path|run_module|exec_module|spec_from_file_location)[ \t]*\(")
#: ``import_module(`` with what follows: a literal module ("a.b.c": an import like any other), a
#: literal package prefix ("a.b." + name, f"a.b.{name}": only modules of that package), or anything.
_IMPORT_MODULE = re.compile(rb"(?<![\w])import_module[ \t]*\([ \t]*(f?)(['\"])([\w.]*)(\{|\2[ \t]*(\+|[,)]))?")
#: A dynamic import of any module of the program.
ANY_MODULE = ""


def _in_comment(data: bytes, start: int) -> bool:
    line_start = data.rfind(b"\n", 0, start) + 1
    return b"#" in data[line_start:start]


def dynamic_imports(data: bytes) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(modules a literal ``import_module("a.b")`` names, package prefixes of the modules the file
    may import at run time: ``ANY_MODULE`` for any module, ``"a.b"`` for the modules of ``a.b``)."""
    literal: set[str] = set()
    prefixes: set[str] = set()
    for match in _DYNAMIC_CALL.finditer(data):
        if not _in_comment(data, match.start()):
            return (), (ANY_MODULE,)
    if b"import_module" in data:
        for match in re.finditer(rb"(?<![\w])import_module[ \t]*\(", data):
            if _in_comment(data, match.start()):
                continue
            shaped = _IMPORT_MODULE.match(data, match.start())
            text = shaped.group(3).decode("ascii", "replace") if shaped is not None else ""
            ending = shaped.group(4) if shaped is not None else None
            if shaped is None or not text or text.startswith(".") or ending is None:
                return (), (ANY_MODULE,)  # a name, a relative module, a string built otherwise
            if not shaped.group(1) and ending.endswith((b",", b")")) and not ending.endswith(b"+"):
                literal.add(text)
                continue
            package = text.rsplit(".", 1)[0] if "." in text else ""
            if not package:
                return (), (ANY_MODULE,)
            prefixes.add(package)
    return tuple(sorted(literal)), tuple(sorted(prefixes))


def imported_modules(data: bytes) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The last parts of the modules a file imports (``a.b`` -> ``b``; ``from . import x`` -> ``x``;
    ``from pkg import mod`` -> ``pkg`` and ``mod``, since ``mod`` may be a module; a literal
    ``import_module("a.b")`` -> ``b``), and the packages whose modules it may import at run time
    (``dynamic_imports``; empty: none)."""
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
    literal, dynamic = dynamic_imports(data)
    found.update(module.rsplit(".", 1)[-1] for module in literal)
    return tuple(sorted(found)), dynamic


def _in_package(path: str, package: str) -> bool:
    """The file at ``path`` (a real path) may be a module of the dotted ``package``."""
    folder = "/" + package.replace(".", "/")
    return f"{folder}/" in path.replace(os.sep, "/") or path.replace(os.sep, "/").endswith(f"{folder}.py")


class ProcessGroups:
    """Files that may run in one process: the parts of the program's import graph (an edge from a
    file to every file of the run whose module key is a module it imports, matched by the last part
    of the name, so over-approximated), a file that imports at run time joined to every file it may
    import (every file of the run, or those of the packages its literal prefixes name).

    A hazard or a default-device switch in one file bears on another only if both can run in one
    process: a tutorial's ``IterableDataset`` says nothing of an unrelated tutorial's model."""

    def __init__(self, files: dict[str, tuple[str, tuple[str, ...], bool]]):
        """``files``: real path -> (module key, modules it imports, the packages whose modules it may
        import at run time: ``imported_modules``)."""
        self._parent: dict[str, str] = {path: path for path in files}
        by_key: dict[str, list[str]] = {}
        for path, (key, _modules, _dynamic) in files.items():
            by_key.setdefault(key, []).append(path)
        anything = [path for path, (_k, _m, packages) in files.items() if ANY_MODULE in packages]
        for path, (_key, modules, packages) in files.items():
            for module in modules:
                for other in by_key.get(module, ()):
                    self._join(path, other)
            for package in set(packages) - {ANY_MODULE}:
                for other in files:
                    if _in_package(other, package):
                        self._join(path, other)
        everything = list(files)
        for path in anything:
            for other in everything:
                self._join(path, other)
            break  # one joins all: the others follow through it
        for path in anything[1:]:
            self._join(path, anything[0])

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
