"""Moving module-level statements into a function, called under ``if __name__ == "__main__":``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ddpfix.edits._base import MODULE, NodeEdit, Span, cst

#: PEP 8's two blank lines around a top-level definition.
_BLANK_LINES = 2


@dataclass(frozen=True)
class WrapInGuardedFunction(NodeEdit):
    """The module's statements at ``indices`` (positions in LibCST's ``Module.body``, ascending)
    moved, in order, into a new ``def <name>():`` that stands where the first of them stood; the
    statements not listed keep their places (one left after the ``def`` set apart from it by two
    blank lines). ``if __name__ == "__main__":`` calling it is appended at the end of the module.

    The moved statements are the module's own nodes, so their comments and inner fixes go with
    them; the comment lines above the first one (its leading lines) go above the ``def``, topped up
    to two blank lines."""

    indices: tuple[int, ...]
    name: str = "main"
    kind = "Module"

    @property
    def at(self) -> Span:
        return MODULE

    def rewrite(self, node: cst.Module) -> cst.Module:
        body = list(node.body)
        first = self.indices[0]
        before = [s for i, s in enumerate(body[:first]) if i not in self.indices]
        after = [s for i, s in enumerate(body[first:], first) if i not in self.indices]
        if after:  # a statement left after the new def stands apart from it too
            after[0] = after[0].with_changes(leading_lines=_spaced(after[0].leading_lines))
        function = self._function([body[i] for i in self.indices])
        return node.with_changes(body=[*before, function, *after, self._guard()])

    def _function(self, moved: list[cst.BaseStatement]) -> cst.FunctionDef:
        leading = moved[0].leading_lines  # the comment lines above the first moved statement
        moved[0] = moved[0].with_changes(leading_lines=[])
        return cst.FunctionDef(
            name=cst.Name(self.name),
            params=cst.Parameters(),
            body=cst.IndentedBlock(body=moved),
            leading_lines=_spaced(leading),
        )

    def _guard(self) -> cst.BaseStatement:
        guard = cst.parse_statement(f'if __name__ == "__main__":\n    {self.name}()\n')
        return guard.with_changes(leading_lines=[cst.EmptyLine()] * _BLANK_LINES)


def _spaced(leading: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    """``leading`` topped up to two blank lines above a top-level definition, as PEP 8 has it,
    whatever was there; its comments kept."""
    blank = [line for line in leading if line.comment is None]
    return [cst.EmptyLine()] * max(0, _BLANK_LINES - len(blank)) + list(leading)
