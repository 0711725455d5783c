"""Which files make the program: the project root of any path named.

The root is the folder of the nearest ``pyproject.toml``, ``setup.cfg``, ``setup.py`` or ``.git`` at
or above the path. Where there is none, the program is the folder of the named file (a lone
``train.py`` and the modules beside it are a whole program) or the named folder itself: a script
never runs code from folders above it without a package that says so. Every file of the root is read
for facts, including files left out of fixing.
"""

from __future__ import annotations

import functools
import os
import re

from ddpfix.lazy_regex import lazy_compile

#: Files whose folder is a project's root (as Ruff and Black look for their settings; ``.git``
#: ends a repository).
PROJECT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")


def marked_root(path: str) -> str | None:
    """The folder (a real path) of the nearest project marker at or above ``path``; None where no
    folder above it has one. Looked up from where the path is named (a symbolic link belongs to the
    project it lies in, not its target's)."""
    folder = os.path.abspath(path)
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    while True:
        if any(os.path.exists(os.path.join(folder, marker)) for marker in PROJECT_MARKERS):
            return os.path.realpath(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def program_root(path: str) -> str:
    """The root of the program ``path`` belongs to: ``marked_root``, else the named folder (or the
    folder of the named file), or the folder above it where a script there imports it by its name
    (``train.py`` beside ``src/`` doing ``from src.data import make_loader``: ``python train.py`` puts
    the top folder first on ``sys.path``), and so on up (``_importer_above``)."""
    return _program_root(os.path.abspath(path))


@functools.lru_cache(maxsize=4096)
def _program_root(absolute: str) -> str:
    marked = marked_root(absolute)
    if marked is not None:
        return marked
    folder = os.path.realpath(absolute if os.path.isdir(absolute) else os.path.dirname(absolute))
    while True:
        # A package (a folder with ``__init__.py``) is imported from the folder above it, whoever
        # imports it (``importlib.import_module("experiments.exp_small")``: review helper-45, c15).
        parent = os.path.dirname(folder)
        above = parent if os.path.exists(os.path.join(folder, "__init__.py")) and parent != folder \
            and _small_folder(parent) else _importer_above(folder)
        if above is None:
            return folder
        folder = above


#: Files of a folder read for an import of a folder below it, at most (a home folder is no program).
_ABOVE_LIMIT = 200
#: How many folders up a script may import a folder by a dotted path (``from src.data.loaders
#: import x`` in ``train.py`` reaches ``src/data``: two up; review helper-44, c15: five).
_ABOVE_LEVELS = 8


@functools.lru_cache(maxsize=1024)
def _small_folder(folder: str) -> bool:
    """At most ``_ABOVE_LIMIT`` entries: a project's folder, not a home or a temporary folder of
    unrelated things (which would make one program of all of them)."""
    try:
        with os.scandir(folder) as entries:
            return sum(1 for _ in zip(entries, range(_ABOVE_LIMIT + 1))) <= _ABOVE_LIMIT
    except OSError:
        return False


def _importer_above(folder: str) -> str | None:
    """The nearest folder, up to ``_ABOVE_LEVELS`` above ``folder``, where a Python file or notebook
    imports a folder on the way down to ``folder`` by its name as a module (``import src``, ``from
    src.data.loaders import x`` for ``src/data``; ``python train.py`` puts that folder first on
    ``sys.path``, and ``src``'s modules may import ``src.data``; ``from mylib import x`` after
    ``sys.path.insert(0, "src")`` for ``src/mylib``): the two are one program. None where no such
    folder is."""
    below = folder
    path: list[str] = []  # the folders from ``above`` down to ``folder``
    for _ in range(_ABOVE_LEVELS):
        above = os.path.dirname(below)
        if above == below:
            return None
        path.insert(0, os.path.basename(below))
        # A folder further down may be where imports start where the file changes ``sys.path``
        # (``sys.path.insert(0, "src")`` then ``from mylib.streams import x`` reaches ``src/mylib``:
        # review helper-44, c17); a scratch file's ``import data`` elsewhere says nothing of it.
        imported, after_a_path_change = _first_names_imported(above)
        if path[0].isidentifier() and path[0] in imported:
            return above
        if any(name.isidentifier() and name in after_a_path_change for name in path[1:]):
            return above
        # pytest puts the folder of a ``conftest.py`` first on ``sys.path`` for the tests below it:
        # ``tests/test_smoke.py`` may ``import train_spawn`` of the folder above (review helper-46, c06).
        if os.path.exists(os.path.join(above, "conftest.py")):
            return above
        below = above
    return None


@functools.lru_cache(maxsize=1024)
def _first_names_imported(folder: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the first names of the modules the Python files and notebooks directly in ``folder`` import,
    ``src`` for ``from src.data import x``; those of the files among them that change ``sys.path``);
    none past ``_ABOVE_LIMIT`` files (a home folder is no program)."""
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return frozenset(), frozenset()
    found: set[str] = set()
    changing: set[str] = set()
    read = 0
    for entry in entries:
        if not entry.endswith((".py", ".ipynb")):
            continue
        read += 1
        if read > _ABOVE_LIMIT:
            return frozenset(), frozenset()
        try:
            with open(os.path.join(folder, entry), "rb") as handle:
                data = handle.read(1 << 20)
        except OSError:
            continue
        if entry.endswith(".ipynb"):
            data = data.replace(b'\\n', b"\n").replace(b'"', b"\n")  # a cell's source lines, JSON-quoted
        names = {module.split(".", 1)[0] for module in imported_modules(data)[0]}
        found |= names
        if re.search(rb"sys\.path|from[ \t]+sys[ \t]+import", data):
            changing |= names
    return frozenset(found), frozenset(changing)


# --- which files of a program can run in one process ----------------------------------------------

# ``import a.b, c as d`` and ``from a.b import x``: found as the word, then its line's start checked
# (a line's start, or after ``:`` or ``;``: ``if x: import y``, ``import os; import y``).
_IMPORT = lazy_compile(rb"(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[\w, \t]*(?:\\\r?\n[\w, \t]*)*)"
                     rb"|import[ \t]+([\w., \t]+))")
#: Names of the loaders that import modules named at run time: hydra's (``instantiate``, ``call``,
#: ``get_class``, ``get_method``, ``get_object``), LightningCLI and jsonargparse's CLIs (their
#: ``class_path``), importlib's and imp's loaders, ``__import__``, runpy, ``exec``, ``pydoc.locate``,
#: entry points (``EntryPoint.load``), ``torch.hub.load``, unpickling. A file that refers to one as
#: code (calls it, reaches it as an attribute, imports it: an alias, a stored reference, a subclass all
#: start there) may run any file of its program in its own process. A word in a comment or in prose
#: ("simply instantiate the class") refers to nothing. Not ``subprocess``: what it starts runs in
#: another process, whose files are joined by their own imports (a test suite that runs scripts would
#: otherwise join every file of a project). Not ``importlib.metadata.version``: it reads metadata.
_LOADERS = (rb"instantiate|get_class|get_method|get_object|LightningCLI|CLI|auto_cli|instantiate_classes|__import__"
            rb"|exec|spec_from_file_location|module_from_spec|SourceFileLoader|load_source|load_module|run_path"
            rb"|run_module|exec_module|import_module|locate|entry_points|load_entry_point|iter_entry_points")
#: A loader referred to as code: called (``name(``), reached as an attribute (``.name``), or imported
#: (``import name``, ``from m import a, name``).
_LOADER_USE = lazy_compile(rb"(?<![\w])(?:" + _LOADERS + rb")[ \t]*\(|\.(?:" + _LOADERS + rb")\b")
#: Modules whose import is itself a way to load code named at run time.
_LOADER_MODULES = lazy_compile(rb"^(?:importlib(?!\.metadata\b)|imp|runpy|hydra|jsonargparse|pydoc|pkgutil"
                             rb"|(?:lightning\.pytorch|pytorch_lightning|lightning)(?:\.utilities)?\.cli)\b")
#: Other ways a file runs code it does not import: unpickling a whole object (``pickle.load``,
#: ``torch.load(..., weights_only=False)``), ``torch.hub.load``, a notebook's ``%run``.
_OTHER_LOADS = lazy_compile(rb"pickle\.loads?\(|weights_only[ \t]*=[ \t]*False|hub\.load\(|%run\b|run_line_magic\(")
#: ``import_module(`` with what follows: a literal module ("a.b.c": an import like any other), a
#: literal package prefix ("a.b." + name, f"a.b.{name}": only modules of that package), or anything.
_IMPORT_MODULE = lazy_compile(rb"(?<![\w])import_module[ \t]*\([ \t]*(f?)(['\"])([\w.]*)(\{|\2[ \t]*(\+|[,)]))?")
#: A dynamic import of any module of the program.
ANY_MODULE = ""
#: A dynamic import of any module of the program where its configurations name a ``_target_``.
HYDRA_CONFIGS = "hydra _target_"
#: ``hydra.utils.call(cfg.fn)`` (or ``call`` under any receiver): calls what a configuration names.
_HYDRA_CALL = lazy_compile(rb"(?<![\w])call[ \t]*\(|\.call\b")
#: A loader that names notebooks (``exec`` of a notebook's code): it may run them too. No import
#: runs a notebook otherwise: it is not a module.
NOTEBOOKS = "*.ipynb"


def _in_comment_or_example(data: bytes, start: int) -> bool:
    """The place is in a comment, or in a doctest line (``>>> instantiate(cfg)``), which runs only
    under doctest."""
    line_start = data.rfind(b"\n", 0, start) + 1
    before = data[line_start:start]
    return b"#" in before or before.lstrip().startswith((b">>>", b"..."))


def dynamic_imports(data: bytes, imported: set[str] | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(modules a literal ``import_module("a.b")`` names, package prefixes of the modules the file
    may import at run time: ``ANY_MODULE`` for any module, ``"a.b"`` for the modules of ``a.b``).
    ``imported``: the modules the file imports (``imported_modules``), which may be a loader's."""
    literal: set[str] = set()
    prefixes: set[str] = set()
    loaders = [m for m in imported or () if not m.startswith(".") and _LOADER_MODULES.match(m.encode())]
    hydra = [m for m in loaders if m.split(".")[0] == "hydra"]
    if hydra and all(m in ("hydra", "hydra.main") for m in hydra) and not _HYDRA_CALL.search(data):
        # ``import hydra`` and ``hydra.main`` run the program's code only through what the file
        # calls (``hydra.utils.instantiate``, ``.call``: read below as any loader; any other name
        # taken from hydra may be one) or a ``_target_`` the program's configurations name (a
        # launcher or sweeper of its own): ``HYDRA_CONFIGS``, asked of them.
        loaders = [m for m in loaders if m not in hydra]
        prefixes.add(HYDRA_CONFIGS)
    # importlib itself, or its ``import_module`` under its own name: its calls are read below, where
    # a literal argument may bound what they load. Any other name taken from a loader's module (an
    # alias, a subclass's base, a stored reference) may load anything.
    if loaders and not (all(m.split(".")[0] == "importlib" for m in loaders) and _only_import_module(data)):
        return (), (ANY_MODULE,)
    for pattern in (_LOADER_USE, _OTHER_LOADS):
        for match in pattern.finditer(data):
            if _in_comment_or_example(data, match.start()):
                continue
            if pattern is _LOADER_USE and match.group().lstrip(b".").startswith(b"import_module"):
                continue  # read below: a literal module or package may bound it
            return (), (ANY_MODULE,)
    if b"import_module" in data:
        for match in re.finditer(rb"(?<![\w])import_module\b", data):
            if _in_comment_or_example(data, match.start()) or _is_an_import_line(data, match.start()):
                continue
            shaped = _IMPORT_MODULE.match(data, match.start())
            text = shaped.group(3).decode("ascii", "replace") if shaped is not None else ""
            ending = shaped.group(4) if shaped is not None else None
            if shaped is None or not text or text.startswith(".") or ending is None:
                return (), (ANY_MODULE,)  # a name, a relative module, a string built otherwise, a reference
            if not shaped.group(1) and ending.endswith((b",", b")")) and not ending.endswith(b"+"):
                literal.add(text)
                continue
            package = text.rsplit(".", 1)[0] if "." in text else ""
            if not package:
                return (), (ANY_MODULE,)
            prefixes.add(package)
    return tuple(sorted(literal)), tuple(sorted(prefixes))


#: ``config_path="../../configs"`` (hydra's ``main``, ``initialize``), ``config_dir=...``
#: (``initialize_config_dir``): a literal folder a loader reads its configurations from.
_CONFIG_FOLDER = lazy_compile(rb"\bconfig_(?:path|dir)[ \t]*=[ \t]*[rR]?(['\"])([^'\"\n]+)\1")


@functools.lru_cache(maxsize=None)
def config_roots(path: str) -> tuple[str, ...]:
    """The folders whose YAML and JSON configurations a loader at ``path`` may read: its program's
    root, and each literal ``config_path``/``config_dir`` it names (relative to its folder, as hydra
    reads it), which may lie outside the program (a monorepo's shared ``configs/``: review
    helper-43, c03)."""
    roots = [program_root(path)]
    try:
        with open(path, "rb") as handle:
            data = handle.read(1 << 20)
    except OSError:
        return tuple(roots)
    for match in _CONFIG_FOLDER.finditer(data):
        named = match.group(2).decode("utf-8", "replace")
        if "://" in named:
            continue  # ``pkg://``: a package's configurations, read with its files
        folder = os.path.realpath(os.path.join(os.path.dirname(path), named))
        if os.path.isdir(folder) and not any(folder == r or folder.startswith(r + os.sep) for r in roots):
            roots.append(folder)
    return tuple(roots)


def configs_name_targets(path: str) -> bool:
    """A configuration the loader at ``path`` may read names a ``_target_``."""
    return any(_configs_name_targets(root) for root in config_roots(path))


@functools.lru_cache(maxsize=None)
def _configs_name_targets(root: str) -> bool:
    """A YAML or JSON configuration of the program names a ``_target_`` (or may: past the number
    of files read)."""
    from ddpfix.facts import config_files  # the one reading of a program's configurations (facts imports this module)

    return any(path is None or b"_target_" in data for path, data in config_files(root))


def _is_an_import_line(data: bytes, start: int) -> bool:
    line_start = data.rfind(b"\n", 0, start) + 1
    return data[line_start:start].lstrip().startswith((b"import ", b"from "))


def _only_import_module(data: bytes) -> bool:
    """The file takes from importlib only ``import_module`` under its own name (or importlib itself,
    used as ``importlib.import_module``), whose literal arguments may bound what it loads."""
    for match in re.finditer(rb"from[ \t]+importlib[\w.]*[ \t]+import[ \t]*\(?([^)\n]*)", data):
        names = [part.split() for part in match.group(1).split(b",")]
        if any(not words or words[0] != b"import_module" or len(words) > 1 for words in names):
            return False
    return True


def imported_modules(data: bytes) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The modules a file imports, as written (``import a.b`` -> ``a.b``; ``from a.b import c`` ->
    ``a.b`` and ``a.b.c``, since ``c`` may be a module; relative ones keep their dots: ``from . import
    x`` -> ``.`` and ``.x``; a literal ``import_module("a.b")`` -> ``a.b``), and the packages whose
    modules it may import at run time (``dynamic_imports``; empty: none)."""
    found: set[str] = set()
    if b"import" in data:
        for match in _IMPORT.finditer(data):
            start = match.start()
            line_start = data.rfind(b"\n", 0, start) + 1
            before = data[line_start:start].strip(b" \t")
            if before and not before.endswith((b":", b";")):
                continue
            if match.group(3) is not None:
                for part in match.group(3).split(b","):
                    words = part.split()
                    if words:
                        found.add(words[0].decode("ascii", "replace"))
            else:
                module = match.group(1).decode("ascii", "replace")
                found.add(module)
                names = re.sub(rb"#[^\n]*", b"", match.group(2)).strip(b"()").replace(b"\\", b" ")
                for part in names.split(b","):
                    words = part.split()
                    if words and words[0] != b"*":
                        name = words[0].decode("ascii", "replace")
                        found.add(module + name if module.endswith(".") else f"{module}.{name}")
    literal, dynamic = dynamic_imports(data, found)
    found.update(literal)
    if ANY_MODULE in dynamic and b"ipynb" in data:
        dynamic = (*dynamic, NOTEBOOKS)
    return tuple(sorted(found)), dynamic


def module_paths(relative: str) -> list[tuple[str, ...]]:
    """The module names a file (its path relative to its program's root) can be imported by, as
    tuples, from every folder of the root: ``src/a/b.py`` -> ``("b",)``, ``("a", "b")``, ``("src", "a",
    "b")``; a package's ``__init__.py`` is its folder's name."""
    parts = relative.replace(os.sep, "/").split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    parts = parts[:-1] if stem == "__init__" else [*parts[:-1], stem]
    return [tuple(parts[i:]) for i in range(len(parts)) if parts[i:]]


#: Files that make a folder a distribution pip can install (``.git`` alone does not).
_INSTALL_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")


def _installable(root: str) -> bool:
    return any(os.path.exists(os.path.join(root, marker)) for marker in _INSTALL_MARKERS)


def _is_test_file(relative: str) -> bool:
    name = os.path.basename(relative)
    return name == "conftest.py" or (name.startswith("test_") and name.endswith(".py")) or name.endswith("_test.py")


class ProcessGroups:
    """Files that may run in one process: the parts of a graph whose edges are

    * an import: from a file to each file of its program the module name may resolve to (from any
      folder of the root: over-approximated) and to the ``__init__.py`` of every package on the way
      (importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py``); a relative import from
      the file's own folder; a module of no file of the program (``torch.utils.data``) joins nothing;
    * a package's ``__init__.py`` to every file below it (they run it when imported as modules);
    * a dynamic import: to every module of its program and every module another program of the run
      makes importable (what it names at run time may be any importable module), or to those of the
      packages its literal prefixes name (its program's, else another program's); not to a notebook,
      which is no module, unless the loader is a notebook, ``%run``, or names notebooks;
    * an import of a module no file of the program holds, to the files another program of the run
      holds under that name where that program makes them importable: a regular package (a
      monorepo's ``packages/datakit``), or any module of a program that can be installed (a
      namespace package, a single-module distribution); a loose script of a folder nobody installs
      is nobody's module;
    * pytest: the test files and ``conftest.py`` of a program run in one pytest process.

    A hazard or a default-device switch in one file bears on another only if both can run in one
    process: a tutorial's ``IterableDataset`` says nothing of an unrelated tutorial's model."""

    def __init__(self, files: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]):
        """``files``: real path -> (the modules it imports, the packages whose modules it may import at
        run time: ``imported_modules``)."""
        self._parent: dict[str, str] = {path: path for path in files}
        by_module: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        roots = {path: program_root(path) for path in files}
        relative = {path: os.path.relpath(path, roots[path]) for path in files}
        for path in files:
            if path.endswith(".ipynb"):
                continue  # not a module: ``import notebook`` finds no notebook
            for name in module_paths(relative[path]):
                by_module.setdefault((roots[path], name), []).append(path)
        # A module of no file of its own program may be another program's of the run: a package of
        # the same repository installed beside it (a monorepo's ``packages/datakit``), or, of a
        # program that can be installed (a ``pyproject.toml``, ``setup.py`` or ``setup.cfg``), a
        # namespace package without ``__init__.py`` or a single-module distribution
        # (``py-modules``) too (review helper-43, c10): indexed by name across programs. A loose
        # script of a folder nobody installs is no module of another program.
        packages_of = {(root, name) for (root, name), paths in by_module.items()
                       if any(os.path.basename(p) == "__init__.py" for p in paths)}
        installable = {root: _installable(root) for root in set(roots.values())}
        elsewhere: dict[tuple[str, ...], list[str]] = {}
        for (root, name), paths in by_module.items():
            if installable[root] or (root, name[:1]) in packages_of:
                elsewhere.setdefault(name, []).extend(paths)
        importable = {path for paths in elsewhere.values() for path in paths}
        tests: dict[str, str] = {}
        anything: list[str] = []
        for path, (modules, packages) in files.items():
            root = roots[path]
            for module in modules:
                targets = self._targets(path, root, module, by_module)
                if not targets and not module.startswith("."):
                    parts = tuple(module.split("."))
                    targets = [f for i in range(1, len(parts) + 1) for f in elsewhere.get(parts[:i], ())
                               if roots[f] != root]
                for other in targets:
                    self._join(path, other)
            if HYDRA_CONFIGS in packages and configs_name_targets(path):
                packages = (*packages, ANY_MODULE)
            for package in set(packages) - {ANY_MODULE, NOTEBOOKS, HYDRA_CONFIGS}:
                # The modules of that package: its program's, or where it has none, another
                # program's of the run (an installed package).
                prefix = tuple(package.split("."))
                matching = [other for other in files if not other.endswith(".ipynb") and any(
                    name[:len(prefix)] == prefix or prefix[:len(name)] == name for name in module_paths(relative[other]))]
                own = [other for other in matching if roots[other] == root]
                for other in own or [other for other in matching if other in importable]:
                    self._join(path, other)
            if ANY_MODULE in packages:
                anything.append(path)
            # The packages above the file run when it is imported as a module.
            folder = os.path.dirname(path)
            while folder.startswith(root) and folder != root:
                for init in by_module.get((root, tuple(os.path.relpath(folder, root).replace(os.sep, "/").split("/"))), ()):
                    if os.path.basename(init) == "__init__.py" and os.path.dirname(init) == folder:
                        self._join(path, init)
                folder = os.path.dirname(folder)
            if _is_test_file(relative[path]):
                if root in tests:
                    self._join(path, tests[root])
                else:
                    tests[root] = path
        #: Files that import modules named at run time (a config's ``class_path``/``_target_`` among them).
        self.loaders: tuple[str, ...] = tuple(anything)
        # A loader may run any module of the program; a notebook only where it is one (``%run``) or
        # names notebooks.
        # A module named at run time may be any importable one: its own program's, or another
        # program's of the run that is installed beside it (hydra's ``_target_``, LightningCLI's
        # ``class_path``, ``import_module(name)`` across a monorepo: review helper-43, c01/c13/c19/c23).
        runs_notebooks = [p for p in anything if p.endswith(".ipynb") or NOTEBOOKS in files[p][1]]
        for path in anything:
            for other in files:
                if not other.endswith(".ipynb") and (roots[other] == roots[path] or other in importable):
                    self._join(path, other)
        for path in runs_notebooks:
            for other in files:
                if other.endswith(".ipynb") and roots[other] == roots[path]:
                    self._join(path, other)

    @staticmethod
    def _targets(path: str, root: str, module: str, by_module) -> list[str]:
        """The files of the program an import of ``module`` from ``path`` may run."""
        if module.startswith("."):
            dots = len(module) - len(module.lstrip("."))
            folder = os.path.dirname(path)
            for _ in range(dots - 1):
                folder = os.path.dirname(folder)
            if not folder.startswith(root):
                return []
            base = os.path.relpath(folder, root).replace(os.sep, "/")
            head = tuple(p for p in base.split("/") if p and p != ".")
            rest = tuple(p for p in module.lstrip(".").split(".") if p)
            # The package itself and each module on the way (its path from the root is one of the
            # names ``module_paths`` indexes the file by).
            names = [(*head, *rest[:i]) for i in range(len(rest) + 1)]
            return [f for name in names if name for f in by_module.get((root, name), ())]
        parts = tuple(module.split("."))
        return [f for i in range(1, len(parts) + 1) for f in by_module.get((root, parts[:i]), ())]

    def _find(self, path: str) -> str:
        while self._parent[path] != path:
            self._parent[path] = self._parent[self._parent[path]]
            path = self._parent[path]
        return path

    def _join(self, one: str, other: str) -> None:
        first, second = self._find(one), self._find(other)
        if first != second:
            self._parent[max(first, second)] = min(first, second)

    def group(self, path: str) -> str | None:
        """The representative of the file's group (files that may run together share it); None
        where the file is not one of the run."""
        return self._find(path) if path in self._parent else None

    def together(self, one: str, other: str) -> bool | None:
        """Whether the two files may run in one process; None where one is not a file of the run."""
        if one not in self._parent or other not in self._parent:
            return None
        return self._find(one) == self._find(other)
