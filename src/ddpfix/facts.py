"""Facts that cross files, gathered in one cheap pass before any file is fixed.

The model and the Trainer usually live in different files: a metric is monitored by an
``EarlyStopping`` in ``train.py`` but logged in ``model.py``; ``class Net(BaseModel)`` is a
LightningModule because ``BaseModel(L.LightningModule)`` is, two files away. Rules read these facts
from their context and never open other files themselves.

The pass uses ``ast`` (C speed) and only on files that mention the words it looks for.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field

#: Callbacks whose ``monitor`` decides through collectives on every rank, with the position of
#: ``monitor`` when given positionally.
MONITORING_CALLBACKS = {"EarlyStopping": 0, "ModelCheckpoint": None, "StochasticWeightAveraging": None}
_CLASS = re.compile(rb"^[ \t]*class[ \t]+(\w+)[ \t]*\(([^)]*)\)", re.M)
LIGHTNING_BASES = frozenset({"LightningModule"})


@dataclass(frozen=True)
class Monitor:
    metric: str
    path: str
    line: int
    by: str  # "EarlyStopping", "ModelCheckpoint", "configure_optimizers"

    def describe(self) -> str:
        return f"{self.by} ({self.path}:{self.line})"


@dataclass
class FileFacts:
    """What one file contributes."""

    monitors: list[Monitor] = field(default_factory=list)
    classes: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (name, base names)


@dataclass(frozen=True)
class ProjectFacts:
    monitored: dict[str, tuple[Monitor, ...]] = field(default_factory=dict)
    lightning_modules: frozenset[str] = frozenset()

    @classmethod
    def merge(cls, parts: Iterable[FileFacts]) -> ProjectFacts:
        monitored: dict[str, list[Monitor]] = {}
        bases: dict[str, set[str]] = {}
        for part in parts:
            for monitor in part.monitors:
                monitored.setdefault(monitor.metric, []).append(monitor)
            for name, names in part.classes:
                bases.setdefault(name, set()).update(names)
        modules = {name for name, names in bases.items() if names & LIGHTNING_BASES}
        grew = True
        while grew:  # derivation across files, by class name
            grew = False
            for name, names in bases.items():
                if name not in modules and names & modules:
                    modules.add(name)
                    grew = True
        return cls({k: tuple(v) for k, v in monitored.items()}, frozenset(modules))


def file_facts(path: str, data: bytes) -> FileFacts:
    facts = FileFacts()
    if b"class" in data:
        for match in _CLASS.finditer(data):
            names = tuple(
                part.strip().rsplit(b".", 1)[-1].decode("ascii", "replace")
                for part in match.group(2).split(b",")
                if part.strip() and b"=" not in part
            )
            facts.classes.append((match.group(1).decode("ascii", "replace"), names))
    if b"monitor" not in data and not any(name.encode() in data for name in MONITORING_CALLBACKS):
        return facts
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data, path)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return facts  # the fix pass reports it
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if callee in MONITORING_CALLBACKS:
                metric = _monitor_argument(node, MONITORING_CALLBACKS[callee])
                if metric is not None:
                    facts.monitors.append(Monitor(metric, path, node.lineno, callee))
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if _constant_str(key) == "monitor" and _constant_str(value) is not None:
                    facts.monitors.append(Monitor(_constant_str(value), path, node.lineno, "configure_optimizers"))
    return facts


def _constant_str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _monitor_argument(call: ast.Call, position: int | None) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == "monitor":
            return _constant_str(keyword.value)
    if position is not None and len(call.args) > position:
        return _constant_str(call.args[position])
    return None
