"""Replacing an expression."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddpfix.edits._base import NodeEdit, Span


@dataclass(frozen=True)
class ReplaceExpression(NodeEdit):
    """The expression at ``node`` replaced by ``code`` (an expression's source)."""

    node: Span
    code: str
    kind = cst.BaseExpression

    @property
    def at(self) -> Span:
        return self.node

    def rewrite(self, node: cst.BaseExpression) -> cst.BaseExpression:
        return cst.parse_expression(self.code)
