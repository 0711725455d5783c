"""Whether a call of a helper can reach a statement of it, given the constants the call passes:
``self._shared_step(batch, "val")`` from ``validation_step`` reaches the ``self.log`` under
``if stage == "val":`` and not the one under ``if stage == "train":``.

Only what is certain is decided: a parameter bound to a literal by the call (or by its literal
default), never bound again in the helper, tested by the ``if`` statements around the statement
(``==``, ``!=``, ``in``, ``not in``, ``is``, ``is not`` against literals, ``not``, ``and``, ``or``, the
parameter's own truth). Any other test may go either way.
"""

from __future__ import annotations

import ast

from ddpfix.analysis.names import bound_names
from ddpfix.ast_walk import walk

_UNKNOWN = object()


def reaches(function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.AST, call: ast.Call) -> bool:
    """False only where ``call`` (a call of ``function`` through an instance: ``self.f(...)``, whose
    first parameter is the instance) binds parameters to constants that make an ``if`` around
    ``node`` take the other branch; True otherwise."""
    constants = bound_constants(function, call)
    if not constants:
        return True
    for test, taken in guards_to(function.body, node) or ():
        value = evaluate(test, constants)
        if value is not _UNKNOWN and bool(value) != taken:
            return False
    return True


def parameters_bound(function: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call,
                     instance: bool = True) -> dict[str, ast.expr] | None:
    """Parameter -> the expression ``call`` binds it to: what it passes (by position or keyword),
    else the parameter's default. ``instance``: the call is through an instance (``self.f(...)``),
    which binds the first parameter itself. None where a call may bind any (``*args``, ``**kw``,
    more positional arguments than parameters)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    arguments = function.args
    positional = [p.arg for p in [*arguments.posonlyargs, *arguments.args]][1 if instance else 0:]
    if len(call.args) > len(positional):
        return None
    bound: dict[str, ast.expr] = dict(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
    bound.update({p.arg: d for p, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
    bound.update(zip(positional, call.args))
    names = set(positional) | {p.arg for p in arguments.kwonlyargs}
    bound.update({k.arg: k.value for k in call.keywords if k.arg in names})
    return bound


def bound_constants(function: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call) -> dict[str, object]:
    """Parameter -> the literal ``call`` (through an instance) binds it to (``parameters_bound``),
    for the parameters the function never binds again."""
    rebound = _rebound_names(function)
    return {name: value.value for name, value in (parameters_bound(function, call) or {}).items()
            if isinstance(value, ast.Constant) and name not in rebound}


def _rebound_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names bound anywhere in the function's body, by any form (an assignment, a ``for``, ``with``
    or ``except`` target, a ``match`` capture, an import, a nested definition or its parameters)."""
    return set().union(*(bound_names(statement) for statement in function.body))


def guards_to(body: list[ast.stmt], node: ast.AST) -> list[tuple[ast.expr, bool]] | None:
    """The tests of the ``if`` statements ``node`` lies under, each with the branch it lies in
    (True: the body); None where ``node`` is not in ``body``. Other compound statements are passed
    through (a loop's or ``with``'s body, a ``try``'s parts)."""
    for statement in body:
        if statement is node:
            return []
        if not any(n is node for n in walk(statement)):
            continue
        if isinstance(statement, ast.If):
            for branch, taken in ((statement.body, True), (statement.orelse, False)):
                inner = guards_to(branch, node)
                if inner is not None:
                    return [(statement.test, taken), *inner]
            return []  # in the test itself
        for field in ("body", "orelse", "finalbody", "handlers"):
            part = getattr(statement, field, None)
            if isinstance(part, list) and part:
                blocks = [h.body for h in part] if field == "handlers" else [part]
                for block in blocks:
                    inner = guards_to(block, node)
                    if inner is not None:
                        return inner
        return []  # in an expression of the statement
    return None


def evaluate(test: ast.expr, constants: dict[str, object]) -> object:
    """The value of ``test`` with ``constants`` bound; ``_UNKNOWN`` where it is not certain."""
    if isinstance(test, ast.Constant):
        return test.value
    if isinstance(test, ast.Name):
        return constants.get(test.id, _UNKNOWN)
    if isinstance(test, (ast.Tuple, ast.List, ast.Set)):
        items = [evaluate(e, constants) for e in test.elts]
        return _UNKNOWN if any(i is _UNKNOWN for i in items) else tuple(items)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        value = evaluate(test.operand, constants)
        return _UNKNOWN if value is _UNKNOWN else not value
    if isinstance(test, ast.BoolOp):
        # Python's own short circuit: the first value that decides, where those before it are known.
        for value in (evaluate(v, constants) for v in test.values):
            if value is _UNKNOWN:
                return _UNKNOWN
            if bool(value) == isinstance(test.op, ast.Or):
                return value
        return value
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right = evaluate(test.left, constants), evaluate(test.comparators[0], constants)
        if left is _UNKNOWN or right is _UNKNOWN or not _plain(left) or not _plain(right):
            return _UNKNOWN
        op = test.ops[0]
        try:
            if isinstance(op, (ast.In, ast.NotIn)):
                if not isinstance(right, tuple):
                    return _UNKNOWN
                return (left in right) == isinstance(op, ast.In)
            comparisons = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
                           ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b}
            compare = comparisons.get(type(op))
            if isinstance(op, (ast.Is, ast.IsNot)) and not any(v is None or type(v) is bool for v in (left, right)):
                return _UNKNOWN  # two equal strings may or may not be one object
            return _UNKNOWN if compare is None else compare(left, right)
        except TypeError:
            return _UNKNOWN
    return _UNKNOWN


def _plain(value: object) -> bool:
    """A literal whose comparisons are Python's own (no user ``__eq__``)."""
    if isinstance(value, tuple):
        return all(_plain(v) for v in value)
    return value is None or type(value) in (str, int, bool, float, bytes)
