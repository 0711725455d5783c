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
(``analysis.lightning``'s ``defined_elsewhere``), so ``from timm.layers import Block`` is not the
project's own ``Block``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from ddpfix.lazy_regex import lazy_compile
from ddpfix.records import record

#: The root class of each kind, by name (Lightning's, torchmetrics').
KINDS = ("LightningModule", "LightningDataModule", "Callback", "Metric", "MetricCollection", "DistributedSampler",
         "Dataset")
#: Kinds whose members a rule trusts (a torchmetrics object syncs itself: its log is not reported),
#: so a name is claimed only where no other class of that name and module could be meant.
_CLAIMED_ONLY_WHEN_SURE = frozenset({"Metric", "MetricCollection"})

# ``class`` first (a literal the regex engine searches fast), the line start checked after a match.
_CLASS = lazy_compile(rb"class[ \t]+(\w+)[ \t]*(?:\(([^)]*)\)|(?=:))")
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


def _bracketed(data: bytes, start: int) -> bytes:
    """The text from ``start`` (just inside an opening parenthesis) to its closing one, comments
    and strings skipped (review helper-52, f1e2); a base that cannot be read is left as ``?``."""
    depth, position, out = 1, start, bytearray()
    while position < len(data):
        char = data[position:position + 1]
        if char == b"#":
            end = data.find(b"\n", position)
            position = len(data) if end < 0 else end
            continue
        if char in (b"'", b'"'):
            end = data.find(char, position + 1)
            if end < 0:
                return b"?"
            out += b"?"  # a string in a base list: not a class name
            position = end + 1
            continue
        if char == b"(":
            depth += 1
        elif char == b")":
            depth -= 1
            if depth == 0:
                return bytes(out)
        out += char
        position += 1
    return b"?"


def _top_level_parts(listed: bytes) -> list[bytes]:
    """The comma-separated parts of a base list, commas inside brackets kept (``Base[A, B]``,
    ``make(a, b)``: a call's result, read as ``?``)."""
    parts, depth, current = [], 0, bytearray()
    for byte in listed:
        char = bytes([byte])
        if char in (b"(", b"["):
            depth += 1
        elif char in (b")", b"]"):
            depth -= 1
        if char == b"," and depth == 0:
            parts.append(bytes(current))
            current = bytearray()
            continue
        current += char
    parts.append(bytes(current))
    return [b"?" if b"(" in part else part for part in parts]


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
        listed = match.group(2) or b""
        if b"#" in listed or b"(" in listed:
            # A comment or a call in the list (``class Printer(  # (Config first)`` then the
            # bases): the regex stopped at a ``)`` inside it. Read the whole list by its brackets.
            listed = _bracketed(data, match.start(2)) if match.group(2) is not None else listed
        for part in _top_level_parts(listed):
            part = part.strip()
            if not part or b"=" in part:
                continue
            dotted = part.split(b"[", 1)[0].strip().decode("ascii", "replace")  # ``Base[Config]``: its class
            head, _, last = dotted.rpartition(".")
            names.append(aliases.get(last, last) if not head else last)
        found.append((match.group(1).decode("ascii", "replace"), tuple(names)))
        position = match.end()


@record(frozen=True)
class Kinds:
    """What ``resolve_kinds`` answers for one kind."""

    #: The project's classes of the kind -> the module keys by which a file can import one.
    reach: dict[str, frozenset[str]]
    #: Per file (real path): the names it imports, by a relative import, from a file of the run that
    #: defines a class of that name which is *not* of the kind (``from .system import System`` of a
    #: plain class while another folder's ``System`` is a LightningModule): not this kind there.
    shadowed: dict[str, frozenset[str]]


def _relative_file(importer: str, module: str, known: set[str]) -> str | None:
    """The file of the run a relative import names (``.system`` beside the importer, ``..pkg.mod``)."""
    dots = len(module) - len(module.lstrip("."))
    folder = os.path.dirname(importer)
    for _ in range(dots - 1):
        folder = os.path.dirname(folder)
    rest = module[dots:].replace(".", os.sep)
    for candidate in (os.path.join(folder, rest + ".py"), os.path.join(folder, rest, "__init__.py")):
        if rest and candidate in known:
            return candidate
    return None


def resolve_kinds(files: Iterable[tuple[str, Sequence[tuple[str, tuple[str, ...]]], Sequence[Import]]]
                  ) -> dict[str, Kinds]:
    """For each kind of ``KINDS``: the project's classes of that kind (``Kinds``). ``files``: (path,
    its classes, its from-imports) for every file of the run.

    A class is identified by its file and name: a base imported by a relative import from a file of
    the run is that file's class; any other base is matched by name across the run (an
    over-approximation: two classes of one name in unrelated folders are not told apart)."""
    files = [(os.path.realpath(path), classes, imports) for path, classes, imports in files]
    known = {path for path, _, _ in files}
    defined = {(path, name) for path, classes, _ in files for name, _ in classes}
    relative: dict[str, dict[str, tuple[str, str]]] = {}  # file -> local name -> (file, name) it is
    for path, _classes, imports in files:
        for module, name, local in imports:
            if module.startswith(".") and name != "*":
                target = _relative_file(path, module, known)
                if target is not None and (target, name) in defined:
                    relative.setdefault(path, {})[local] = (target, name)
    found: dict[str, Kinds] = {}
    for kind in KINDS:
        members: set[tuple[str, str]] = set()  # (file, class name)
        names: set[str] = set()  # the names of members, and names re-exported for one

        def is_member(path: str, base: str) -> bool:
            if base == kind:
                return True
            if base in relative.get(path, {}):
                return relative[path][base] in members
            if (path, base) in defined:
                return (path, base) in members
            return base in names

        reach: dict[str, set[str]] = {}
        grew = True
        while grew:
            grew = False
            for path, classes, _imports in files:
                for name, bases in classes:
                    if (path, name) not in members and any(is_member(path, base) for base in bases):
                        members.add((path, name))
                        names.add(name)
                        reach.setdefault(name, set()).add(module_key(path))
                        grew = True
            for path, _classes, imports in files:  # re-exports, under their own or another name
                key = module_key(path)
                for module, name, local in imports:
                    source = module.rsplit(".", 1)[-1] or None
                    if source is None and not module.startswith("."):
                        continue
                    # ``from .base import *`` re-exports every class of .base under its own name.
                    exports = [(n, n) for n, where in reach.items() if source in where] if name == "*" else [(name, local)]
                    for exported, as_name in exports:
                        if exported not in reach or (source is not None and source not in reach[exported]):
                            continue
                        if (path, as_name) in defined or relative.get(path, {}).get(as_name, (None, None)) not in (*members, (None, None)):
                            continue  # the file's own class of that name, or a relative import of a non-member
                        into = reach.setdefault(as_name, set())
                        if key not in into:
                            into.add(key)
                            grew = True
                        if as_name not in names:  # ``import LitSystem as System``: subclasses of System
                            names.add(as_name)
                            grew = True
        if kind in _CLAIMED_ONLY_WHEN_SURE:
            # Another file of the same module name defines a class of that name that is not one (a
            # gitignored code snapshot's ``RunningMean(Metric)`` beside the project's
            # ``RunningMean(nn.Module)``: review helper-43, c08): which one an import means is not
            # known, so the name is not claimed through that module.
            for path, classes, _imports in files:
                for name, _bases in classes:
                    if (path, name) not in members and name in reach:
                        reach[name].discard(module_key(path))
            reach = {name: where for name, where in reach.items() if where}
        shadowed = {path: frozenset(local for local, target in locals_.items() if target not in members)
                    for path, locals_ in relative.items()}
        found[kind] = Kinds({name: frozenset(where) for name, where in reach.items()},
                            {path: names_ for path, names_ in shadowed.items() if names_})
    return found
