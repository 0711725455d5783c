"""Settings from ``[tool.ddpfix]`` in the nearest ``pyproject.toml``; command-line flags win.

Keys: ``select``, ``extend-select``, ``ignore``, ``exclude``, ``extend-exclude`` (lists of strings), ``log-mode``
(``auto`` | ``rank-zero-only`` | ``sync-dist``), ``jobs`` (a positive integer) and ``unsafe-fixes``
(a boolean: also apply the fixes not proven safe, as ``--unsafe-fixes``), ``preview`` (a boolean: the
preview rules join the default selection, as ``--preview``); the limits per file
``max-file-size``, ``fix-time-budget``, ``fix-memory-budget`` (docs/limits.md); ``per-file-ignores``
(a table: gitignore-style pattern, relative to the table's folder -> codes, prefixes or names the
files it matches skip, as Ruff's). An unknown key or
rule, or a value of the wrong type, is an error that names the key and the file.
"""

from __future__ import annotations

import os
import sys
from dataclasses import field

from ddpfix.records import record

LOG_MODES = ("auto", "rank-zero-only", "sync-dist")
LIST_KEYS = ("select", "ignore", "exclude", "extend-exclude", "extend-select")
LIMIT_KEYS = ("max-file-size", "fix-time-budget", "fix-memory-budget")  # checked by budget.limit_setting


class ConfigError(Exception):
    pass


@record
class Config:
    path: str | None = None
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    extend_exclude: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    log_mode: str | None = None
    jobs: int | None = None
    unsafe_fixes: bool | None = None
    preview: bool | None = None
    max_file_size: int | None = None
    fix_time_budget: float | None = None
    fix_memory_budget: int | None = None
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)


def find_pyproject(start: str) -> str | None:
    """The nearest pyproject.toml at or above ``start`` (a file or a folder) with a [tool.ddpfix]
    table, as Ruff and Black look for theirs."""
    folder = os.path.abspath(start)
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if declares_settings(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def declares_settings(candidate: str) -> bool:
    """Whether the file ``candidate`` (a pyproject.toml) has a [tool.ddpfix] table: the one test of
    which pyproject.toml governs a file (``find_pyproject``, ``settings.Resolver``)."""
    try:
        with open(candidate, "rb") as handle:
            return b"[tool.ddpfix" in handle.read()
    except OSError:
        return False


def load(path: str | None) -> Config:
    if path is None:
        return Config()
    # Loaded for a [tool.ddpfix] table only (``find_pyproject``): most runs find none (start-up time).
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as handle:
            document = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"{path}: cannot read: {err}") from err
    section = document.get("tool", {}).get("ddpfix", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.ddpfix] must be a table")
    config = Config(path=path)
    apply_table(config, section, f"{path}: [tool.ddpfix]")
    return config


def apply_table(config: Config, section: dict, where: str) -> None:
    """Set ``config`` from a ``[tool.ddpfix]`` table (or ``--config KEY=VALUE`` overrides): each key
    checked, an error naming ``where`` and the key."""
    for key, value in section.items():
        if key in LIST_KEYS:
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where} {key} must be a list of strings")
            setattr(config, key.replace("-", "_"), list(value))
        elif key == "log-mode":
            if value not in LOG_MODES:
                raise ConfigError(f"{where} log-mode must be one of {', '.join(LOG_MODES)}, not {value!r}")
            config.log_mode = value
        elif key == "jobs":
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{where} jobs must be a positive integer")
            config.jobs = value
        elif key == "unsafe-fixes":
            if not isinstance(value, bool):
                raise ConfigError(f"{where} unsafe-fixes must be true or false")
            config.unsafe_fixes = value
        elif key == "preview":
            if not isinstance(value, bool):
                raise ConfigError(f"{where} preview must be true or false")
            config.preview = value
        elif key == "per-file-ignores":
            if not isinstance(value, dict) or not all(
                    isinstance(codes, list) and all(isinstance(c, str) for c in codes) for codes in value.values()):
                raise ConfigError(f"{where} per-file-ignores must map patterns to lists of rule codes")
            config.per_file_ignores = {pattern: list(codes) for pattern, codes in value.items()}
        elif key in LIMIT_KEYS:
            from ddpfix.budget import limit_setting

            try:
                setattr(config, key.replace("-", "_"), limit_setting(key, value))
            except ValueError as err:
                raise ConfigError(f"{where} {err}") from err
        else:
            known = ", ".join((*LIST_KEYS, "log-mode", "jobs", "unsafe-fixes", "preview", "per-file-ignores", *LIMIT_KEYS))
            raise ConfigError(f"{where}: unknown key {key!r} (known: {known})")
