"""Classes across files: which classes of the project are LightningModules, DataModules, Callbacks,
torchmetrics Metrics and MetricCollections, and DistributedSamplers (which Lightning does not wrap).

Read by the facts pass without a parse (a regex over ``class X(...)`` lines and ``from ... import``
statements), so it costs little on a big tree. A class is of a kind when a base is that kind's root
(``LightningModule``, ...) or a class of that kind, whatever file defines it; a base imported under
another name (``from .base import System as Base``) is read by its own name.

How another file can name a class: by its defining module (``from pkg.system import System``: the
module key ``system``), or through any module that imports it (a package ``__init__`` re-exporting
it: ``from pkg import System``, key ``pkg``). ``module_keys`` gives, per class name, the keys by which
a file can reach one of the project's classes of a kind; a rule resolves an import to such a key
(``analysis.lightning``'s ``_defined_elsewhere``), so ``from timm.layers import Block`` is not the
project's own ``Block``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from ddpfix.lazy_regex import lazy_compile

#: The root class of each kind, by name (Lightning's, torchmetrics').
KINDS = ("LightningModule", "LightningDataModule", "Callback", "Metric", "MetricCollection", "DistributedSampler")

# ``class`` first (a literal the regex engine searches fast), the line start checked after a match.
_CLASS = lazy_compile(rb"class[ \t]+(\w+)[ \t]*\(([^)]*)\)")
# ``X as Y`` inside an import statement's names (the statement itself is found by ``_FROM``).
_ALIAS = lazy_compile(rb"(\w+)[ \t]+as[ \t]+(\w+)")
# ``from <module> import <names>``: the names up to the end of the line, or inside parentheses.
_FROM = lazy_compile(rb"from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[^\n#;]*(?:\\\r?\n[^\n#;]*)*)")
_IMPORT_AS = lazy_compile(rb"import[ \t]+[\w.]+[ \t]+as[ \t]+\w+(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*")

Import = tuple[str, str, str]  # (the module as written, with its leading dots; a name; the local name)


def module_key(path: str) -> str:
    """The last part of the module name a file is imported by: its stem, or its package's name for
    a package ``__init__``."""
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem == "__init__":
        return os.path.basename(os.path.dirname(os.path.abspath(path)))
    return stem


def _at_line_start(data: bytes, start: int) -> bool:
    line_start = data.rfind(b"\n", 0, start) + 1
    return not data[line_start:start].strip(b" \t")


def from_imports(data: bytes) -> list[Import]:
    """Every ``from module import name [as local]`` of the text (any indentation: an import in a
    ``try`` block counts), each name with the module it is read from."""
    found: list[Import] = []
    if b"import" not in data:
        return found
    position = 0
    while True:
        match = _FROM.search(data, position)
        if match is None:
            return found
        position = match.end()
        if not _at_line_start(data, match.start()):
            continue
        module = match.group(1).decode("ascii", "replace")
        names = match.group(2).strip(b"()").replace(b"\\", b" ")
        for part in names.split(b","):
            words = part.split()
            if len(words) == 1:  # ``*`` too: every public name of the module
                found.append((module, words[0].decode("ascii", "replace"), words[0].decode("ascii", "replace")))
            elif len(words) == 3 and words[1] == b"as":
                found.append((module, words[0].decode("ascii", "replace"), words[2].decode("ascii", "replace")))


def class_bases(data: bytes) -> list[tuple[str, tuple[str, ...]]]:
    """(class name, last names of its bases) for each ``class X(...)`` line: a regex, no parse.
    A base the file imports under another name is given by its own name (``LM`` is
    ``LightningModule`` after ``from lightning import LightningModule as LM``)."""
    found = []
    aliases: dict[str, str] = {}
    if b" as " in data or b"\tas" in data:
        for _module, name, local in from_imports(data):
            if local != name:
                aliases[local] = name
        for match in _IMPORT_AS.finditer(data):  # ``import lightning.pytorch as pl``: pl.X is X anyway
            for alias in _ALIAS.finditer(match.group()):
                aliases.setdefault(alias.group(2).decode("ascii", "replace"), alias.group(1).decode("ascii", "replace"))
    position = 0
    while True:
        match = _CLASS.search(data, position)
        if match is None:
            return found
        start = match.start()
        if not _at_line_start(data, start):
            position = start + 1  # ``subclass X(`` in a comment: not a class statement
            continue
        names = []
        for part in match.group(2).split(b","):
            part = part.strip()
            if not part or b"=" in part:
                continue
            dotted = part.split(b"[", 1)[0].strip().decode("ascii", "replace")  # ``Base[Config]``: its class
            head, _, last = dotted.rpartition(".")
            names.append(aliases.get(last, last) if not head else last)
        found.append((match.group(1).decode("ascii", "replace"), tuple(names)))
        position = match.end()


def resolve_kinds(files: Iterable[tuple[str, Sequence[tuple[str, tuple[str, ...]]], Sequence[Import]]]
                  ) -> dict[str, dict[str, frozenset[str]]]:
    """For each kind of ``KINDS``: the project's classes of that kind -> the module keys by which a
    file can import one (``module_keys`` of the module docstring). ``files``: (path, its classes,
    its from-imports) for every file of the run."""
    files = list(files)
    bases: dict[str, set[str]] = {}
    keys: dict[str, set[str]] = {}
    for path, classes, _imports in files:
        key = module_key(path)
        for name, names in classes:
            bases.setdefault(name, set()).update(names)
            keys.setdefault(name, set()).add(key)
    found: dict[str, dict[str, frozenset[str]]] = {}
    for kind in KINDS:
        members = {name for name, names in bases.items() if kind in names}
        reach: dict[str, set[str]] = {}
        grew = True
        while grew:
            grew = False
            for name, names in bases.items():  # derivation across files, by class name
                if name not in members and names & members:
                    members.add(name)
                    grew = True
            for name in members:
                if name not in reach:
                    reach[name] = set(keys.get(name, ()))
            for path, _classes, imports in files:  # re-exports, under their own or another name
                key = module_key(path)
                for module, name, local in imports:
                    source = module.rsplit(".", 1)[-1] or None
                    if source is None and not module.startswith("."):
                        continue
                    # ``from .base import *`` re-exports every class of .base under its own name.
                    names = [(n, n) for n, where in reach.items() if source in where] if name == "*" else [(name, local)]
                    for exported, as_name in names:
                        if exported not in reach or (source is not None and source not in reach[exported]):
                            continue
                        into = reach.setdefault(as_name, set())
                        if key not in into:
                            into.add(key)
                            grew = True
                        if as_name not in members:  # ``import LitSystem as System``: subclasses of System
                            members.add(as_name)
                            grew = True
        found[kind] = {name: frozenset(where) for name, where in reach.items()}
    return found
