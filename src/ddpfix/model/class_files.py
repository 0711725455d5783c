"""Which class of another file of the program a name means: ``from .components import Generator``
in ``gan.py`` names the ``class Generator`` of ``components.py``, read (parsed once per run) for a
proof that needs its body (DDP004 follows a submodule's class to know its ``forward`` computes on
this rank's inputs).

Resolved only where the answer is certain: the name is bound once in the file, by one ``from ...
import`` (not also defined, assigned or imported again); the module is one file of the program
(relative to the file, or the single file of the program an absolute name can mean); there, a
class of that name defined once at the top level, or a name that file imports once the same way (a
package ``__init__`` that re-exports it), a few hops at most. Anything else is unknown (None).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable

from ddpfix.analysis.attribute_access import writes_its_globals
from ddpfix.analysis.names import names_bound_at, pattern_names
from ddpfix.ast_walk import walk
from ddpfix.imports import ImportTable, tree_blocks
from ddpfix.model.program import module_paths, program_root

#: How many re-exports (``from .a import B`` in a package ``__init__``) are followed.
MAX_HOPS = 3

ClassSource = tuple[str, ast.Module, ImportTable, ast.ClassDef]


class ClassFiles:
    """Resolves names to classes of the program's files; each file parsed at most once."""

    def __init__(self, files: list[str], together: Callable[[str, str], bool]):
        """``files``: the program's files (real paths); ``together(one, other)``: whether two of
        them may run in one process."""
        self._together = together
        self._files = frozenset(files)
        self._by_module: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for path in files:
            if not path.endswith(".py"):
                continue
            root = program_root(path)
            for name in module_paths(os.path.relpath(path, root)):
                self._by_module.setdefault((root, name), []).append(path)
        self._parsed: dict[str, tuple[ast.Module, ImportTable] | None] = {}
        #: What a rule derives from these classes and keeps for the run (a base class's facts, read
        #: once for all its subclasses), by the rule's own keys.
        self.kept: dict = {}

    def parsed(self, path: str) -> tuple[ast.Module, ImportTable] | None:
        if path not in self._parsed:
            try:
                if path.endswith(".ipynb"):  # its code cells, IPython's lines masked
                    from ddpfix.ipython_syntax import notebook_module  # loaded for notebooks only

                    source = notebook_module(path)
                    if source is None:
                        raise ValueError(path)
                else:
                    with open(path, "rb") as handle:
                        source = handle.read()
                tree = ast.parse(source)
                self._parsed[path] = (tree, ImportTable.from_tree(tree))
            except (OSError, SyntaxError, ValueError, RecursionError):
                self._parsed[path] = None
        return self._parsed[path]

    def class_of(self, path: str, tree: ast.Module, name: str, hops: int = 0) -> ClassSource | None:
        """The class another file of the program defines that ``name`` means in the file at
        ``path`` (its tree given), or None where that is not certain."""
        return self.definition_of(path, tree, name, ast.ClassDef, hops)

    def function_of(self, path: str, tree: ast.Module, name: str) -> tuple[str, ast.Module, ImportTable,
                                                                                ast.FunctionDef] | None:
        """The top-level function another file of the program defines that ``name`` means in the
        file at ``path`` (``from .data import loaders``), or None where that is not certain."""
        return self.definition_of(path, tree, name, ast.FunctionDef)

    def attribute_definition(self, path: str, tree: ast.Module, imports: ImportTable, node: ast.Attribute, kind: type):
        """The top-level definition of ``kind`` that ``module.Name`` means in the file at ``path``,
        where ``module`` is a module of the program the file imports (``import data`` then
        ``data.Local``), through its re-exports; None where that is not certain."""
        qualified = imports.qualify(node)
        if qualified is None or "." not in qualified:
            return None
        target = self.module_file_of(path, qualified)
        name = qualified.rsplit(".", 1)[1]
        found = self._defined_in(path, target, name, kind)
        if found == "absent" and target is not None:
            # ``regression.LogisticRegression`` where the package's ``__init__`` re-exports it
            parsed = self.parsed(target)
            return None if parsed is None else self.definition_of(target, parsed[0], name, kind, 1)
        return found if isinstance(found, tuple) else None

    def definition_of(self, path: str, tree: ast.Module, name: str, kind: type, hops: int = 0):
        """``class_of`` for a top-level definition of ``kind`` (a class or a function), through
        re-exports (``from .a import B`` in a package ``__init__``)."""
        if hops > MAX_HOPS:
            return None
        bindings = _from_imports_of(tree, name)
        if not bindings:
            return None
        # (several imports of one name: each must find the same file, ``try: from .data import Local``
        # ``except ImportError: from data import Local``: review helper-55, f05)
        targets = {(self._module_file(path, level, module), original) for level, module, original in bindings}
        if len(targets) != 1:
            return None
        target, original = targets.pop()
        found = self._defined_in(path, target, original, kind)
        if found == "absent":
            return self.definition_of(target, self.parsed(target)[0], original, kind, hops + 1)
        return found

    def _defined_in(self, path: str, target: str | None, name: str, kind: type):
        """(target, its tree, its imports, the definition) where the file ``target``, which may run
        with ``path``, defines ``name`` once at its top as a ``kind`` and binds it no other way;
        ``"absent"`` where it defines no class or function of that name (it may import it);
        None otherwise."""
        if target is None or not self._together(path, target):
            return None
        parsed = self.parsed(target)
        if parsed is None:
            return None
        other, imports = parsed
        defined = [s for s in other.body if isinstance(s, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                   and s.name == name]
        if not defined:
            return "absent"
        if len(defined) == 1 and isinstance(defined[0], kind) and _bindings_of(other, name) == 1:
            return target, other, imports, defined[0]
        return None

    def subclasses_of(self, path: str, tree: ast.Module, name: str, candidates: list[str]) -> list[ClassSource] | str:
        """The classes that derive from the class ``name`` of the file at ``path`` (its tree given),
        in ``candidates`` (the files that name a base of that name and may run with it), each read;
        or why one may derive from it and cannot be read (a base written ``module.Name``, a name
        that cannot be resolved, a file that does not parse)."""
        real = os.path.realpath(path)
        found: list[ClassSource] = []
        for other in candidates:
            parsed = self._tree_of(other, real, tree)
            if parsed is None:
                return f"a class in {os.path.relpath(other, program_root(path))} (not read) may derive from `{name}`"
            other_tree, imports = parsed
            classes = other_tree.__dict__.get("_ddpfix_all_classes")
            if classes is None:
                classes = other_tree._ddpfix_all_classes = [n for n in walk(other_tree) if isinstance(n, ast.ClassDef)]
            for node in classes:
                for base in node.bases:
                    last = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else None
                    if last != name:
                        continue
                    where = f"{os.path.relpath(other, program_root(path))}:{node.lineno}"
                    if not isinstance(base, ast.Name):
                        return f"the class `{node.name}` at {where} may derive from `{name}` (`{ast.unparse(base)}`)"
                    if other == real:
                        if _bindings_of(tree, name) != 1:
                            return f"the class `{node.name}` at {where} may derive from `{name}`"
                        found.append((other, other_tree, imports, node))
                        continue
                    source = self.class_of(other, other_tree, name)
                    if source is None:
                        return f"the class `{node.name}` at {where} may derive from `{name}`"
                    if source[0] == real and source[3].name == name:
                        found.append((other, other_tree, imports, node))
        return found

    def _tree_of(self, other: str, real: str, tree: ast.Module) -> tuple[ast.Module, ImportTable] | None:
        """The file ``other`` parsed: the tree given where it is the asking file itself (``real``);
        None for a file that is not Python source or does not parse."""
        if other == real:
            return tree, ImportTable.from_tree(tree)
        return self.parsed(other) if other.endswith((".py", ".ipynb")) else None

    def module_file_of(self, path: str, qualified: str) -> str | None:
        """The program's file of the module a qualified name (``data.Local``, through the file's
        imports) lies in, where that module is one file of the program; None otherwise."""
        if "." not in qualified.lstrip("."):
            return None
        module = qualified.rsplit(".", 1)[0]
        return self._module_file(path, len(module) - len(module.lstrip(".")), module.lstrip("."))

    def _module_file(self, path: str, level: int, module: str | None) -> str | None:
        parts = tuple(p for p in (module or "").split(".") if p)
        root = program_root(path)
        if level:
            folder = os.path.dirname(os.path.realpath(path))
            for _ in range(level - 1):
                folder = os.path.dirname(folder)
            candidates = [os.path.join(folder, *parts) + ".py", os.path.join(folder, *parts, "__init__.py")]
            found = [c for c in candidates if c in self._files]
            return found[0] if len(found) == 1 else None
        found = set(self._by_module.get((root, parts), ()))
        return next(iter(found)) if len(found) == 1 else None


def _from_imports_of(tree: ast.Module, name: str) -> list[tuple[int, str | None, str]] | None:
    """(level, module, the imported name) of each ``from ... import`` that binds ``name`` in the file
    when the program runs, where nothing else binds it (no star import among them); None otherwise."""
    imported = tree.__dict__.get("_ddpfix_from_imports")
    if imported is None:
        imported = tree._ddpfix_from_imports = {}
        for block in tree_blocks(tree):
            for statement in block:
                # (one under ``if TYPE_CHECKING:`` binds nothing when the program runs: a package's
                # module ``__getattr__`` may give the name then: review helper-53, c04)
                if isinstance(statement, ast.ImportFrom) and id(statement) not in _type_checking_only(tree):
                    for alias in statement.names:
                        imported.setdefault(alias.asname or alias.name, []).append(
                            (statement.level, statement.module, alias.name))
    found = imported.get(name, [])
    if not found or any(original == "*" for _, _, original in found) or _bindings_of(tree, name) != len(found):
        return None
    return found


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The statements under ``if TYPE_CHECKING:``, which never run: ``TYPE_CHECKING`` the file binds
    only by importing it from ``typing`` (or ``typing_extensions``), or ``typing.TYPE_CHECKING`` with
    ``typing`` bound only by its import (a name of the program's own may be true). Kept on the tree."""
    found = tree.__dict__.get("_ddpfix_type_checking_only")
    if found is None:
        found = tree._ddpfix_type_checking_only = set()
        typing_modules = ("typing", "typing_extensions")
        flag_imports = module_imports = 0
        flag_bindings = module_bindings = 0
        for node in walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in typing_modules and not node.level:
                flag_imports += sum(alias.name == "TYPE_CHECKING" and alias.asname is None for alias in node.names)
            elif isinstance(node, ast.Import):
                module_imports += sum(alias.name in typing_modules and alias.asname is None for alias in node.names)
            names = set(names_bound_at(node))
            flag_bindings += "TYPE_CHECKING" in names or "*" in names
            module_bindings += bool(names & set(typing_modules)) or "*" in names
        for node in walk(tree):
            test = node.test if isinstance(node, ast.If) else None
            if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" and flag_imports and flag_imports == flag_bindings \
                    or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING" and isinstance(test.value, ast.Name) \
                    and test.value.id in typing_modules and module_imports and module_imports == module_bindings:
                found.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    return found


def imported_once(tree: ast.Module, name: str) -> bool:
    """The file binds ``name`` only by ``from ... import`` of one name (anywhere: inside a function
    too, where it binds the same module's object as at the top; once or more), of one module or of
    modules that may be one file (``from .data import Local`` or, failing that, ``from data import
    Local``): whether they are is ``ClassFiles.definition_of``'s question."""
    found = _from_imports_of(tree, name)
    return found is not None and len({original for _, _, original in found}) == 1


def imports_that_run(tree: ast.Module, name: str) -> list[ast.ImportFrom]:
    """The ``from ... import`` statements of the file that bind ``name`` when the program runs (not
    one under ``if TYPE_CHECKING:``)."""
    return [node for node in walk(tree) if isinstance(node, ast.ImportFrom) and id(node) not in _type_checking_only(tree)
            and any((alias.asname or alias.name) == name for alias in node.names)]


def bound_at_all(tree: ast.Module, name: str) -> bool:
    """The file binds ``name`` somewhere (``_bindings_of``; a star import or a write into its
    namespace may bind any name)."""
    return _bindings_of(tree, name) > 0


def bound_once(tree: ast.Module, name: str) -> bool:
    """The file binds ``name`` once in all, anywhere (``_bindings_of``)."""
    return _bindings_of(tree, name) == 1


def _bindings_of(tree: ast.Module, name: str) -> int:
    """How many statements or targets of the file bind ``name`` (imports, a star import, which may
    bind any name, definitions, assignments, parameters, ``for``/``with``/``except`` targets,
    ``global``), counted over the whole file: any other binding makes which value a use means
    depend on order and scope. Counted once per tree."""
    counts = tree.__dict__.get("_ddpfix_binding_counts")
    if counts is None:
        counts = tree._ddpfix_binding_counts = _binding_counts(tree)
    return counts.get(name, 0) + counts.get("*", 0)


def _binding_counts(tree: ast.Module) -> dict[str, int]:
    counts: dict[str, int] = {}

    def add(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1

    type_checking = _type_checking_only(tree)
    for node in walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if id(node) in type_checking:
                continue  # (binds nothing when the program runs: review helper-55, f01)
            for alias in node.names:
                add("*" if alias.name == "*" else alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.arg):
            add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                add(name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            add(node.name)
        elif isinstance(node, ast.pattern):  # ``case [Local]:``, ``case {"dm": Local}:`` (review helper-53, c02/c08)
            for name in pattern_names(node):
                add(name)
    if writes_its_globals(tree) is not None:  # ``globals()["Local"] = X``, ``exec(code)`` (helper-53, c01/c05/c17)
        add("*")
    return counts

