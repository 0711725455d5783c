"""Adding an import a fix needs, once, where the file's imports are."""

from __future__ import annotations

import libcst as cst

from ddpfix.ipython_syntax import MASK_PREFIX


def _is_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body
    )


def _is_ipython_mask(statement: cst.CSTNode) -> bool:
    """A notebook's line of IPython syntax, masked (``!pip install x`` as ``_ddpfix_..._0()``): an
    import added after it, not above the install or ``%env`` that the imports may need."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return False
    value = statement.body[0].value if isinstance(statement.body[0], cst.Expr) else None
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
            and value.func.value.startswith(MASK_PREFIX) and not value.args)


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def has_plain_import(module: cst.Module, name: str) -> bool:
    """``import <name>`` at the top level (an alias or a ``from`` import does not bind the name)."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import) and any(
                    a.asname is None and isinstance(a.name, cst.Name) and a.name.value == name for a in small.names
                ):
                    return True
    return False


def ensure_import(module: cst.Module, name: str) -> cst.Module:
    """``module`` with ``import <name>`` after its leading imports (or its docstring; a notebook's
    masked IPython lines among them count with them), unless it has one."""
    if has_plain_import(module, name):
        return module
    body = list(module.body)
    position = 0
    for index, statement in enumerate(body):
        if _is_import(statement) or _is_ipython_mask(statement):
            position = index + 1
        elif index == 0 and _is_docstring(statement):
            position = 1
        else:
            break
    new = cst.SimpleStatementLine([cst.Import([cst.ImportAlias(cst.Name(name))])])
    body.insert(position, new)
    return module.with_changes(body=body)
