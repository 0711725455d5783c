"""Moving statements out of a ``with`` block, or dissolving the block (its body dedented in its place)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ddpfix.edits._base import MODULE, NodeEdit, Span

if TYPE_CHECKING:
    import libcst as cst


@dataclass(frozen=True)
class MoveOutOfWith(NodeEdit):
    """In the block at ``block`` (an indented block, or ``MODULE``), the ``with`` statement
    ``from_end`` statements before the block's end (0: its last statement): the statements of its
    body at indices ``before`` placed before it, those at ``after`` after it (each group in the
    order given), the others kept inside; when none is kept, the ``with`` goes.

    Indices count statement lines as LibCST does (``a; b`` is one). The ``with`` is counted from
    the end of its block so that a rebuild of an earlier ``with`` of the same block, applied first
    (edits of one node apply in the order given: a rule gives them in source order), leaves it valid.

    The edit is of the block holding the ``with`` rather than of the ``with`` itself because
    comments at the end of the ``with``'s body (its footer) go above the statement that follows
    it, or into its block's footer when nothing follows: they stay below the statements moved
    after the block, or below the last one when the block goes. Every other comment travels with
    its statement; the lines above the ``with`` (blank lines, comments) stay above whatever now comes
    first, and a comment on the ``with`` line of a dissolved block becomes a line of its own there.
    """

    block: Span
    from_end: int
    before: tuple[int, ...]
    after: tuple[int, ...]
    kind = ("IndentedBlock", "Module")

    @property
    def at(self) -> Span:
        return self.block

    def alone(self) -> tuple[int, MoveOutOfWith] | None:
        # What the rewrite touches besides the ``with``: the statement after it (comments carried
        # above it), which a module of the ``with`` alone holds as its footer, in the same place.
        return (self.from_end, replace(self, from_end=0)) if self.block == MODULE else None

    def rewrite(self, node: cst.IndentedBlock | cst.Module) -> cst.IndentedBlock | cst.Module:
        body = list(node.body)
        index = len(body) - 1 - self.from_end
        statements, carried = self._rebuilt(body[index])
        rest = body[index + 1:]
        footer = list(node.footer)
        if carried and rest:
            rest[0] = rest[0].with_changes(leading_lines=[*carried, *rest[0].leading_lines])
        elif carried:
            footer = [*carried, *footer]
        return node.with_changes(body=[*body[:index], *statements, *rest], footer=footer)

    def _rebuilt(self, block: cst.With) -> tuple[list[cst.BaseStatement], list[cst.EmptyLine]]:
        """The statements in place of ``block``, and the comment lines that go below them."""
        import libcst as cst

        inner = list(block.body.body)
        moved = {*self.before, *self.after}
        kept = [statement for index, statement in enumerate(inner) if index not in moved]
        footer = list(block.body.footer)
        # Comments at the end of the block belong after its last statement, wherever that went.
        carried = footer if self.after or not kept else []
        body = block.body.with_changes(body=kept, footer=[] if carried else footer)
        inside = [block.with_changes(body=body)] if kept else []
        result = [*(inner[i] for i in self.before), *inside, *(inner[i] for i in self.after)]
        if not inside or result[0] is not inside[0]:
            # The lines above the ``with`` (blank lines, a comment) stay above whatever now comes first.
            header = block.body.header.comment
            above = [cst.EmptyLine(comment=header)] if not inside and header else []
            result[0] = result[0].with_changes(leading_lines=[*block.leading_lines, *above, *result[0].leading_lines])
            if inside:
                result[len(self.before)] = inside[0].with_changes(leading_lines=[])
        return result, carried

