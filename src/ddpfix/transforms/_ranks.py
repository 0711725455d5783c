"""Rank guards: which statements run on rank 0 only.

Recognised (through imports where a library name is involved):
``self.trainer.is_global_zero``, ``trainer.is_global_zero``, ``fabric.is_global_zero``;
``self.global_rank == 0``, ``self.trainer.global_rank == 0``, ``self.local_rank == 0``,
``0 == self.global_rank``, ``rank_zero_only.rank == 0``, ``dist.get_rank() == 0`` /
``torch.distributed.get_rank() == 0``; conjunctions (``is_global_zero and batch_idx == 0``); the
early-return form (``if not self.trainer.is_global_zero: return``: the rest of the block is gated);
the ``else`` of a ``!= 0`` test; and functions decorated ``@rank_zero_only``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddpfix.imports import ImportTable, child_blocks
from ddpfix.transforms._tree_lightning import lightning_name
from ddpfix.transforms._lightning import string_value
from ddpfix.transforms._tree_ranks import (  # noqa: F401 - the names this module's users import from here
    RANK_ATTRIBUTES, RANK_TRIGGERS, RANK_VARIABLES, RANK_WORDS, Guard, rank_words,
)
from ddpfix.transforms._walk import walk

@dataclass(frozen=True)
class Gated:
    statement: cst.SimpleStatementLine
    guard: Guard
    block: tuple  # the statements of the block that holds ``statement`` (for moves)
    direct: bool  # ``statement`` stands directly in the guarded block (not nested deeper)


class RankTests:
    def __init__(self, imports: ImportTable):
        self.imports = imports

    def _is_rank(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Attribute):
            if node.attr.value in RANK_ATTRIBUTES:
                return True
            return node.attr.value == "rank" and isinstance(node.value, (cst.Name, cst.Attribute)) and (
                (node.value.attr.value if isinstance(node.value, cst.Attribute) else node.value.value) == "rank_zero_only"
            )
        if isinstance(node, cst.Call) and not node.args:
            return self.imports.qualify(node.func) == "torch.distributed.get_rank"
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "int" and len(node.args) == 1:
            return self._is_rank_variable(node.args[0].value)  # int(os.environ["LOCAL_RANK"])
        return False

    def _is_rank_variable(self, node: cst.BaseExpression) -> bool:
        """``os.environ["LOCAL_RANK"]``, ``os.environ.get("RANK", 0)``, ``os.getenv("LOCAL_RANK")``."""
        key = None
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            if self.imports.qualify(node.value) == "os.environ":
                key = node.slice[0].slice.value
        elif isinstance(node, cst.Call) and node.args:
            qualified = self.imports.qualify(node.func)
            if qualified in ("os.environ.get", "os.getenv"):
                key = node.args[0].value
        return key is not None and string_value(key) in RANK_VARIABLES

    def _comparison(self, node: cst.Comparison) -> str | None:
        """``"zero"`` for rank == 0, ``"nonzero"`` for rank != 0 / rank > 0, else None."""
        if len(node.comparisons) != 1:
            return None
        left, target = node.left, node.comparisons[0]
        right, op = target.comparator, target.operator
        def zero(n):
            return (isinstance(n, cst.Integer) and n.evaluated_value == 0) or string_value(n) == "0"

        def rank(n):
            return self._is_rank(n) or self._is_rank_variable(n)

        if rank(left) and zero(right):
            rank_first = True
        elif zero(left) and rank(right):
            rank_first = False
        else:
            return None
        if isinstance(op, cst.Equal):
            return "zero"
        if isinstance(op, cst.NotEqual) or isinstance(op, cst.GreaterThan if rank_first else cst.LessThan):
            return "nonzero"
        return None

    def classify(self, test: cst.BaseExpression) -> tuple[str, bool] | None:
        """(``"zero"`` | ``"nonzero"``, pure) when ``test`` is true only on rank 0 / only off rank 0."""
        if isinstance(test, cst.Attribute) and test.attr.value == "is_global_zero":
            return "zero", True
        if self._is_rank(test):
            return "nonzero", True  # ``if self.global_rank:``
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            # ``is_global_zero == True`` / ``is True`` / ``== False``
            target = test.comparisons[0]
            truth = target.comparator.value if isinstance(target.comparator, cst.Name) else None
            if truth in ("True", "False") and isinstance(target.operator, (cst.Equal, cst.Is, cst.NotEqual, cst.IsNot)):
                inner = self.classify(test.left)
                if inner is not None:
                    negate = (truth == "False") != isinstance(target.operator, (cst.NotEqual, cst.IsNot))
                    return (("nonzero" if inner[0] == "zero" else "zero") if negate else inner[0]), inner[1]
        if isinstance(test, cst.Comparison):
            kind = self._comparison(test)
            return (kind, True) if kind else None
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self.classify(test.expression)
            if inner is not None and inner[1]:
                return ("nonzero" if inner[0] == "zero" else "zero"), True
            return None
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            for side in (test.left, test.right):
                inner = self.classify(side)
                if inner is not None and inner[0] == "zero":
                    return "zero", False
        return None

    def is_rank_zero_only_decorator(self, decorator: cst.Decorator) -> bool:
        expression = decorator.decorator
        if lightning_name(self.imports, expression) == "rank_zero_only":
            return True
        qualified = self.imports.qualify(expression) or ""
        return qualified.endswith(".rank_zero_only")


def _only_returns(block: cst.BaseSuite) -> bool:
    """The block is ``return`` (maybe beside ``pass``) and nothing else."""
    lines = block.body if isinstance(block, cst.IndentedBlock) else [block]
    small = []
    for line in lines:
        if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return False
        small.extend(line.body)
    return any(isinstance(s, cst.Return) for s in small) and all(isinstance(s, (cst.Return, cst.Pass)) for s in small)


def gated_statements(function: cst.FunctionDef, tests: RankTests) -> Iterator[Gated]:
    """Every simple statement of ``function`` that runs on rank 0 only, with its innermost guard."""
    guard = None
    if any(tests.is_rank_zero_only_decorator(d) for d in function.decorators):
        guard = Guard(function, "decorator", True)
    yield from _walk(function.body, tests, guard)


def gated_at_module_level(module: cst.Module, tests: RankTests) -> Iterator[Gated]:
    """Gated statements of a script's top level (functions are walked on their own)."""
    yield from _walk(module, tests, None)


