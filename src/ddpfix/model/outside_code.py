"""Where a program may import or run code from folders outside itself: ``sys.path`` changed to a
folder outside the program, a file run or loaded by a path outside it, ``PYTHONPATH`` set by a
launcher to such a folder. No fact covers that code, so a proof that rests on an absence ("no file
switches the default device") does not hold where it may run (review helper-44, c03/c11/c12/c16/c17).

Paths are read statically: a literal (relative to the file's folder, the working directory it is
run from as a script; Sphinx runs ``conf.py`` there too), ``__file__``, ``os.path.dirname/abspath/realpath/normpath/
join``, ``pathlib.Path(...)``, ``.parent``, ``.resolve()``, ``/``, ``str(...)``. A path built
otherwise is unknown, and may lie anywhere."""

from __future__ import annotations

import ast
import os
import re

from ddpfix.imports import dotted_name

#: The calls that add a folder to the import path or run a file by its path, and which argument is the path.
_PATH_ARGUMENT = {"insert": 1, "append": 0, "addsitedir": 0, "run_path": 0, "spec_from_file_location": 1,
                  "SourceFileLoader": 1, "extend": None}
_WORDS = re.compile(rb"sys\.path|addsitedir|run_path|spec_from_file_location|SourceFileLoader|exec[ \t]*\([ \t]*open")


def may_reach_outside(data: bytes) -> bool:
    """The text names a way to bring in code by a path (the facts pass's cheap test; ``reach_in_file``
    reads the file when a proof asks)."""
    return (b"path" in data or b"exec" in data or b"SourceFileLoader" in data) and _WORDS.search(data) is not None


def reach_in_file(path: str, data: bytes, root: str) -> tuple[int, str] | None:
    """(line, what) of the first place in the Python file ``path`` (its bytes ``data``) that may
    import or run code from outside the folder ``root``; None where none does."""
    if _WORDS.search(data) is None:
        return None
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        match = _WORDS.search(data)
        return data.count(b"\n", 0, match.start()) + 1, match.group().decode("ascii", "replace")
    folder = os.path.dirname(os.path.realpath(path))
    names = _bound_once(tree)
    for node in ast.walk(tree):
        found = _reach(node, path, folder, root, names)
        if found is not None:
            return node.lineno, found
    return None


def _bound_once(tree: ast.Module) -> dict[str, ast.expr]:
    """Names the file binds exactly once, by a plain assignment (``HERE = Path(__file__).parent``):
    a path built from them is read through them."""
    values: dict[str, ast.expr] = {}
    counts: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            counts[node.id] = counts.get(node.id, 0) + 1
        elif isinstance(node, (ast.arg, ast.alias)):
            name = node.arg if isinstance(node, ast.arg) else (node.asname or node.name).split(".")[0]
            counts[name] = counts.get(name, 0) + 1
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = node.value
    return {name: value for name, value in values.items() if counts.get(name) == 1}


def _reach(node: ast.AST, path: str, folder: str, root: str, names: dict[str, ast.expr]) -> str | None:
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(dotted_name(t) == "sys.path" for t in targets):
            return "`sys.path` set"
        return None
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name == "exec" and node.args and isinstance(node.args[0], ast.Call):
        inner = node.args[0]  # ``exec(open(p).read())``
        while isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):
            inner = inner.func.value
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "open":
            return _outside(inner.args[0] if inner.args else None, path, folder, root, "`exec(open(...))`", names)
        return None
    if name not in _PATH_ARGUMENT:
        return None
    if name in ("insert", "append", "extend") and not (isinstance(func, ast.Attribute) and dotted_name(func.value) == "sys.path"):
        return None
    index = _PATH_ARGUMENT[name]
    shown = f"`sys.path.{name}(...)`" if name in ("insert", "append", "extend") else f"`{name}(...)`"
    if index is None:
        return f"{shown}"  # ``sys.path.extend(paths)``: folders not read
    argument = node.args[index] if len(node.args) > index else None
    if argument is None and name in ("spec_from_file_location", "SourceFileLoader"):
        argument = next((k.value for k in node.keywords if k.arg in ("location", "path")), None)
    return _outside(argument, path, folder, root, shown, names)


