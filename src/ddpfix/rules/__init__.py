"""The rules: one module per rule, registered by being in this package."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Sequence

from ddpfix.rules.base import Rule


@functools.cache
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class defined in this package's modules, in code order."""
    found: dict[str, type[Rule]] = {}
    names: set[str] = set()
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and value.__module__ == module.__name__:
                if value.code in found or value.name in names:
                    raise RuntimeError(f"two rules claim {value.code} / {value.name}")
                found[value.code] = value
                names.add(value.name)
    return tuple(found[code] for code in sorted(found))


def resolve(spec: str) -> list[type[Rule]]:
    """The rules one --select/--ignore entry names: a code, a code prefix (``DDP00``), a name, or ALL."""
    wanted = spec.strip()
    if wanted.upper() == "ALL":
        return list(all_rules())
    by_name = [r for r in all_rules() if r.name == wanted.lower()]
    if by_name:
        return by_name
    return [r for r in all_rules() if r.code.startswith(wanted.upper())] if wanted else []


class UnknownRule(ValueError):
    """A --select/--extend-select/--ignore entry (or one of ``[tool.ddpfix]``) that names no rule."""

    def __init__(self, spec: str, option: str):
        super().__init__(f"no rule is called {spec!r} (see --list-rules)")
        self.option = option


def _names_exactly(spec: str, matched: list[type[Rule]]) -> bool:
    """``spec`` is one rule's own code or name, not ALL or a prefix."""
    return len(matched) == 1 and spec.strip().upper() in (matched[0].code, matched[0].name.upper())


def _split(values: Sequence[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def select_rules(select: Sequence[str], ignore: Sequence[str], extend: Sequence[str] = (),
                 preview: bool = False) -> list[type[Rule]]:
    """The rules a selection names, in code order: every rule unless ``select`` says otherwise, plus
    those ``extend`` (``extend-select``) names, less those ``ignore`` names. The one place every
    front-end (CLI, language server) picks rules.

    A preview rule (``Rule.preview``: below its precision target on real code) is chosen only by
    its exact code or name, or with ``preview``: ``ALL``, a prefix and the default leave it out,
    as Ruff's preview rules."""
    chosen: list[type[Rule]] = []
    for specs, option in ((_split(select) or ["ALL"], "--select"), (_split(extend), "--extend-select")):
        for spec in specs:
            matched = resolve(spec)
            if not matched:
                raise UnknownRule(spec, option)
            if not preview and not _names_exactly(spec, matched):
                matched = [rule for rule in matched if not rule.preview]
            chosen.extend(rule for rule in matched if rule not in chosen)
    for spec in _split(ignore):
        matched = resolve(spec)
        if not matched:
            raise UnknownRule(spec, "--ignore")
        chosen = [rule for rule in chosen if rule not in matched]
    return sorted(chosen, key=lambda rule: rule.code)
