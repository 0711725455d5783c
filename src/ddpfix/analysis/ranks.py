"""Rank guards on CPython's tree: ``_ranks`` for the rules that read it (``Rule.check``).

The same guards and the same answers as ``_ranks.RankTests`` / ``gated_statements`` give on LibCST's
tree: ``tests/test_tree_ranks.py`` compares the statements both find gated, guard by guard, over
every fixture and a set of spellings. Where the trees differ, the difference is spelled out below.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ddpfix.imports import TREE_COMPOUND, ImportTable
from ddpfix.analysis.ast_shapes import arguments, child_blocks, every_node, last_name, statements
from ddpfix.analysis.lightning import lightning_name
from ddpfix.records import record

RANK_ATTRIBUTES = frozenset({"global_rank", "local_rank"})
RANK_VARIABLES = frozenset({"LOCAL_RANK", "RANK", "SLURM_PROCID", "NODE_RANK"})
#: Rank variables that Lightning's own launcher (``subprocess_script.py``: ``LOCAL_RANK``,
#: ``NODE_RANK``, ``WORLD_SIZE``) does not set: torchrun and SLURM do. A test on one of them holds on
#: every rank (with a default) or fails (without) under ``Trainer(strategy="ddp")`` launched by
#: Lightning, so it is a rank guard only under another launcher: which one runs is unknown.
#: ``NODE_RANK`` is the node's index, the same on every process of a node (``subprocess_script.py``
#: sets it so): ``NODE_RANK == 0`` holds on every rank of the first node, so it gates nothing on one
#: machine and whole nodes on several. Whether it gates rank 0 alone depends on the topology.
LAUNCHER_VARIABLES = frozenset({"RANK", "SLURM_PROCID", "NODE_RANK"})
#: Prefilter words of the rules about rank guards: a file without any of them has no rank guard.
#: ``RANK`` and ``SLURM_PROCID`` stand for the environment variables: ``int(os.environ["RANK"]) == 0``
#: may be a file's only rank test (``RANK`` is in ``LOCAL_RANK`` and ``NODE_RANK`` as well).
RANK_TRIGGERS = ("is_global_zero", "global_rank", "local_rank", "rank_zero_only", "get_rank", "RANK", "SLURM_PROCID")
#: Words that, in an ``if`` test, suggest a rank condition even where the test is not understood.
RANK_WORDS = ("rank", "is_global_zero", "RANK", "SLURM_PROCID")


@record(frozen=True)
class Guard:
    """What gates a statement: an ``if`` (its body, its ``else``, or the rest of the block after an
    early return) or a ``@rank_zero_only`` decorator (``node`` is then the function)."""

    node: ast.AST
    branch: str  # "body" | "orelse" | "return" | "decorator"
    pure: bool  # the test is only a rank test (no ``and batch_idx == 0``)
    standalone: bool = True  # the ``if`` stands in a block (an ``elif`` does not): code can go next to it
    nested: bool = False  # inside another rank guard: moving out of this one is not enough
    #: The environment variable the test reads that only some launchers set (``LAUNCHER_VARIABLES``):
    #: the guard gates rank 0 under torchrun or SLURM, and nothing under Lightning's own launcher.
    launcher: str | None = None


def rank_words(imports: ImportTable) -> tuple[str, ...]:
    """``RANK_WORDS`` and the names the file's imports give to something named for a rank
    (``from torch.distributed import get_rank as where``): a test that calls ``where()`` may be a
    rank test in a shape ``RankTests`` does not understand (``where() == 0 or debug``)."""
    aliases = {
        name for name, found in imports.targets.items()
        if any("rank" in full.rsplit(".", 1)[-1].lower() for full in found)
    }
    return RANK_WORDS + tuple(sorted(aliases))


_FLIPPED = {"zero": "nonzero", "nonzero": "zero"}


def string_value(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _zero(node: ast.expr) -> bool:
    # ``True == 0`` in Python, and ``True`` is a Constant here (a Name in LibCST): ints only.
    return (isinstance(node, ast.Constant) and type(node.value) is int and node.value == 0) or string_value(node) == "0"


class TreeRankTests:
    """``_ranks.RankTests`` on CPython's tree."""

    def __init__(self, imports: ImportTable, tree: ast.Module | None = None):
        self.imports = imports
        # The file's own functions that only return a rank test (``def is_main_process(): return
        # not dist.is_initialized() or dist.get_rank() == 0``): a call of one is that test.
        self._tests: dict[str, ast.expr] = {}
        for statement in tree.body if tree is not None else ():
            if (isinstance(statement, ast.FunctionDef) and not statement.args.args and not statement.decorator_list
                    and len(statement.body) == 1 and isinstance(statement.body[0], ast.Return) and statement.body[0].value):
                self._tests[statement.name] = statement.body[0].value
        self._tree = tree
        self._named: tuple[dict[str, ast.expr], dict[int, ast.expr]] | None = None
        self._active: set[int] = set()  # tests being read through (a name bound to itself is no test)

    def _names(self) -> tuple[dict[str, ast.expr], dict[int, ast.expr]]:
        """Properties of the file's classes that only return a rank test (``self.is_main``), and the
        names a function binds once before a test reads them (``main = self.trainer.is_global_zero``):
        id of the Name read -> its one value. Read on first use, kept on the tree."""
        if self._named is None:
            tree = self._tree
            known = tree.__dict__.get("_ddpfix_rank_names") if tree is not None else None
            if known is None:
                properties: dict[str, ast.expr] = {}
                bound: dict[int, ast.expr] = {}
                for node in every_node(tree) if tree is not None else ():
                    if isinstance(node, ast.ClassDef):
                        for item in node.body:
                            if (isinstance(item, ast.FunctionDef) and len(item.body) == 1
                                    and isinstance(item.body[0], ast.Return) and item.body[0].value is not None
                                    and [last_name(d) for d in item.decorator_list] == ["property"]):
                                properties[item.name] = item.body[0].value
                    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        _bind_locals(node, bound)
                known = (properties, bound)
                if tree is not None:
                    tree._ddpfix_rank_names = known
            self._named = known
        return self._named

    def _through(self, key: int, value: ast.expr):
        """``classify(value)`` for a name or property read once (``key``: what is read through)."""
        if key in self._active:
            return None
        self._active.add(key)
        try:
            return self.classify(value)
        finally:
            self._active.discard(key)


    def _is_rank(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Attribute):
            if node.attr in RANK_ATTRIBUTES:
                return True
            return node.attr == "rank" and isinstance(node.value, (ast.Name, ast.Attribute)) and (
                last_name(node.value) == "rank_zero_only")
        if isinstance(node, ast.Call):
            given = arguments(node)
            if not given:
                return self.imports.qualify(node.func) == "torch.distributed.get_rank"
            if isinstance(node.func, ast.Name) and node.func.id == "int" and len(given) == 1:
                return self._is_rank_variable(given[0])  # int(os.environ["LOCAL_RANK"])
        return False

    def _is_rank_variable(self, node: ast.expr) -> bool:
        """``os.environ["LOCAL_RANK"]``, ``os.environ.get("RANK", 0)``, ``os.getenv("LOCAL_RANK")``.
        (LibCST also takes ``os.environ["RANK",]``, a tuple key that fails at run time; this does not.)"""
        key = None
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, (ast.Slice, ast.Tuple)):
            if self.imports.qualify(node.value) == "os.environ":
                key = node.slice
        elif isinstance(node, ast.Call):
            given = arguments(node)
            if given and self.imports.qualify(node.func) in ("os.environ.get", "os.getenv"):
                key = given[0]
        return key is not None and string_value(key) in RANK_VARIABLES

    def _rank(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            node = self._names()[1].get(id(node), node)  # ``rank = dist.get_rank(); if rank == 0:``
        if (isinstance(node, ast.IfExp) and self._distributed_check(node.test) and _zero(node.orelse)):
            node = node.body  # ``dist.get_rank() if dist.is_initialized() else 0``: rank 0 in one process
        return self._is_rank(node) or self._is_rank_variable(node)

    def launcher_variable(self, test: ast.expr) -> str | None:
        """The ``LAUNCHER_VARIABLES`` entry a test reads, if any (``os.environ.get("RANK", 0) == 0``)."""
        for node in ast.walk(test):
            if isinstance(node, (ast.Subscript, ast.Call)) and self._is_rank_variable(node):
                key = node.slice if isinstance(node, ast.Subscript) else arguments(node)[0]
                if string_value(key) in LAUNCHER_VARIABLES:
                    return string_value(key)
        return None

    def reads_local_rank(self, test: ast.expr, seen: frozenset[int] = frozenset()) -> bool:
        """The test reads a rank counted within a node (``self.local_rank``, ``LOCAL_RANK``,
        ``is_local_zero``), also through what ``classify`` reads through: a local bound once, a
        property of the file's class, a function of the file that returns the test (review
        helper-46, c04). On several nodes it holds on each node's first process, not rank 0 alone."""
        properties, bound = self._names()
        for node in ast.walk(test):
            if isinstance(node, ast.Attribute) and node.attr in ("local_rank", "is_local_zero"):
                return True
            if isinstance(node, (ast.Subscript, ast.Call)) and self._is_rank_variable(node):
                key = node.slice if isinstance(node, ast.Subscript) else (arguments(node) or [None])[0]
                if key is not None and string_value(key) == "LOCAL_RANK":
                    return True
            if isinstance(node, ast.Constant) and node.value == "LOCAL_RANK":
                return True  # ``os.environ.get("LOCAL_RANK", 0)`` however it is read
            through = None
            if isinstance(node, ast.Name):
                through = bound.get(id(node))
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                through = properties.get(node.attr)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self._tests:
                through = self._tests[node.func.id]
            if through is not None and id(through) not in seen and self.reads_local_rank(through, seen | {id(through)}):
                return True
        return False

    def _distributed_check(self, node: ast.expr) -> bool:
        """``dist.is_initialized()`` / ``dist.is_available()``, or both and-ed: True on every rank once
        the process group runs."""
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            return all(self._distributed_check(value) for value in node.values)
        return (isinstance(node, ast.Call) and not arguments(node)
                and self.imports.qualify(node.func) in ("torch.distributed.is_initialized", "torch.distributed.is_available"))

    def _same_on_every_rank_when_distributed(self, node: ast.expr) -> bool:
        """``not dist.is_initialized()``, ``not (dist.is_available() and dist.is_initialized())``: False
        on every rank once the process group runs (so ``<it> or <rank 0 test>`` is the rank test
        there), True in one process."""
        return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and self._distributed_check(node.operand)

    def _comparison(self, node: ast.Compare) -> str | None:
        """``"zero"`` for rank == 0, ``"nonzero"`` for rank != 0 / rank > 0, else None."""
        if len(node.ops) != 1:
            return None
        left, right, op = node.left, node.comparators[0], node.ops[0]
        if self._rank(left) and _zero(right):
            rank_first = True
        elif _zero(left) and self._rank(right):
            rank_first = False
        else:
            return None
        if isinstance(op, ast.Eq):
            return "zero"
        if isinstance(op, ast.NotEq) or isinstance(op, ast.Gt if rank_first else ast.Lt):
            return "nonzero"
        return None

    def _one_comparison(self, node: ast.Compare) -> str | None:
        """``rank < 1`` is rank 0's test, ``rank >= 1`` the others'."""
        if len(node.ops) != 1:
            return None
        left, right, op = node.left, node.comparators[0], node.ops[0]
        one = lambda n: isinstance(n, ast.Constant) and type(n.value) is int and n.value == 1  # noqa: E731
        if self._rank(left) and one(right):
            return "zero" if isinstance(op, ast.Lt) else "nonzero" if isinstance(op, ast.GtE) else None
        if one(left) and self._rank(right):
            return "zero" if isinstance(op, ast.Gt) else "nonzero" if isinstance(op, ast.LtE) else None
        return None

    def classify(self, test: ast.expr) -> tuple[str, bool] | None:
        """(``"zero"`` | ``"nonzero"``, pure) when ``test`` is true only on rank 0 / only off rank 0."""
        if isinstance(test, ast.Name):
            value = self._names()[1].get(id(test))
            if value is not None:
                return self._through(id(test), value)
        if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name) and test.value.id == "self":
            value = self._names()[0].get(test.attr)
            if value is not None:
                return self._through(id(value), value)
        if isinstance(test, ast.Attribute) and test.attr == "is_global_zero":
            return "zero", True
        if self._is_rank(test):
            return "nonzero", True  # ``if self.global_rank:``
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            # ``is_global_zero == True`` / ``is True`` / ``== False``
            op, comparator = test.ops[0], test.comparators[0]
            truth = comparator.value if isinstance(comparator, ast.Constant) and isinstance(comparator.value, bool) else None
            if truth is not None and isinstance(op, (ast.Eq, ast.Is, ast.NotEq, ast.IsNot)):
                inner = self.classify(test.left)
                if inner is not None:
                    negate = (truth is False) != isinstance(op, (ast.NotEq, ast.IsNot))
                    return (_FLIPPED[inner[0]] if negate else inner[0]), inner[1]
            kind = self._comparison(test) or self._one_comparison(test)
            return (kind, True) if kind else None
        if (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and not arguments(test)
                and test.func.id in self._tests and self.imports.qualify(test.func) is None):
            inner = self._tests[test.func.id]
            return self._through(id(inner), inner)  # read once: a function that calls itself is no test
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.classify(test.operand)
            return (_FLIPPED[inner[0]], True) if inner is not None and inner[1] else None
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
            # ``not dist.is_initialized() or dist.get_rank() == 0``: rank 0 alone under DDP, and
            # every statement runs in one process as it did, so the test is read as a pure rank test.
            return self._one_rank_test_beside(test, "zero", self._same_on_every_rank_when_distributed)
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            # ``dist.is_initialized() and dist.get_rank() != 0``: the other ranks under DDP, nobody in
            # one process (where everything runs, as without the test).
            found = self._one_rank_test_beside(test, "nonzero", self._distributed_check)
            if found is not None:
                return found
            # LibCST nests ``a and b and c`` two by two; any side that is a rank-0 test counts there too.
            if any((self.classify(value) or ("",))[0] == "zero" for value in test.values):
                return "zero", False
        return None

    def _one_rank_test_beside(self, test: ast.BoolOp, kind: str, uniform) -> tuple[str, bool] | None:
        """``(kind, pure)`` where exactly one side of ``test`` is a ``kind`` rank test and every other
        side passes ``uniform`` (the same on every rank once distributed); else None."""
        kinds = [self.classify(value) for value in test.values]
        matching = [found for found in kinds if found is not None and found[0] == kind]
        rest = [value for value, found in zip(test.values, kinds) if found is None or found[0] != kind]
        if len(matching) == 1 and all(uniform(value) for value in rest):
            return kind, matching[0][1]
        return None

    def is_rank_zero_only_decorator(self, expression: ast.expr) -> bool:
        if lightning_name(self.imports, expression) == "rank_zero_only":
            return True
        return (self.imports.qualify(expression) or "").endswith(".rank_zero_only")


