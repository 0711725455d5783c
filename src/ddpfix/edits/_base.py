"""What an edit is: a rewrite of the node of LibCST's tree found at a span read off CPython's tree,
or (rarely) a rewrite of the whole module.

Each kind of edit is a small frozen dataclass in a module of this package (``keywords``,
``expressions``, ``imports``, ...). It knows only how to change code, never why: the rule that
decided names the spans and the code. Adding a kind of edit needs no change to ``apply_edits``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Union

if TYPE_CHECKING:  # edits are made on every report path; LibCST is loaded only to carry them out
    import libcst as cst

class _LibCST:
    """``libcst``, imported on first use: an edit module names ``cst.X`` freely inside its methods,
    and making an edit (every report does) never loads LibCST — only carrying one out does."""

    def __getattr__(self, name: str):
        import libcst

        return getattr(libcst, name)


cst = _LibCST()  # noqa: F811 - the runtime stand-in for the module the annotations name

#: What a node edit's rewrite may answer, as a LibCST transformer's ``on_leave`` may: a node, several
#: statements in place of one (``cst.FlattenSentinel``), or nothing (``cst.RemovalSentinel.REMOVE``).
Rewritten = Union["cst.CSTNode", "cst.FlattenSentinel", "cst.RemovalSentinel"]


class Span(NamedTuple):
    """Where a node stands, as LibCST counts: 1-based lines, 0-based columns in characters. CPython's
    tree and LibCST's agree on statements and expressions (``TreePositions``/``Positions``)."""

    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def of(cls, where) -> Span:
        """From a ``CodeRange`` (what ``ctx.position(node)`` answers on either tree)."""
        return cls(where.start.line, where.start.column, where.end.line, where.end.column)


#: The span that names the module itself (LibCST's range of a module is not a statement's).
MODULE = Span(0, 0, 0, 0)


class NodeEdit:
    """An edit of the outermost node of kind ``kind`` at span ``target``. Subclasses are frozen
    dataclasses with a ``target`` field (or property) and implement ``rewrite``.

    ``rewrite`` receives the node as updated by the edits inside it (edits of inner nodes apply
    first), so an edit that rebuilds a block must take its statements from the node it is given,
    by index, never re-create them from text: then an inner fix and every comment survive."""

    #: The LibCST node type(s) this edit rewrites, by name (``"Call"``, ``("If", "With")``) so that
    #: making an edit never loads LibCST; the outermost node of such a type at the span is the
    #: target (an ``Expr`` statement and its ``SimpleStatementLine`` share a span).
    kind: str | tuple[str, ...] = "CSTNode"

    @property
    def at(self) -> Span:
        return self.target  # type: ignore[attr-defined]

    def rewrite(self, node: cst.CSTNode) -> Rewritten:
        raise NotImplementedError

    def splice(self, segment) -> str | None:
        """The target's new text, where the edit can be carried out on the text (``_splice``: the
        target's text and its tree, no comment or backslash in it) with exactly the bytes
        ``rewrite`` would give; None to leave it to LibCST. Most edits never splice."""
        return None

    def alone(self) -> tuple[int, NodeEdit] | None:
        """For an edit of the module that rewrites one top-level statement line and nothing else
        (the lines after it up to the next statement at most): that line, counted from the
        module's end (0: the last), and this edit made for a module that holds only that line
        (``_in_parts``). None, the default: the edit needs the whole module."""
        return None

    def comments_kept(self, before: cst.CSTNode, after: Rewritten) -> bool:
        """Whether the rewrite keeps the node's comments: an edit that would lose one is refused.
        An edit that deliberately moves comments elsewhere (never drops them) may say so here."""
        import libcst as cst

        from ddpfix.edits._args import comments

        if isinstance(after, cst.RemovalSentinel):
            return not comments(before)
        if isinstance(before, cst.Module) and isinstance(after, cst.Module):
            return _module_comments_kept(before, after)
        nodes = after.nodes if isinstance(after, cst.FlattenSentinel) else [after]
        return comments(before) == sorted(c for node in nodes for c in comments(node))


def _module_comments_kept(before, after) -> bool:
    """``comments_kept`` of a whole module (an import added, a main guard): the top-level
    statements both modules hold (the same objects) hold the same comments, so only the others,
    the header and the footer are compared; a statement held twice makes the whole comparison."""
    from ddpfix.edits._args import comments

    old_ids = [id(s) for s in before.body]
    new_ids = [id(s) for s in after.body]
    if len(set(old_ids)) != len(old_ids) or len(set(new_ids)) != len(new_ids):
        return comments(before) == comments(after)
    shared = set(old_ids) & set(new_ids)

    def rest(module) -> list[str]:
        parts = [*module.header, *(s for s in module.body if id(s) not in shared), *module.footer]
        return sorted(c for part in parts for c in comments(part))

    return rest(before) == rest(after)


class ModuleEdit:
    """An edit of the whole module, carried out after every node edit (adding an import)."""

    def carry_out(self, module: cst.Module) -> cst.Module:
        raise NotImplementedError
