"""Where a program may import or run code from folders outside itself: ``sys.path`` changed to a
folder outside the program, a file run or loaded by a path outside it, ``PYTHONPATH`` set by a
launcher to such a folder. No fact covers that code, so a proof that rests on an absence ("no file
switches the default device") does not hold where it may run (review helper-44, c03/c11/c12/c16/c17).

Paths are read statically: a literal (relative to the file's folder, the working directory it is
run from as a script; Sphinx runs ``conf.py`` there too), ``__file__``, ``os.path.dirname/abspath/realpath/normpath/
join``, ``pathlib.Path(...)``, ``.parent``, ``.parents[n]``, ``.resolve()``, ``/``, ``str(...)``. A path built
otherwise is unknown, and may lie anywhere."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable

from ddpfix.analysis.names import names_bound_at
from ddpfix.imports import dotted_name
from ddpfix.lazy_regex import lazy_compile

#: What may name a way to bring in code by a path: ``sys`` (its ``path``), ``site``'s and ``runpy``'s
#: loaders, file loaders, ``exec``, ``torch.hub.load``, ``PYTHONPATH`` given to a process.
_WORDS = lazy_compile(rb"\bsys\b|addsitedir|run_path|spec_from_file_location|SourceFileLoader|load_source|\bexec\b"
                    rb"|execfile|hub\b|PYTHONPATH")
#: Unmistakable ways in, read from a text that does not parse.
_PLAIN_WAYS_IN = lazy_compile(rb"sys\.path\.(?:insert|append|extend)\b|sys\.path[ \t]*(?:\+=|=(?!=))|run_path[ \t]*\("
                            rb"|spec_from_file_location[ \t]*\(|SourceFileLoader[ \t]*\(|load_source[ \t]*\(")
#: A notebook's IPython lines (``!pip install``, ``%run``), which are not Python.
_MAGIC = lazy_compile(rb"^([ \t]*)[!%]", re.M)


def _without_magics(data: bytes) -> bytes:
    """The code with IPython's shell and magic lines turned into ``pass`` (a notebook's cells)."""
    return _MAGIC.sub(rb"\1pass  #", data) if b"!" in data or b"%" in data else data


#: Loaders of a file by its path, by qualified name, and which argument is the path.
_FILE_LOADERS = {"site.addsitedir": 0, "runpy.run_path": 0, "importlib.util.spec_from_file_location": 1,
                 "importlib.machinery.SourceFileLoader": 1, "imp.load_source": 1, "imp.load_module": None,
                 "importlib.machinery.SourcelessFileLoader": 1}
#: Hub repositories of PyTorch's own packages (``pytorch/vision``): their code is a library's, as
#: trusted as ``import torchvision`` (not every repository of the account: ``pytorch/fairseq``).
_LIBRARY_HUBS = frozenset({"pytorch/vision", "pytorch/audio", "pytorch/text"})
#: ``sys.path``'s methods that add folders, and which argument holds them (None: a sequence).
_PATH_METHODS = {"insert": 1, "append": 0, "extend": None, "__setitem__": 1, "__iadd__": None}


def may_reach_outside(data: bytes) -> bool:
    """The text names a way to bring in code by a path (the facts pass's cheap test; ``reach_in_file``
    reads the file when a proof asks)."""
    return _WORDS.search(data) is not None


def reach_in_file(path: str, data: bytes, root: str, launch_only: bool = False,
                  named_elsewhere: Callable[[str], bool] = lambda name: True) -> tuple[int, str] | None:
    """(line, what) of the first place in the Python file ``path`` (its bytes ``data``) that may
    import or run code from outside the folder ``root``; None where none does. Names are read
    through the file's imports (``from sys import path``, ``import sys as _sys``; review helper-46,
    c03). ``named_elsewhere(name)``: another file of the program may name ``name`` (then it may call
    the file's function of that name with any argument)."""
    from ddpfix.imports import ImportTable

    if _WORDS.search(data) is None:
        return None
    try:
        tree = ast.parse(_without_magics(data))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        # Not Python as it stands: only an unmistakable way in counts, read from the text.
        match = _PLAIN_WAYS_IN.search(data)
        return None if match is None else (data.count(b"\n", 0, match.start()) + 1, f"`{match.group().decode('ascii', 'replace')}`")
    names: dict[str, ast.expr | list[ast.expr]] = dict(_bound_once(tree))
    imports = ImportTable.from_tree(tree)
    found = _first_reach(tree, _Reader(path, root, names, imports), launch_only)
    if found is not None and "built at run time" in found[1]:
        # A path may be built from a private function's parameters: read again with what each call
        # hands them (asked only here: finding who names the function reads the other files).
        names.update(_parameter_arguments(tree, named_elsewhere))
        found = _first_reach(tree, _Reader(path, root, names, imports), launch_only)
    return found


def _first_reach(tree: ast.Module, reader: _Reader, launch_only: bool) -> tuple[int, str] | None:
    for node in ast.walk(tree):
        found = reader.launches(node) if launch_only else reader.reach(node)
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


def _parameter_arguments(tree: ast.Module, named_elsewhere: Callable[[str], bool]) -> dict[str, list[ast.expr]]:
    """A private function's parameter -> every value it may take: what each call of the file hands
    it, and its default. setup.py's ``_load_py_module(fname, pkg="pl_bolts")``, called once as
    ``_load_py_module("__about__.py")``, loads ``src/pl_bolts/__about__.py`` alone. Only where the
    function is the file's own (``_``-named, named by no other file of the program, bound once, not
    decorated), is only ever called by its name with plain arguments, the file reaches no name at run
    time (``globals()``, ``getattr``, ``sys.modules``), and the parameter is bound nowhere else in the
    file (Python's names are read here without their scopes)."""
    if any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("globals", "locals", "vars", "getattr")
           or isinstance(node, ast.Attribute) and node.attr in ("__dict__", "modules") for node in ast.walk(tree)):
        return {}  # ``globals()[f"_load_{kind}"](path)``: a function reached by a name made at run time (review helper-47, c05)
    counts: dict[str, int] = {}
    called: dict[str, list[ast.Call]] = {}
    handed: set[str] = set()
    calls = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        for name in names_bound_at(node):
            counts[name] = counts.get(name, 0) + 1
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in calls:
            handed.add(node.id)  # handed around: it may be called with anything
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called.setdefault(node.func.id, []).append(node)
    found: dict[str, list[ast.expr]] = {}
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.decorator_list:
            continue
        name = function.name
        if not name.startswith("_") or name.startswith("__") or counts.get(name) != 1 or name in handed \
                or "*" in counts or named_elsewhere(name):
            continue
        sites = called.get(name, [])
        if any(any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
               for call in sites):
            continue
        positional = [*function.args.posonlyargs, *function.args.args]
        defaults = dict(zip([a.arg for a in positional][len(positional) - len(function.args.defaults):],
                            function.args.defaults))
        for index, parameter in enumerate(positional):
            if counts.get(parameter.arg) != 1:
                continue
            values: list[ast.expr] = []
            for call in sites:
                keyword = next((k.value for k in call.keywords if k.arg == parameter.arg), None)
                value = call.args[index] if index < len(call.args) else keyword if keyword is not None \
                    else defaults.get(parameter.arg)
                if value is not None:
                    values.append(value)
            if values:
                found[parameter.arg] = values
    return found