def _bind_locals(function: ast.FunctionDef | ast.AsyncFunctionDef, bound: dict[int, ast.expr]) -> None:
    """Names ``function`` binds exactly once, by a plain assignment, read in a later ``if`` test."""
    values: dict[str, list] = {}
    tests: list[ast.If] = []
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If):
            tests.append(node)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values.setdefault(node.targets[0].id, []).append(node)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            values.setdefault(node.id, []).append(None)
        elif isinstance(node, ast.arg):
            values.setdefault(node.arg, []).append(None)
        pending.extend(ast.iter_child_nodes(node))
    for argument in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs):
        values.setdefault(argument.arg, []).append(None)
    for statement in tests:
        for name in ast.walk(statement.test):
            if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load):
                bound_here = values.get(name.id, ())
                # one Assign, and its Name target: the two entries one assignment makes
                assigns = [b for b in bound_here if b is not None]
                if len(assigns) == 1 and len(bound_here) == 2 and assigns[0].lineno < statement.lineno:
                    bound[id(name)] = assigns[0].value


def only_returns(block: list[ast.stmt]) -> bool:
    """The block is ``return`` (maybe beside ``pass``) and nothing else."""
    return any(isinstance(s, ast.Return) for s in block) and all(isinstance(s, (ast.Return, ast.Pass)) for s in block)


def functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function of the file, methods and nested ones included (``_lightning.all_functions``)."""
    return [s for s in statements(tree) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]


def gated_statements(function: ast.FunctionDef | ast.AsyncFunctionDef, tests: TreeRankTests) -> Iterator[tuple[ast.stmt, Guard]]:
    """Every simple statement of ``function`` that runs on rank 0 only, with its innermost guard."""
    guard = None
    if any(tests.is_rank_zero_only_decorator(d) for d in function.decorator_list):
        guard = Guard(function, "decorator", True)
    yield from _walk(function.body, tests, guard)


def gated_at_module_level(tree: ast.Module, tests: TreeRankTests) -> Iterator[tuple[ast.stmt, Guard]]:
    """Gated statements of a script's top level (functions are walked on their own)."""
    yield from _walk(tree.body, tests, None)


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _walk(block: list[ast.stmt], tests: TreeRankTests, guard: Guard | None) -> Iterator[tuple[ast.stmt, Guard]]:
    current = guard
    for statement in block:
        if isinstance(statement, _DEFINITIONS):
            continue  # defined here, run elsewhere
        if isinstance(statement, ast.If):
            yield from _walk_if(statement, tests, current)
            kind = tests.classify(statement.test)
            if kind == ("nonzero", True) and not statement.orelse and only_returns(statement.body):
                # ``if not self.trainer.is_global_zero: return``: the rest of this block is rank 0's.
                current = Guard(statement, "return", True, nested=current is not None,
                                launcher=tests.launcher_variable(statement.test))
            continue
        if isinstance(statement, TREE_COMPOUND):
            for inner in child_blocks(statement):
                yield from _walk(inner, tests, current)
        elif current is not None:
            yield statement, current


def _walk_if(node: ast.If, tests: TreeRankTests, outer: Guard | None) -> Iterator[tuple[ast.stmt, Guard]]:
    # ``elif`` and ``else: if`` are the same tree here and may be told apart in LibCST's; the
    # statements gated and their guards are the same either way (``_ranks._walk_if``).
    kind = tests.classify(node.test)
    launcher = tests.launcher_variable(node.test) if kind else None
    body_guard = Guard(node, "body", kind[1], launcher=launcher) if kind and kind[0] == "zero" else None
    else_guard = Guard(node, "orelse", kind[1], launcher=launcher) if kind and kind[0] == "nonzero" else None
    yield from _walk(node.body, tests, body_guard or outer)
    yield from _walk(node.orelse, tests, else_guard or outer)
