"""Shared knowledge of Lightning and torch names, for the rules that need it.

Everything here resolves names through the module's import table (``ImportTable``), so
``import lightning as L``, ``lightning.pytorch as pl``, ``pytorch_lightning`` and the Fabric
packages all count, and a user's own class called ``Trainer`` does not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import libcst as cst

from ddpfix.imports import ImportTable, child_blocks
from ddpfix.transforms._tree_lightning import (  # noqa: F401 - the names this module's users import from here
    BEFORE_PLACEMENT, CUDA_STRING, LIGHTNING_PACKAGES, TENSOR_FACTORIES, is_torch_nn_module, lightning_name,
    runs_on_device,
)
from ddpfix.transforms._walk import walk


def class_hierarchy(module: cst.Module, imports: ImportTable, lightning_elsewhere: Mapping[str, frozenset[str]] = {}) -> dict[str, str]:
    """Classes of this file that are modules: name -> ``"lightning"`` (a LightningModule) or ``"torch"``.

    Derivation is followed through the file's own classes (``class Net(Base)`` with
    ``class Base(L.LightningModule)``), whatever their order, and through ``lightning_elsewhere``:
    names of LightningModule classes that the facts pass found in other files of the run.
    """
    def kind_of(parent: cst.BaseExpression) -> str | None:
        if lightning_name(imports, parent) == "LightningModule":
            return "lightning"
        if is_torch_nn_module(imports, parent):
            return "torch"
        if _defined_elsewhere(parent, imports, lightning_elsewhere):
            return "lightning"  # a LightningModule subclass defined in another file of the run
        return None

    return {name: kind for name, (kind, _node) in _derived(module, kind_of).items()}


def _derived(module: cst.Module, kind_of) -> dict[str, tuple[str, cst.ClassDef]]:
    """The file's classes whose base ``kind_of`` recognises, directly or through the file's own
    classes (in any order): name -> (kind, class)."""
    classes = {node.name.value: node for node in _classes(module)}
    found: dict[str, tuple[str, cst.ClassDef]] = {}
    grew = True
    while grew:
        grew = False
        for name, node in classes.items():
            if name in found:
                continue
            for base in (arg.value for arg in node.bases if arg.keyword is None):
                kind = kind_of(base)
                if kind is None and isinstance(base, cst.Name) and base.value in found:
                    kind = found[base.value][0]
                if kind is not None:
                    found[name] = (kind, node)
                    grew = True
                    break
    return found


def _defined_elsewhere(parent: cst.BaseExpression, imports: ImportTable, elsewhere: Mapping[str, frozenset[str]]) -> bool:
    """``parent`` names a LightningModule class of another file of the run: same class name, and
    when it comes from an import, from a module of that file's name (``from model import Base``)."""
    qualified = imports.qualify(parent)
    if qualified is None:
        return _last_name(parent) in elsewhere  # a relative import, or a name we cannot place
    module_path, _, name = qualified.rpartition(".")
    return name in elsewhere and module_path.rsplit(".", 1)[-1] in elsewhere[name]


