"""Whether a class decorator of the program hands back the very class it decorates.

A decorator may return any object in place of the class (a wrapper, another class), so a decorated
class is unknown unless its decorator provably returns its argument. Registries (``REGISTRY[name] =
cls; return cls``) and markers (pl_bolts' ``@under_review()``, which sets ``cls.__init__`` and
``cls.__doc__`` and returns ``cls``) do. What a decorator stores on the class is not this module's
question: the stores of a hook's name anywhere in the program are read by the questions that care
(``ProjectFacts.stored_elsewhere``).

Read by the paths a class takes through the decorator: a branch on ``inspect.isclass(arg)`` or
``isinstance(arg, type)`` is taken, its opposite is not; any other branch may be; a loop, ``with``
or ``try`` may reach any ``return`` it holds. Every ``return`` reachable must return the
parameter, never rebound, and the body must not end without one (that returns None)."""

from __future__ import annotations

import ast
from collections.abc import Callable

from ddpfix.analysis.names import names_bound_at

#: The qualified name of a call's function through its file's imports (``ImportTable.qualify``).
Qualify = Callable[[ast.expr], "str | None"]

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def returns_its_class(decorator: ast.FunctionDef | ast.AsyncFunctionDef, qualify: Qualify) -> bool:
    """Every path a class takes through ``decorator`` returns that class (its first parameter)."""
    positional = [*decorator.args.posonlyargs, *decorator.args.args]
    if not positional or isinstance(decorator, ast.AsyncFunctionDef) or decorator.decorator_list:
        return False
    own = _own_nodes(decorator)
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in own):
        return False  # a generator returns no class
    name = positional[0].arg
    if sum(name in names_bound_at(node) for node in own) != 1:
        return False  # rebound, or declared ``global``/``nonlocal``
    if any(isinstance(node, ast.Nonlocal) and name in node.names for node in ast.walk(decorator)):
        return False  # a nested function may rebind it before the return (review helper-47, c03)
    if any(isinstance(node, ast.Attribute) and node.attr in ("__class__", "__bases__", "__dict__")
           and not isinstance(node.ctx, ast.Load) or isinstance(node, ast.Attribute) and node.attr == "__dict__"
           or isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
           and not (len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
                    and not str(node.args[1].value).startswith("__")) for node in ast.walk(decorator)):
        return False  # an ``__init__`` it installs may change what an instance is (review helper-49, c14)
    reached: list[ast.AST] = []
    returns, falls = _reachable_returns(decorator.body, name, qualify, reached)
    if not _only_kept(reached, name, qualify):
        return False
    return returns is not None and not falls and bool(returns) and all(
        isinstance(value, ast.Name) and value.id == name for value in returns)


#: Attributes a decorator may set on the class it hands back without changing what its hooks are:
#: its documentation and names, and ``__init__`` (what an ``__init__`` stores on the instance, a
#: hook too, is read by the questions that care: review helper-47, c08).
_KEPT_ATTRIBUTES = frozenset({"__doc__", "__init__", "__module__", "__qualname__", "__name__", "__annotations__"})


def _only_kept(reached: list[ast.AST], name: str, qualify: Qualify) -> bool:
    """Every use of the class (``name``) in the code a class reaches in the decorator (``reached``:
    its statements and tests, nested functions too; not a ``raise``), leaves its bases and
    hooks alone: it is returned, compared or tested (``inspect.isclass``), put into a container
    (``REGISTRY[key] = cls``, ``registry.append(cls)``), or its attributes read, and stored only
    among ``_KEPT_ATTRIBUTES`` or under a name that is no dunder (``cls.__bases__ = ...`` changes
    its method order: review helper-48, c10). Handed to any other function, it may be changed."""
    nodes = [node for part in reached for node in ast.walk(part)]
    parents = {id(child): node for node in nodes for child in ast.iter_child_nodes(node)}
    for node in nodes:
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        user = parents.get(id(node))
        if isinstance(user, (ast.Return, ast.Compare, ast.FormattedValue)):
            continue
        if isinstance(user, ast.Attribute):
            if isinstance(user.ctx, ast.Load) or user.attr in _KEPT_ATTRIBUTES or not user.attr.startswith("__"):
                if user.attr not in ("__dict__", "__bases__", "__class__"):
                    continue
            return False
        if isinstance(user, ast.Assign) and user.value is node and all(isinstance(t, ast.Subscript) for t in user.targets):
            continue
        if isinstance(user, ast.Call) and node in user.args:
            called = qualify(user.func) or (user.func.id if isinstance(user.func, ast.Name) else "")
            if called in ("inspect.isclass", "isinstance", "issubclass", "id", "repr", "str", "print") or (
                    isinstance(user.func, ast.Attribute) and user.func.attr in ("append", "add")
                    and isinstance(user.func.value, ast.Name)):
                continue
        return False
    return True