def _walk(block: cst.BaseSuite, tests: RankTests, guard: Guard | None, guarded_block: bool = False) -> Iterator[Gated]:
    if isinstance(block, cst.SimpleStatementSuite):
        if guard is not None:
            # A one-line body (``if zero: self.log(...)``): a stand-in line, never a place to move from.
            line = cst.SimpleStatementLine(body=block.body)
            yield Gated(line, guard, (line,), False)
        return
    statements = tuple(block.body)
    current, direct = guard, guarded_block
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            if current is not None:
                yield Gated(statement, current, statements, direct)
            continue
        if isinstance(statement, cst.If):
            yield from _walk_if(statement, tests, current, standalone=True)
            kind = tests.classify(statement.test)
            if kind == ("nonzero", True) and statement.orelse is None and _only_returns(statement.body):
                # ``if not self.trainer.is_global_zero: return``: the rest of this block is rank 0's.
                current, direct = Guard(statement, "return", True, nested=current is not None), True
            continue
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue  # defined here, run elsewhere
        for inner in child_blocks(statement):
            yield from _walk(inner, tests, current)


def _walk_if(node: cst.If, tests: RankTests, outer: Guard | None, standalone: bool) -> Iterator[Gated]:
    kind = tests.classify(node.test)
    nested = outer is not None
    body_guard = Guard(node, "body", kind[1], standalone, nested) if kind and kind[0] == "zero" else None
    else_guard = Guard(node, "orelse", kind[1], standalone, nested) if kind and kind[0] == "nonzero" else None
    yield from _walk(node.body, tests, body_guard or outer, body_guard is not None)
    orelse = node.orelse
    if isinstance(orelse, cst.If):
        # ``if rank != 0: ... elif c: ...``: every later branch runs on rank 0 only.
        yield from _walk_if(orelse, tests, else_guard or outer, standalone=False)
    elif orelse is not None:
        yield from _walk(orelse.body, tests, else_guard or outer, else_guard is not None)


def mentions_rank(test: cst.BaseExpression, words: tuple[str, ...]) -> bool:
    code = cst.Module([]).code_for_node(test)
    return any(word in code for word in words)


def maybe_rank_gated(function: cst.FunctionDef, words: tuple[str, ...]) -> set[int]:
    """ids of the calls in ``function`` that may run on some ranks only: under any ``if`` whose test
    mentions a rank (one of ``words``: see ``rank_words``; understood or not, either branch), or
    after ``if <rank test>: return``.

    Where adding ``sync_dist=True`` would hang if the guess were wrong, a guess is not good enough.
    """
    calls: set[int] = set()

    def all_calls(node: cst.CSTNode) -> None:
        class Collect(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> None:
                calls.add(id(call))

        walk(node, Collect())

    class Walk(cst.CSTVisitor):
        def visit_If(self, node: cst.If) -> bool:
            if mentions_rank(node.test, words):
                all_calls(node)
                return False
            return True

        def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
            statements = list(node.body)
            for index, statement in enumerate(statements):
                if isinstance(statement, cst.If) and mentions_rank(statement.test, words) and _only_returns(statement.body):
                    for later in statements[index + 1 :]:
                        all_calls(later)
                    break
            return True

    walk(function, Walk())
    return calls