class _Reader:
    """One file's ways of bringing in code by a path, read with its imports."""

    def __init__(self, path: str, root: str, names: dict[str, ast.expr | list[ast.expr]], imports):
        self.path, self.root, self.names, self.imports = path, root, names, imports
        self.folder = os.path.dirname(os.path.realpath(path))

    def _is_sys_path(self, node: ast.expr) -> bool:
        return (self.imports.qualify(node) or dotted_name(node) or "") == "sys.path"

    def _outside(self, argument: ast.expr | None, shown: str) -> str | None:
        return _outside(argument, self.path, self.folder, self.root, shown, self.names)

    def _elements(self, value: ast.expr, shown: str) -> str | None:
        """A sequence of folders: each element of a display written out, else not known."""
        if isinstance(value, (ast.List, ast.Tuple)):
            return next((found for element in value.elts if (found := self._outside(element, shown))), None)
        return f"{shown} with folders built at run time"

    def launches(self, node: ast.AST) -> str | None:
        """A ``PYTHONPATH`` this file gives a process it starts (``env={"PYTHONPATH": ...}``,
        ``dict(os.environ, PYTHONPATH=...)``, ``os.environ["PYTHONPATH"] = ...``): that process runs
        the program's code with it, whatever imports join the two."""
        if isinstance(node, ast.keyword) and node.arg == "PYTHONPATH":
            return self._python_path(node.value)
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "PYTHONPATH":
                    return self._python_path(value)
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Subscript) and _environment_key(t) == "PYTHONPATH" for t in targets):
                return self._python_path(node.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("setdefault", "putenv") \
                and len(node.args) > 1 and isinstance(node.args[0], ast.Constant) and node.args[0].value == "PYTHONPATH":
            return self._python_path(node.args[1])
        return None

    def reach(self, node: ast.AST) -> str | None:
        launched = self.launches(node)
        if launched is not None:
            return launched
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if self._is_sys_path(target) or (isinstance(target, ast.Subscript) and self._is_sys_path(target.value)):
                    # ``sys.path[:0] = ["../shared"]``, ``sys.path += [...]``, ``sys.path = [...]``
                    return self._elements(node.value, "`sys.path` changed")
            return None  # (``os.environ["PYTHONPATH"] = ...``: read by ``launches``)
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if isinstance(func, ast.Attribute) and self._is_sys_path(func.value) and func.attr in _PATH_METHODS:
            index = _PATH_METHODS[func.attr]
            shown = f"`sys.path.{func.attr}(...)`"
            argument = node.args[index] if index is not None and len(node.args) > index else None
            if index is None:
                return self._elements(node.args[0], shown) if node.args else f"{shown} with folders built at run time"
            return self._outside(argument, shown)
        qualified = self.imports.qualify(func) or dotted_name(func) or ""
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in ("exec", "execfile", "compile") and isinstance(func, ast.Name):
            opened = next((n for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                           and n.func.id == "open"), None)
            if opened is not None:  # ``exec(open(p).read())``, ``exec(compile(open(p).read(), p, "exec"))``
                return self._outside(opened.args[0] if opened.args else None, f"`{name}(open(...))`")
            if name == "execfile":
                return f"`{name}(...)` of a file it is handed"
            return None  # a string the file builds is its own code, not a folder's
        if qualified.endswith("hub.load"):
            local = any(k.arg == "source" and isinstance(k.value, ast.Constant) and k.value.value == "local"
                        for k in node.keywords)
            if local:
                return self._outside(node.args[0] if node.args else None, "`torch.hub.load(..., source='local')`")
            repository = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "repo_or_dir"), None)
            if isinstance(repository, ast.Constant) and isinstance(repository.value, str) \
                    and repository.value.split(":", 1)[0] in _LIBRARY_HUBS and not any(k.arg == "source" for k in node.keywords):
                return None  # ``torch.hub.load('pytorch/vision:v0.9.0', 'resnet18')``: torchvision's own code
            return "`torch.hub.load(...)` runs code it downloads"
        # (``torch.hub.load_state_dict_from_url`` loads a checkpoint, as ``torch.load`` does: no code of a folder)
        for loader, index in _FILE_LOADERS.items():
            if qualified == loader or (qualified.rsplit(".", 1)[-1] == loader.rsplit(".", 1)[-1] and name == qualified):
                shown = f"`{name}(...)`"
                if index is None:
                    return f"{shown} of a file it is handed"
                argument = node.args[index] if len(node.args) > index else None
                if argument is None:
                    argument = next((k.value for k in node.keywords if k.arg in ("location", "path", "pathname")), None)
                return self._outside(argument, shown)
        return None

    def _python_path(self, value: ast.expr) -> str | None:
        """A ``PYTHONPATH`` a process of the program gets: each of its folders, where written out."""
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            for entry in value.value.split(os.pathsep):
                entry = entry.strip()
                if not entry or "site-packages" in entry or "dist-packages" in entry:
                    continue
                found = self._outside(ast.Constant(entry), "`PYTHONPATH`")
                if found is not None:
                    return found
            return None
        return self._outside(value, "`PYTHONPATH`")