def inner_decorator(factory: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.FunctionDef | None:
    """The function a decorator factory (``under_review()``) returns on every path: a function it
    defines once, by ``def``, and returns by name; None otherwise."""
    if isinstance(factory, ast.AsyncFunctionDef) or factory.decorator_list:
        return None
    returns = [node for node in _own_nodes(factory) if isinstance(node, ast.Return)]
    if not returns or not all(isinstance(r.value, ast.Name) for r in returns) \
            or len({r.value.id for r in returns}) != 1 or not _ends_in_return(factory.body):
        return None
    name = returns[0].value.id
    defined = [s for s in factory.body if isinstance(s, ast.FunctionDef) and s.name == name]
    if len(defined) != 1 or sum(name in names_bound_at(node) for node in _own_nodes(factory)) != 1 \
            or any(isinstance(n, (ast.Nonlocal, ast.Global)) and name in n.names for n in ast.walk(factory)):
        return None  # (a nested ``nonlocal`` may rebind it: review helper-48, c11)
    return defined[0]


def _ends_in_return(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _own_nodes(function: ast.AST) -> list[ast.AST]:
    """The nodes of ``function``'s own code, and the names nested functions and classes bind in it
    (their bodies are not entered)."""
    found: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        found.append(node)
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef, ast.Lambda)):
            continue
        todo.extend(ast.iter_child_nodes(node))
    return found


def _class_test(test: ast.expr, name: str, qualify: Qualify) -> bool | None:
    """True where ``test`` holds for any class bound to ``name``, False where it fails for every
    one, None where it may go either way."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _class_test(test.operand, name, qualify)
        return None if inner is None else not inner
    if not isinstance(test, ast.Call) or not test.args or test.keywords:
        return None
    argument = test.args[0]
    if not (isinstance(argument, ast.Name) and argument.id == name):
        return None
    func = test.func
    if qualify(func) == "inspect.isclass" and len(test.args) == 1:
        return True
    if isinstance(func, ast.Name) and func.id == "isinstance" and len(test.args) == 2 \
            and isinstance(test.args[1], ast.Name) and test.args[1].id == "type":
        return True
    return None


def _reachable_returns(body: list[ast.stmt], name: str, qualify: Qualify,
                       reached: list[ast.AST]) -> tuple[list[ast.expr | None] | None, bool]:
    """(the values of the ``return`` statements a class may reach in ``body``, whether it may run
    past its end); values None where a statement is not read. ``reached`` gets the statements (an
    ``if``'s test, not its branches) a class may run."""
    returns: list[ast.expr | None] = []
    for statement in body:
        if isinstance(statement, ast.Return):
            reached.append(statement)
            return [*returns, statement.value], False
        if isinstance(statement, ast.Raise):
            return returns, False
        if not isinstance(statement, ast.If):
            reached.append(statement)
        if isinstance(statement, ast.If):
            reached.append(statement.test)
            taken = _class_test(statement.test, name, qualify)
            branches = [statement.body] if taken is True else [statement.orelse] if taken is False else [
                statement.body, statement.orelse]
            falls = False
            for branch in branches:
                found, through = _reachable_returns(branch, name, qualify, reached)
                if found is None:
                    return None, True
                returns += found
                falls = falls or through
            if not falls:
                return returns, False
            continue
        if isinstance(statement, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match)):
            returns += [n.value for n in _own_nodes(statement) if isinstance(n, ast.Return)]
    return returns, True
