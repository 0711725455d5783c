"""Moving statements out of an ``if``, or up above one, inside the block that holds that ``if``.

Both edits rewrite the statement that owns the block (a function, a compound statement, the
module), since a move reaches past the ``if`` itself. The block is named by its field (``"body"``,
``"orelse"``, ``"finalbody"``, ``"handlers.0"``, ``"cases.2"``) and statements by their index in it,
as LibCST lists them (``a; b`` is one statement line).

Indices are those of the original code. Several moves in one block hold together when they are
carried out bottom-up, the later statement first (as text patches are): a move then never shifts
a statement that a later one still has to find. A rule gives them in that order.

Comments stay: a moved statement takes its own (the lines above it, the one at its end) along,
and what a move leaves empty goes with the comments it held (see ``MoveOutOfIf``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ddpfix.edits._base import NodeEdit, Span, cst

#: The statements that own a block of statements (the module is the edit at ``MODULE``).
BLOCK_OWNERS = ("FunctionDef", "ClassDef", "If", "For", "While", "With", "Try", "TryStar", "Match", "Module")


@dataclass(frozen=True)
class MoveOutOfIf(NodeEdit):
    """Statement ``index`` of the ``branch`` (``"body"`` or ``"orelse"``) of the ``if`` that is
    statement ``statement`` of block ``block`` of ``owner``, moved to just after that ``if`` (ahead of
    statements moved out of it before, which come later in the code).

    A branch left empty goes: an ``else``; a body with an ``else`` left becomes ``pass``; an ``if``
    with nothing left gives its place to the statement moved out of it. What held comments goes
    with the statement: the ``if``'s leading lines, the comments of its test and header, of the
    dropped branch's header and of the block's last lines are written above it."""

    owner: Span
    block: str
    statement: int
    branch: str
    index: int
    kind = BLOCK_OWNERS

    @property
    def at(self) -> Span:
        return self.owner

    def rewrite(self, node: cst.CSTNode) -> cst.CSTNode:
        statements = list(_statements(node, self.block))
        guard = statements[self.statement]
        if not isinstance(guard, cst.If):
            raise ValueError(f"statement {self.statement} of {self.block} is not an if")
        branch = _branch(guard, self.branch)
        moved = branch.body[self.index]
        guard = _with_branch(guard, self.branch, branch.with_changes(body=[*branch.body[: self.index], *branch.body[self.index + 1:]]))
        kept, comments = _without_empty_branches(guard)
        moved = moved.with_changes(leading_lines=[*comments, *moved.leading_lines])
        statements[self.statement : self.statement + 1] = [moved] if kept is None else [kept, moved]
        return _with_statements(node, self.block, statements)


@dataclass(frozen=True)
class MoveBeforeIf(NodeEdit):
    """Statement ``index`` of block ``block`` of ``owner`` moved up to just before the ``if`` that
    is statement ``statement`` of the same block (``statement < index``), ahead of statements moved
    there before (which come later in the code). Only simple statements are moved this way, so the
    ``if`` is the first ``if`` at or after ``statement``."""

    owner: Span
    block: str
    statement: int
    index: int
    kind = BLOCK_OWNERS

    @property
    def at(self) -> Span:
        return self.owner

    def rewrite(self, node: cst.CSTNode) -> cst.CSTNode:
        statements = list(_statements(node, self.block))
        anchor = next(i for i in range(self.statement, len(statements)) if isinstance(statements[i], cst.If))
        moved = statements.pop(self.index + anchor - self.statement)  # past those moved up before
        if not isinstance(moved, cst.SimpleStatementLine):
            raise ValueError("only a simple statement line is moved above an if")
        statements.insert(self.statement, moved)
        return _with_statements(node, self.block, statements)


# --- blocks by name ------------------------------------------------------------------------------


def _suite(node: cst.CSTNode, block: str) -> cst.IndentedBlock:
    """The indented block ``block`` of ``node`` (a statement that owns blocks)."""
    name, _, number = block.partition(".")
    part = getattr(node, name)
    if number:
        part = part[int(number)]  # a handler or a case: its body
    elif name == "orelse" and not isinstance(part, cst.Else):
        raise ValueError("an elif is not a block: its if owns its blocks")
    if not isinstance(part, cst.IndentedBlock):
        part = part.body  # an else, a finally, a handler, a case
    if not isinstance(part, cst.IndentedBlock):
        raise ValueError(f"{block} is not an indented block")
    return part


def _statements(node: cst.CSTNode, block: str):
    if isinstance(node, cst.Module):
        return node.body
    return _suite(node, block).body


def _with_statements(node: cst.CSTNode, block: str, statements: list) -> cst.CSTNode:
    if isinstance(node, cst.Module):
        return node.with_changes(body=statements)
    suite = _suite(node, block)
    return _replace(node, block, suite.with_changes(body=statements))


def _replace(node: cst.CSTNode, block: str, suite: cst.IndentedBlock) -> cst.CSTNode:
    name, _, number = block.partition(".")
    part = getattr(node, name)
    if number:
        parts = list(part)
        parts[int(number)] = parts[int(number)].with_changes(body=suite)
        return node.with_changes(**{name: parts})
    if isinstance(part, cst.IndentedBlock):
        return node.with_changes(**{name: suite})
    return node.with_changes(**{name: part.with_changes(body=suite)})


# --- an if's branches ----------------------------------------------------------------------------


def _branch(node: cst.If, branch: str) -> cst.IndentedBlock:
    suite = node.body if branch == "body" else node.orelse.body if isinstance(node.orelse, cst.Else) else None
    if not isinstance(suite, cst.IndentedBlock):
        raise ValueError(f"the if's {branch} is not an indented block")
    return suite


def _with_branch(node: cst.If, branch: str, suite: cst.IndentedBlock) -> cst.If:
    if branch == "body":
        return node.with_changes(body=suite)
    return node.with_changes(orelse=node.orelse.with_changes(body=suite))


def _without_empty_branches(node: cst.If) -> tuple[cst.If | None, list[cst.EmptyLine]]:
    """The ``if`` less the branches left empty (None when nothing is left of it), and the lines
    that carry the comments of what went, to be written above the statement moved out."""
    comments: list[cst.EmptyLine] = []
    orelse = node.orelse
    if isinstance(orelse, cst.Else) and not orelse.body.body:
        comments += [line for line in orelse.leading_lines if line.comment is not None]
        comments += _block_comments(orelse.body)
        orelse = None
    if node.body.body:
        return node.with_changes(orelse=orelse), comments
    if orelse is not None:
        return node.with_changes(body=node.body.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])), comments
    return None, [*node.leading_lines, *_test_comments(node), *_block_comments(node.body), *comments]


def _block_comments(suite: cst.IndentedBlock) -> list[cst.EmptyLine]:
    """The comment on a block's header line (``else:  # ...``) and those of its last lines."""
    lines = [cst.EmptyLine(comment=suite.header.comment)] if suite.header.comment is not None else []
    return lines + [line for line in suite.footer if line.comment is not None]


def _test_comments(node: cst.If) -> list[cst.EmptyLine]:
    """The comments inside an ``if``'s test (within its parentheses), one line each."""
    found: list[cst.EmptyLine] = []

    class Collect(cst.CSTVisitor):
        def visit_Comment(self, comment: cst.Comment) -> None:
            found.append(cst.EmptyLine(comment=comment))

    node.test.visit(Collect())
    return found
