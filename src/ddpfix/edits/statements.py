"""Rebuilding a simple statement around its value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ddpfix.edits._base import NodeEdit, Span

if TYPE_CHECKING:
    import libcst as cst

#: The name a template writes where the statement's value goes.
HOLE = "__ddpfix_hole__"


@dataclass(frozen=True)
class ReplaceAroundValue(NodeEdit):
    """The simple statement alone on its line at ``statement`` replaced by ``template`` (one
    statement's source) in which the name ``HOLE`` stands for the statement's value (what ``=``,
    ``return`` or an expression statement holds). The value is the node itself, not its text
    rewritten: its parentheses, its comments and any fix inside it survive; so do the line's
    comments (those above it and the one after it) and a ``;`` ending it."""

    statement: Span
    template: str
    kind = "SimpleStatementLine"

    def __post_init__(self):
        if HOLE not in self.template:
            raise ValueError(f"the template has no {HOLE} for the value: the value would be lost")

    @property
    def at(self) -> Span:
        return self.statement

    def rewrite(self, node: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        import libcst as cst

        (small,) = node.body  # one statement on the line: the rule asked for it so
        built = cst.parse_statement(self.template)
        assert isinstance(built, cst.SimpleStatementLine), "the template is one simple statement"
        filled = [part.visit(_hole_filler(small.value)) for part in built.body]
        # A ``;`` ending the line is the statement's in LibCST, with the spaces after it: kept, so
        # ``x = v;  # note`` does not become ``...)# note``.
        filled[-1] = filled[-1].with_changes(semicolon=small.semicolon)
        return node.with_changes(body=filled)


def _hole_filler(value: cst.BaseExpression) -> cst.CSTTransformer:
    """A transformer that puts ``value`` where the template names ``HOLE``."""
    import libcst as cst

    class FillHole(cst.CSTTransformer):
        def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
            return value if updated_node.value == HOLE else updated_node

    return FillHole()