def _last_name(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return node.value if isinstance(node, cst.Name) else None


def lightning_methods(module: cst.Module, imports: ImportTable, lightning_elsewhere: Mapping[str, frozenset[str]] = {}):
    """(class, method) for every method of every LightningModule class in the file."""
    kinds = class_hierarchy(module, imports, lightning_elsewhere)
    for node in _classes(module):
        if kinds.get(node.name.value) != "lightning":
            continue
        for statement in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
            if isinstance(statement, cst.FunctionDef):
                yield node, statement


def self_method_calls(node: cst.CSTNode, names: frozenset[str]) -> list[cst.Call]:
    """Calls ``self.<name>(...)`` inside ``node`` (``self.log``, ``self.log_dict``, ``self.all_gather``...)."""
    found: list[cst.Call] = []

    class Collect(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            func = call.func
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value in names
                and isinstance(func.value, cst.Name)
                and func.value.value == "self"
            ):
                found.append(call)

        def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
            return False  # a nested function runs when it is called, not here

    walk(node, Collect())
    return found


def statements(node: cst.CSTNode):
    """Every statement below ``node`` (compound ones and their blocks), without entering expressions:
    far cheaper than a visitor over every node."""
    for statement in getattr(node, "body", ()) if not isinstance(node, cst.SimpleStatementSuite) else ():
        yield statement
        if isinstance(statement, cst.BaseCompoundStatement):
            for block in child_blocks(statement):
                yield from statements(block)


def _classes(node: cst.CSTNode):
    return [s for s in statements(node) if isinstance(s, cst.ClassDef)]


def string_value(node: cst.BaseExpression) -> str | None:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def device_kind(node: cst.BaseExpression, imports: ImportTable) -> str:
    """``"cuda"`` for a literal CUDA device, ``"cpu"`` for any other literal device, ``"unknown"`` otherwise.

    Literal CUDA devices: ``"cuda"``, ``"cuda:N"``, f-strings starting with ``cuda``, an ordinal,
    ``torch.device("cuda")``, ``torch.device("cuda", 0)``, ``torch.device(type="cuda")``.
    """
    text = string_value(node)
    if text is not None:
        return "cuda" if CUDA_STRING.fullmatch(text) else "cpu"
    if isinstance(node, cst.FormattedString):
        if all(isinstance(part, cst.FormattedStringText) for part in node.parts):
            text = "".join(part.value for part in node.parts)
            return "cuda" if CUDA_STRING.fullmatch(text) else "cpu"
        first = node.parts[0] if node.parts else None
        if isinstance(first, cst.FormattedStringText) and first.value.startswith("cuda"):
            return "cuda"
        return "unknown"
    if isinstance(node, cst.Integer):
        return "cuda"  # an ordinal names a CUDA device
    if isinstance(node, cst.Call) and imports.qualify(node.func) == "torch.device" and node.args:
        first = next((a for a in node.args if a.keyword is None or a.keyword.value == "type"), None)
        if first is None or first.star:
            return "unknown"
        if isinstance(first.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return device_kind(first.value, imports)
    return "unknown"


def metric_attributes(cls: cst.ClassDef, imports: ImportTable) -> set[str]:
    """``self.<name>`` attributes of ``cls`` assigned a torchmetrics object (a Metric, a MetricCollection).

    Such metrics synchronise their own state across ranks; ``compute()`` on one is a collective.
    """
    found: set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            value = node.value
            if not isinstance(value, cst.Call):
                return
            qualified = imports.qualify(value.func) or ""
            if qualified.split(".")[0] != "torchmetrics":
                return
            for target in node.targets:
                t = target.target
                if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                    found.add(t.attr.value)

    walk(cls, Collect())
    return found


def all_functions(module: cst.Module) -> list[cst.FunctionDef]:
    return [s for s in statements(module) if isinstance(s, cst.FunctionDef)]


def data_classes(module: cst.Module, imports: ImportTable) -> dict[str, cst.ClassDef]:
    """Classes of this file that hold data: LightningDataModule or torch Dataset subclasses (also
    through the file's own hierarchy)."""

    def kind_of(base: cst.BaseExpression) -> str | None:
        if lightning_name(imports, base) == "LightningDataModule":
            return "datamodule"
        return "dataset" if (imports.qualify(base) or "").startswith("torch.utils.data.") else None

    return {name: node for name, (_kind, node) in _derived(module, kind_of).items()}


def builds_ddp_trainer(module: cst.Module, imports: ImportTable, data: bytes | None = None) -> bool:
    """The file builds a Trainer (or Fabric) with a DDP strategy."""
    if data is not None and (b"strategy" not in data or b"ddp" not in data.lower()):
        return False
    found = False

    class Collect(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            if lightning_name(imports, node.func) not in ("Trainer", "Fabric"):
                return
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "strategy":
                    text = string_value(arg.value)
                    if (text or "").startswith("ddp") or (
                        isinstance(arg.value, cst.Call) and lightning_name(imports, arg.value.func) == "DDPStrategy"
                    ):
                        found = True

    walk(module, Collect())
    return found
