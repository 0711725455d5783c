"""What the interpreter running ddpfix has installed, read from the distributions' metadata files on
``sys.path`` (``*.dist-info``, ``*.egg-info``), never imported.

``importlib.metadata`` answers the same questions, but importing it (and the ``email`` parser it
reads metadata with) costs about a sixth of a one-file ``--check`` run; a folder listing and a few
small files cost almost nothing. It is still the answer where the path holds what this reader does
not follow: a zip or egg file on ``sys.path``, or a finder on ``sys.meta_path`` that serves
distributions of its own (``find_distributions``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator

#: The finders whose distributions are the folders of ``sys.path`` (the standard path finder, and
#: importers of built-in and frozen modules, which serve none).
_STANDARD_FINDERS = frozenset({"BuiltinImporter", "FrozenImporter", "PathFinder"})


def _normal(name: str) -> str:
    """A distribution's name as its metadata folder spells it (PEP 503, with ``_``)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _plain_path() -> bool:
    """Every distribution the interpreter can see lies in a folder of ``sys.path``."""
    finders = [type(f).__name__ if not isinstance(f, type) else f.__name__ for f in sys.meta_path]
    if any(name not in _STANDARD_FINDERS and hasattr(finder, "find_distributions")
           for name, finder in zip(finders, sys.meta_path)):
        return False
    return not any(entry and os.path.isfile(entry) for entry in sys.path)


def _metadata_folders() -> Iterator[tuple[str, str]]:
    """(normalised name, folder) of each distribution's metadata on ``sys.path``, in its order
    (the first of a name is the one imported)."""
    for entry in sys.path:
        folder = entry or os.getcwd()
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                yield _normal(name.rsplit(".", 1)[0].split("-", 1)[0]), os.path.join(folder, name)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def _field(metadata: str, field: str) -> str | None:
    """The first ``Field: value`` header of a metadata file (its headers end at the first blank line)."""
    for line in metadata.splitlines():
        if not line.strip():
            return None
        key, _, value = line.partition(":")
        if key.strip().lower() == field.lower():
            return value.strip()
    return None


def _metadata_of(folder: str) -> str:
    if os.path.isfile(folder):  # an ``.egg-info`` file is the metadata itself
        return _read(folder)
    return _read(os.path.join(folder, "METADATA" if folder.endswith(".dist-info") else "PKG-INFO"))


def version(package: str) -> str | None:
    """The version of the installed distribution ``package``; None where none is installed."""
    if not _plain_path():
        from importlib import metadata

        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return None
    wanted = _normal(package)
    for name, folder in _metadata_folders():
        if name == wanted:
            return _field(_metadata_of(folder), "Version")
    return None


def entry_point_providers(groups: tuple[str, ...]) -> tuple[str, ...]:
    """The names of the installed distributions that declare entry points in one of ``groups``."""
    if not _plain_path():
        from importlib import metadata

        found = []
        for distribution in metadata.distributions():
            try:
                points = distribution.entry_points
            except Exception:  # a broken distribution's metadata: it declares nothing readable
                continue
            if any(point.group in groups for point in points):
                found.append(distribution.metadata.get("Name") or "?")
        return tuple(sorted(set(found)))  # (a distribution seen through two path entries is one)
    found = set()
    for _name, folder in _metadata_folders():
        points = _read(os.path.join(folder, "entry_points.txt")) if os.path.isdir(folder) else ""
        if _declares(points, groups):
            found.add(_field(_metadata_of(folder), "Name") or "?")
    return tuple(sorted(found))


def _declares(points: str, groups: tuple[str, ...]) -> bool:
    """An ``entry_points.txt`` names an entry point (``name = module:object``) in one of ``groups``
    (an empty section declares none)."""
    section = None
    for raw in points.splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif line and not line.startswith(("#", ";")) and "=" in line and section in groups:
            return True
    return False
