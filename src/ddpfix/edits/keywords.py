"""Setting and dropping a call's keyword argument, in the call's own layout."""

from __future__ import annotations

from dataclasses import dataclass

from typing import TYPE_CHECKING

from ddpfix.edits._base import NodeEdit, Span

if TYPE_CHECKING:
    import libcst as cst


@dataclass(frozen=True)
class SetKeyword(NodeEdit):
    """``name=value`` in the call at ``call``: replaced in place where present, else appended in the
    call's own style (one argument per line stays one argument per line)."""

    call: Span
    name: str
    value: str
    kind = "Call"

    @property
    def at(self) -> Span:
        return self.call

    def rewrite(self, node: cst.Call) -> cst.Call:
        from ddpfix.edits._args import with_keyword

        return with_keyword(node, self.name, self.value)

    def splice(self, segment) -> str | None:
        from ddpfix.edits._call_text import with_keyword

        return with_keyword(segment, self.name, self.value)


@dataclass(frozen=True)
class DropKeyword(NodeEdit):
    """The keyword argument ``name`` removed from the call at ``call`` (its comma and layout kept)."""

    call: Span
    name: str
    kind = "Call"

    @property
    def at(self) -> Span:
        return self.call

    def rewrite(self, node: cst.Call) -> cst.Call:
        from ddpfix.edits._args import without_keyword

        return without_keyword(node, self.name)

    def splice(self, segment) -> str | None:
        from ddpfix.edits._call_text import without_keyword

        return without_keyword(segment, self.name)
