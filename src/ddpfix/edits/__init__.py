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

import importlib
from typing import TYPE_CHECKING

from ddpfix.edits._base import MODULE, ModuleEdit, NodeEdit, Rewritten, Span

if TYPE_CHECKING:
    import libcst as cst

    from ddpfix.edits.arguments import DropArgument, drop_keeps_comments
    from ddpfix.edits.blocks import AppendStatements, PrependStatements
    from ddpfix.edits.calls import CallLayout, RenameAttribute, ReplaceArguments, call_layout
    from ddpfix.edits.expressions import ReplaceExpression
    from ddpfix.edits.imports import AddImport
    from ddpfix.edits.keywords import DropKeyword, SetKeyword
    from ddpfix.edits.main_guard import WrapInGuardedFunction
    from ddpfix.edits.moves import MoveBeforeIf, MoveOutOfIf
    from ddpfix.edits.statements import HOLE, ReplaceAroundValue
    from ddpfix.edits.with_blocks import MoveOutOfWith
    from ddpfix.positions import Positions

Edit = NodeEdit | ModuleEdit

#: The kinds of edit (and the few helpers a rule asks before making one), each by the module of this
#: package that defines it. Rules name them through the package (``edits.SetKeyword``), and a module is
#: imported when one of its names is first asked for (PEP 562): a report of a file with nothing to fix
#: makes no edit and so never loads them (they are frozen dataclasses, slow to create: start-up time).
_LAZY = {
    "DropArgument": "arguments", "drop_keeps_comments": "arguments",
    "AppendStatements": "blocks", "PrependStatements": "blocks",
    "CallLayout": "calls", "RenameAttribute": "calls", "ReplaceArguments": "calls", "call_layout": "calls",
    "ReplaceExpression": "expressions",
    "AddImport": "imports",
    "DropKeyword": "keywords", "SetKeyword": "keywords",
    "WrapInGuardedFunction": "main_guard",
    "MoveBeforeIf": "moves", "MoveOutOfIf": "moves",
    "HOLE": "statements", "ReplaceAroundValue": "statements",
    "MoveOutOfWith": "with_blocks",
}

__all__ = ["MODULE", "Edit", "ModuleEdit", "NodeEdit", "Rewritten", "Span", "apply_edits", *_LAZY]


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value  # asked once: later look-ups find it as a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


def apply_edits(module: cst.Module, positions: Positions, edits) -> tuple[cst.Module, list[Edit]]:
    """``module`` with ``edits`` applied, and the edits that could not be (see ``_apply``)."""
    from ddpfix.edits._apply import apply_edits as carry_out

    return carry_out(module, positions, edits)
