"""Replacing an expression."""

from __future__ import annotations

from dataclasses import dataclass

from typing import TYPE_CHECKING

from ddpfix.edits._base import NodeEdit, Span

if TYPE_CHECKING:
    import libcst as cst


@dataclass(frozen=True)
class ReplaceExpression(NodeEdit):
    """The expression at ``node`` replaced by ``code`` (an expression's source)."""

    node: Span
    code: str
    kind = "BaseExpression"

    @property
    def at(self) -> Span:
        return self.node

    def rewrite(self, node: cst.BaseExpression) -> cst.BaseExpression:
        import libcst as cst

        return cst.parse_expression(self.code)

    def splice(self, segment) -> str | None:
        from ddpfix.edits._splice import plain_code

        # LibCST's node owns its parentheses, and the new expression comes without them.
        return self.code if plain_code(self.code) and not segment.maybe_parenthesized else None
