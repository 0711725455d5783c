"""Inserting statements into a function's body: at its start (after its docstring) or at its end."""

from __future__ import annotations

from dataclasses import dataclass

from ddpfix.edits._base import NodeEdit, Span, cst


@dataclass(frozen=True)
class _InsertStatements(NodeEdit):
    """``code`` (one statement's source each) inserted into the body of the function at
    ``function``; where, a subclass says. The function's own statements are kept as they are (with
    the comments above them), so a comment line above the place stays above the statement it
    belonged to. A body on the ``def`` line becomes a block of its own first.

    Inserting statements that already stand next to that place, in that order (the same code,
    without a comment of their own), adds nothing: applied twice, the edit inserts them once. That
    is what findings at one place need: they share one fix, whose edits the engine gathers for each."""

    function: Span
    code: tuple[str, ...]
    kind = "FunctionDef"

    @property
    def at(self) -> Span:
        return self.function

    def rewrite(self, node: cst.FunctionDef) -> cst.FunctionDef:
        node = _as_block(node)
        body = list(node.body.body)
        index = self.index(body)
        new = [cst.parse_statement(code) for code in self.code]
        if _same(body[max(index - len(new), 0):index], new) or _same(body[index:index + len(new)], new):
            return node  # inserted already (by this very edit, gathered for another finding of its fix)
        return node.with_changes(body=node.body.with_changes(body=[*body[:index], *new, *body[index:]]))

    def index(self, body: list[cst.BaseStatement]) -> int:
        """Where the new statements go, among the body's statements (LibCST's: ``a; b`` is one)."""
        raise NotImplementedError


class PrependStatements(_InsertStatements):
    """The statements inserted at the start of the function's body, after its docstring."""

    def index(self, body: list[cst.BaseStatement]) -> int:
        return 1 if body and _is_docstring(body[0]) else 0


class AppendStatements(_InsertStatements):
    """The statements inserted at the end of the function's body, after its last statement (a
    comment below it stays below it)."""

    def index(self, body: list[cst.BaseStatement]) -> int:
        return len(body)


def _as_block(function: cst.FunctionDef) -> cst.FunctionDef:
    """``def f(self): a; b  # note`` as ``def f(self):`` and the line ``a; b  # note`` indented
    below it (the file's indentation), so that statements can go before or after it."""
    suite = function.body
    if not isinstance(suite, cst.SimpleStatementSuite):
        return function
    line = cst.SimpleStatementLine(body=suite.body, trailing_whitespace=suite.trailing_whitespace)
    return function.with_changes(body=cst.IndentedBlock(body=[line]))


def _is_docstring(statement: cst.BaseStatement) -> bool:
    """A line whose first statement is a string (as LibCST sees one: an f-string alone is not)."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _same(statements: list[cst.BaseStatement], new: list[cst.BaseStatement]) -> bool:
    return len(statements) == len(new) and all(old.deep_equals(statement) for old, statement in zip(statements, new))
