"""Which settings govern each file, and what they exclude.

A file takes the nearest ``pyproject.toml`` at or above it with a ``[tool.ddpfix]`` table (as Ruff
does, and the language server), or the file ``--config`` names for every file; command-line flags
win over either. A run over two subprojects checks each file with its own rules, options and
excludes, so the result never depends on the order its paths are named in.

Exclude patterns are gitignore-style. Those of a ``pyproject.toml`` are anchored at its folder;
those of ``--exclude`` at the current directory (a pattern without a slash matches at any depth
either way).
"""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ddpfix.budget import describe_limit, limit_options
from ddpfix.config import LIMIT_KEYS, Config, ConfigError, apply_table, declares_settings, load
from ddpfix.records import record
from ddpfix.rules import UnknownRule, resolve, select_rules
from ddpfix.rules.base import Rule

if TYPE_CHECKING:
    from ddpfix.gitignore import GitIgnore


@record(frozen=True)
class Flags:
    """What the command line says (empty or None: it says nothing, the file decides)."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    log_mode: str | None = None
    unsafe_fixes: bool | None = None
    show_suppressed: bool = False
    config: str | None = None  # --config FILE: this file's table for every file
    extend_select: tuple[str, ...] = ()
    # The limits per file (docs/limits.md), as the flags give them (checked by budget.limit_options).
    max_file_size: str | None = None
    fix_time_budget: float | None = None
    fix_memory_budget: str | None = None
    preview: bool | None = None  # --preview: preview rules join ALL, prefixes and the default
    overrides: str = ""  # --config KEY=VALUE entries (TOML lines), over every table


class Settings:
    """The rules, rule options and excludes of the files one table (or none) governs."""

    def __init__(self, config: Config, flags: Flags):
        if flags.overrides:
            config = _overridden(config, flags.overrides)
        self.overrides = flags.overrides
        self.source = config.path  # None: the defaults (no table found)
        self.config = config
        try:
            # the table's own errors are the table's
            preview = self.preview = bool(config.preview if flags.preview is None else flags.preview)
            configured = select_rules(config.select, config.ignore, config.extend_select, preview)
        except UnknownRule as err:
            raise ConfigError(f"{config.path}: [tool.ddpfix] {err}") from err
        # A --select on the command line replaces the table's selection (and its extend-select);
        # ignores and extend-selects add up otherwise.
        if flags.select:
            self.rules = tuple(select_rules(flags.select, flags.ignore, flags.extend_select, preview))
        elif flags.ignore or flags.extend_select:
            self.rules = tuple(select_rules(config.select, [*config.ignore, *flags.ignore],
                                            [*config.extend_select, *flags.extend_select], preview))
        else:
            self.rules = tuple(configured)
        self.options: Mapping[str, object] = {
            "log_mode": flags.log_mode or config.log_mode or "auto",
            "show_suppressed": flags.show_suppressed,
            "unsafe_fixes": bool(config.unsafe_fixes if flags.unsafe_fixes is None else flags.unsafe_fixes),
            **limit_options(config, flags.max_file_size, flags.fix_time_budget, flags.fix_memory_budget),
        }
        self._narrowed: dict[frozenset, Settings] = {}
        self._per_file = [(pattern, _spec([pattern]), tuple(codes)) for pattern, codes in config.per_file_ignores.items()]
        for pattern, _, codes in self._per_file:
            unknown = [code for code in codes if not resolve(code)]
            if unknown:
                raise ConfigError(f"{config.path}: [tool.ddpfix] per-file-ignores {pattern!r}: no rule is called "
                                  f"{', '.join(map(repr, unknown))}")
        # --exclude replaces the table's ``exclude``; ``extend-exclude`` always adds to it.
        base = os.path.dirname(os.path.abspath(config.path)) if config.path else os.getcwd()
        own = [*([] if flags.exclude else config.exclude), *config.extend_exclude]
        self._patterns: list[tuple[str | None, list[str], GitIgnore]] = [
            (where, patterns, _spec(patterns))
            for where, patterns in ((base, own), (None, list(flags.exclude)))
            if patterns
        ]

    def for_file(self, path: str) -> "Settings":
        """These settings for one file: without the rules its ``per-file-ignores`` patterns name."""
        if not self._per_file:
            return self
        relative = _relative(path, os.path.dirname(os.path.abspath(self.source)))
        ignored = {rule for pattern, spec, codes in self._per_file
                   if relative is not None and spec.match_file(relative) for code in codes for rule in resolve(code)}
        if not ignored:
            return self
        key = frozenset(ignored)
        if key not in self._narrowed:  # one object per set of ignores: the run groups files by it
            narrowed = self._narrowed[key] = copy.copy(self)
            narrowed.rules = tuple(rule for rule in self.rules if rule not in ignored)
        return self._narrowed[key]

    @property
    def key(self) -> tuple:
        """Files with equal keys are checked together (same rules, same options)."""
        return (tuple(rule.code for rule in self.rules), tuple(sorted(self.options.items())))

    def excluded(self, path: str, is_dir: bool, spare: str | None = None) -> str | None:
        """Why ``path`` is excluded (the pattern and where it was set), or None. ``spare``: a folder
        named on the command line that is itself excluded: the patterns that exclude it do not
        exclude what is inside it either (it is checked because it was named, as Ruff does)."""
        for where, patterns, spec in self._patterns if spare is None else self._specs(spare):
            relative = _relative(path, where)
            if relative is None:
                continue
            verdict = spec.check_file(relative + "/" if is_dir else relative)
            if verdict.include:
                origin = os.path.relpath(self.source) if where is not None and self.source else "--exclude"
                return f'pattern "{patterns[verdict.index]}" of {origin}'
        return None

    @functools.lru_cache(maxsize=8)  # noqa: B019 - a handful of settings objects per run
    def _specs(self, spare: str | None):
        if spare is None:
            return self._patterns
        kept = []
        for where, patterns, _ in self._patterns:
            relative = _relative(spare, where)
            left = [p for p in patterns if relative is None or not _spec([p]).match_file(relative + "/")]
            if left:
                kept.append((where, left, _spec(left)))
        return kept

    def describe(self) -> list[str]:
        """The settings as ``--show-settings`` prints them, one ``key = value`` a line."""
        exclude = [p for where, patterns, _ in self._patterns for p in patterns]
        return [
            f"settings from: {os.path.relpath(self.source) if self.source else 'defaults (no pyproject.toml with [tool.ddpfix])'}"
            + (f", then --config {'; '.join(self.overrides.splitlines())}" if self.overrides else ""),
            f"rules = [{', '.join(rule.code for rule in self.rules)}]",
            f"log-mode = {self.options['log_mode']}",
            f"unsafe-fixes = {str(self.options['unsafe_fixes']).lower()}",
            f"preview = {str(bool(self.preview)).lower()}",
            f"exclude = [{', '.join(repr(p) for p in exclude)}]",
            f"jobs = {self.config.jobs if self.config.jobs is not None else 'one per CPU'}",
            *(f"{key} = {describe_limit(key, self.options.get(key.replace('-', '_')))}" for key in LIMIT_KEYS),
            *([f"per-file-ignores = {{{', '.join(f'{p!r}: {list(c)}' for p, _, c in self._per_file)}}}"]
              if self._per_file else []),
        ]


def _overridden(config: Config, overrides: str) -> Config:
    """``config`` with the ``--config KEY=VALUE`` settings on top (checked as a table's keys)."""
    import copy
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    config = copy.deepcopy(config)
    apply_table(config, tomllib.loads(overrides), "--config")
    return config


def _spec(lines: Sequence[str]) -> GitIgnore:
    from ddpfix.gitignore import GitIgnore  # loaded where patterns are read: most runs have none

    return GitIgnore.from_lines(lines)


def _relative(path: str, base: str | None) -> str | None:
    """``path`` as a pattern anchored at ``base`` sees it (None: outside it). ``base`` None: the
    current directory, where a path outside it is matched as given (``--exclude``, as before)."""
    relative = os.path.relpath(path) if base is None else os.path.relpath(os.path.abspath(path), base)
    if relative.startswith(".."):
        if base is not None:
            return None
        relative = path
    return relative.replace(os.sep, "/")


class Resolver:
    """Settings for any path of a run, read once per table and looked up once per folder."""

    def __init__(self, flags: Flags, tables: bool = True):
        self.flags = flags
        self.tables = tables  # False: no pyproject.toml is read (the flags alone)
        self._tables: dict[str | None, Settings] = {}
        self._table_of_folder: dict[str, str | None] = {}

    def for_path(self, path: str) -> Settings:
        """The settings governing a file (or a folder's own contents)."""
        folder = os.path.abspath(path)
        if not os.path.isdir(folder):
            return self.for_folder(os.path.dirname(folder)).for_file(folder)
        return self.for_folder(folder)

    def for_folder(self, folder: str) -> Settings:
        table = self.flags.config or (self._nearest(os.path.abspath(folder)) if self.tables else None)
        if table not in self._tables:
            self._tables[table] = Settings(load(table), self.flags)
        return self._tables[table]

    def for_walked(self, folder: str, names: Sequence[str]) -> Settings:
        """``for_folder`` for a folder a walk lists (``names``, its entries) below one it listed
        before: a folder without a pyproject.toml takes its parent's table without a look."""
        folder = os.path.abspath(folder)
        if folder not in self._table_of_folder and "pyproject.toml" not in names:
            parent = os.path.dirname(folder)
            if parent in self._table_of_folder:
                self._table_of_folder[folder] = self._table_of_folder[parent]
        return self.for_folder(folder)

    def _nearest(self, folder: str) -> str | None:
        known = self._table_of_folder.get(folder, False)
        if known is not False:
            return known
        candidate = os.path.join(folder, "pyproject.toml")
        parent = os.path.dirname(folder)
        found = candidate if declares_settings(candidate) else None if parent == folder else self._nearest(parent)
        self._table_of_folder[folder] = found
        return found

    def groups(self, files: Sequence[str]) -> list[tuple[Settings, list[str]]]:
        """``files`` split by the settings they are checked with, in order of first appearance;
        each group's files in the order given."""
        by_key: dict[tuple, tuple[Settings, list[str]]] = {}
        for path in files:
            settings = self.for_folder(os.path.dirname(os.path.abspath(path))).for_file(os.path.abspath(path))
            by_key.setdefault(settings.key, (settings, []))[1].append(path)
        return list(by_key.values())
