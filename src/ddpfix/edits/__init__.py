"""Typed edits, and the one generic LibCST pass that carries them out.

A rule that fixes decides once, on CPython's tree (``Rule.check``): each fixable finding carries its
edits — set or drop a keyword argument of a call, replace an expression, add an import, rebuild a
statement or a block — placed by the span the rule read off its tree (``ctx.position(node)``:
LibCST's line and column terms). Here those edits are applied to LibCST's tree of the same version
of the file, keeping every comment and the layout around them. Nothing here decides anything about
a pitfall: a rule that knows what to change names it, this package knows only how to change it. So
``--check`` (the findings) and ``--write`` (the findings plus these edits) come from one analysis
and cannot disagree.

Each kind of edit lives in its own module (``NodeEdit`` / ``ModuleEdit`` in ``_base``); this module
only finds their targets and runs them. An edit whose target is not found in LibCST's tree (which
should not happen: both trees come from the same bytes) is not applied, and the engine reports the
finding as not fixed; an edit that would lose a comment is refused the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ddpfix.edits._base import MODULE, ModuleEdit, NodeEdit, Rewritten, Span
from ddpfix.edits.expressions import ReplaceExpression
from ddpfix.edits.imports import AddImport
from ddpfix.edits.keywords import DropKeyword, SetKeyword

if TYPE_CHECKING:
    import libcst as cst

    from ddpfix.positions import Positions

Edit = NodeEdit | ModuleEdit

__all__ = ["MODULE", "AddImport", "DropKeyword", "Edit", "ModuleEdit", "NodeEdit", "ReplaceExpression",
           "Rewritten", "SetKeyword", "Span", "apply_edits"]


def apply_edits(module: cst.Module, positions: Positions, edits) -> tuple[cst.Module, list[Edit]]:
    """``module`` with ``edits`` applied, and the edits that could not be (see ``_apply``)."""
    from ddpfix.edits._apply import apply_edits as carry_out

    return carry_out(module, positions, edits)