def _environment_key(target: ast.Subscript) -> str | None:
    """``PYTHONPATH`` for ``os.environ["PYTHONPATH"]``."""
    key = target.slice
    if isinstance(key, ast.Constant) and isinstance(key.value, str) and dotted_name(target.value) in ("os.environ", "environ"):
        return key.value
    return None


def _outside(argument: ast.expr | None, path: str, folder: str, root: str, shown: str,
             names: dict[str, ast.expr | list[ast.expr]]) -> str | None:
    places = _paths(argument, path, folder, root, names) if argument is not None else None
    if places is None:
        return f"{shown} with a path built at run time"
    for place in places:
        real = os.path.normpath(place)
        if not (real == root or real.startswith(root + os.sep)):
            return f"{shown} of `{os.path.relpath(real)}`, outside the program"
    return None


def _paths(node: ast.expr, path: str, folder: str, root: str, names: dict[str, ast.expr | list[ast.expr]],
           seen: frozenset[str] = frozenset()) -> set[str] | None:
    """The absolute paths ``node`` may evaluate to (None: not known)."""
    if isinstance(node, ast.Name) and node.id in names and node.id not in seen:
        bound = names[node.id]
        if isinstance(bound, list):  # a parameter: each value a call hands it
            places: set[str] = set()
            for value in bound:
                inner = _paths(value, path, folder, root, names, seen | {node.id})
                if inner is None:
                    return None
                places |= inner
            return places
        return _paths(bound, path, folder, root, names, seen | {node.id})
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if os.path.isabs(node.value):
            return {node.value}
        return {os.path.join(folder, node.value)}  # run from its own folder (a Sphinx ``conf.py``, a script)
    if isinstance(node, ast.Name) and node.id == "__file__":
        return {os.path.realpath(path)}
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _paths(node.value, path, folder, root, names, seen)
        return None if inner is None else {os.path.dirname(p) for p in inner}
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents" \
            and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int and node.slice.value >= 0:
        # ``Path(__file__).parents[3]``: the fourth folder above (litgpt's ``extensions/xla``)
        inner = _paths(node.value.value, path, folder, root, names, seen)
        if inner is None:
            return None
        for _ in range(node.slice.value + 1):
            inner = {os.path.dirname(p) for p in inner}
        return inner
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _paths(node.left, path, folder, root, names, seen), _strings(node.right, names, seen)
        return None if left is None or right is None else {os.path.join(p, r) for p in left for r in right}
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
        places = _paths(node.args[0], path, folder, root, names, seen)
        for part in node.args[1:]:
            strings = _strings(part, names, seen)
            if places is None or strings is None:
                return None
            places = {os.path.join(p, string) for p in places for string in strings}
        return places
    return None