def _outside(argument: ast.expr | None, path: str, folder: str, root: str, shown: str,
             names: dict[str, ast.expr]) -> str | None:
    places = _paths(argument, path, folder, root, names) if argument is not None else None
    if places is None:
        return f"{shown} with a path built at run time"
    for place in places:
        real = os.path.normpath(place)
        if not (real == root or real.startswith(root + os.sep)):
            return f"{shown} of `{os.path.relpath(real)}`, outside the program"
    return None


def _paths(node: ast.expr, path: str, folder: str, root: str, names: dict[str, ast.expr],
           seen: frozenset[str] = frozenset()) -> set[str] | None:
    """The absolute paths ``node`` may evaluate to (None: not known)."""
    if isinstance(node, ast.Name) and node.id in names and node.id not in seen:
        return _paths(names[node.id], path, folder, root, names, seen | {node.id})
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if os.path.isabs(node.value):
            return {node.value}
        return {os.path.join(folder, node.value)}  # run from its own folder (a Sphinx ``conf.py``, a script)
    if isinstance(node, ast.Name) and node.id == "__file__":
        return {os.path.realpath(path)}
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _paths(node.value, path, folder, root, names, seen)
        return None if inner is None else {os.path.dirname(p) for p in inner}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _paths(node.left, path, folder, root, names, seen), _joined_part(node.right)
        return None if left is None or right is None else {os.path.join(p, right) for p in left}
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if isinstance(node.func, ast.Attribute) and last in ("resolve", "absolute", "expanduser") and not node.args:
        return _paths(node.func.value, path, folder, root, names, seen)
    if last in ("dirname", "abspath", "realpath", "normpath", "Path", "PurePath", "str", "fspath") and len(node.args) == 1:
        inner = _paths(node.args[0], path, folder, root, names, seen)
        if inner is None:
            return None
        return {os.path.dirname(p) for p in inner} if last == "dirname" else inner
    if last == "join" and node.args:
        first = _paths(node.args[0], path, folder, root, names, seen)
        rest = [_joined_part(a) for a in node.args[1:]]
        if first is None or any(r is None for r in rest):
            return None
        return {os.path.join(p, *rest) for p in first}
    return None


def _joined_part(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


_PYTHONPATH = re.compile(rb"PYTHONPATH[ \t]*[=:][ \t]*[\"']?([^\s\"';&|]*)")


def reach_in_launcher(path: str, data: bytes, root: str) -> tuple[int, str] | None:
    """(line, what) where a launcher (a shell script, Makefile, Dockerfile, ``.env``) sets
    ``PYTHONPATH`` to a folder outside ``root`` or one it builds at run time; None where it does not."""
    folder = os.path.dirname(os.path.realpath(path))
    for match in _PYTHONPATH.finditer(data):
        line = data.count(b"\n", 0, match.start()) + 1
        for entry in match.group(1).decode("utf-8", "replace").split(":"):
            entry = entry.strip()
            if not entry or entry in ("$PYTHONPATH", "${PYTHONPATH}", "${PYTHONPATH:-}"):
                continue
            if entry in (".", "$PWD", "${PWD}", "$(pwd)", "`pwd`"):
                continue  # the working directory: the launcher's folder or the program's, as read
            if "site-packages" in entry or "dist-packages" in entry:
                continue  # installed distributions: the environment's, importable anyway
            if "$" in entry or "`" in entry:
                return line, f"`PYTHONPATH` set to `{entry}`, built at run time"
            for place in ({entry} if os.path.isabs(entry) else {os.path.join(folder, entry)}):
                real = os.path.normpath(place)
                if not (real == root or real.startswith(root + os.sep)):
                    return line, f"`PYTHONPATH` set to `{entry}`, outside the program"
    return None
