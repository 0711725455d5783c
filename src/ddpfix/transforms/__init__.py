"""The rules: one module per rule, registered by being in this package."""

from __future__ import annotations

import functools
import importlib
import pkgutil

from ddpfix.transforms.base import Rule


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