def _strings(node: ast.expr, names: dict[str, ast.expr | list[ast.expr]], seen: frozenset[str] = frozenset()) -> set[str] | None:
    """The strings a part of a path may be: a literal, or a name bound to literals (None: not known)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Name) and node.id in names and node.id not in seen:
        bound = names[node.id]
        found: set[str] = set()
        for value in bound if isinstance(bound, list) else [bound]:
            inner = _strings(value, names, seen | {node.id})
            if inner is None:
                return None
            found |= inner
        return found
    return None


#: ``PYTHONPATH=...``, ``export PYTHONPATH := ...`` (make), ``PYTHONPATH: ...`` (YAML), ``"PYTHONPATH": "..."`` (JSON).
_PYTHONPATH = lazy_compile(rb"PYTHONPATH[\"']?[ \t]*(?::=|\?=|\+=|=|:)[ \t]*[\"']?([^\s\"';&|,\]]*)")


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
            if entry in (".", "$PWD", "${PWD}", "$(pwd)", "`pwd`", "$(CURDIR)", "${CURDIR}"):
                continue  # the working directory: the launcher's folder or the program's, as read
            for workspace in ("${workspaceFolder}", "${workspaceRoot}"):  # an editor's launch settings
                entry = entry.replace(workspace, root)
            if "site-packages" in entry or "dist-packages" in entry:
                continue  # installed distributions: the environment's, importable anyway
            if "$" in entry or "`" in entry:
                return line, f"`PYTHONPATH` set to `{entry}`, built at run time"
            for place in ({entry} if os.path.isabs(entry) else {os.path.join(folder, entry)}):
                real = os.path.normpath(place)
                if not (real == root or real.startswith(root + os.sep)):
                    return line, f"`PYTHONPATH` set to `{entry}`, outside the program"
    return None
