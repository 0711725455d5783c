"""Adding an import a fix needs."""

from __future__ import annotations

from dataclasses import dataclass

from typing import TYPE_CHECKING

from ddpfix.edits._base import ModuleEdit

if TYPE_CHECKING:
    import libcst as cst


@dataclass(frozen=True)
class AddImport(ModuleEdit):
    """``import <module>`` at the top of the file, after its imports, unless it is there."""

    module: str

    def carry_out(self, module: cst.Module) -> cst.Module:
        from ddpfix.edits._imports import ensure_import

        return ensure_import(module, self.module)
