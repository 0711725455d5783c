"""Many files: discovery, then ``sources.fix_source`` over them in parallel, results in path order."""

from __future__ import annotations

import errno
import itertools
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ddpfix.engine import READ_ERROR, allow_deep_trees, decode_problem, max_file_size
from ddpfix.sources import fix_source, is_notebook
import ddpfix.facts as facts_module
from ddpfix.facts import FileFacts, ProjectFacts, file_facts
from ddpfix.findings import FileResult, Finding, Problem
from ddpfix.rules import all_rules
from ddpfix.rules.base import Rule

if TYPE_CHECKING:
    import pathspec

DEFAULT_EXCLUDES = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".eggs", "build", "dist",
        "__pycache__", "site-packages", "node_modules", ".mypy_cache", ".pytest_cache",
        ".ruff_cache", ".ipynb_checkpoints",
    }
)
SOURCE_SUFFIXES = (".py", ".ipynb")
# Below this many files a process pool costs more than it saves.
PARALLEL_THRESHOLD = 16
# The largest files of a parallel run, this many per worker, are handed out one at a time.
SINGLE_FILES_PER_JOB = 8


def _spec(lines: Iterable[str]) -> pathspec.PathSpec:
    import pathspec  # loaded where patterns are read: a file named alone never needs it

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _gitignore(folder: str) -> pathspec.PathSpec | None:
    try:
        with open(os.path.join(folder, ".gitignore"), encoding="utf-8", errors="replace") as handle:
            return _spec(handle)
    except OSError:
        return None


def _ancestor_ignores(folder: str) -> list[tuple[str, pathspec.PathSpec]]:
    """The .gitignore files that apply to ``folder`` from above: from the repository root down to its parent."""
    from pathlib import Path  # loaded for a folder given only: checking files named one by one never needs it

    here = Path(folder).resolve()
    chain = []
    for parent in [here, *here.parents]:
        chain.append(parent)
        if (parent / ".git").exists():
            break
    else:
        return []  # not in a repository: no outer .gitignore applies
    specs = []
    for parent in reversed(chain[1:]):
        spec = _gitignore(str(parent))
        if spec is not None:
            specs.append((str(parent), spec))
    return specs


def _ignored(path: str, is_dir: bool, specs: Sequence[tuple[str, pathspec.PathSpec]]) -> bool:
    """Git's verdict: the deepest .gitignore with a matching pattern decides (so ``!keep.py`` in a
    subfolder re-includes what a pattern above excluded)."""
    absolute = os.path.abspath(path)
    ignored = False
    for base, spec in specs:  # outermost first
        relative = os.path.relpath(absolute, base).replace(os.sep, "/")
        if relative.startswith(".."):
            continue
        verdict = spec.check_file(relative + "/" if is_dir else relative).include
        if verdict is not None:
            ignored = verdict
    return ignored


#: What marks a project's root folder, as Ruff and Black look for one.
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def _is_project_root(folder: str) -> bool:
    return any(os.path.exists(os.path.join(folder, marker)) for marker in PROJECT_MARKERS)


def covers_projects(paths: Iterable[str]) -> bool:
    """Whether the paths named hold whole projects, so the facts read from them are complete: each is
    a folder that is a project root itself, or that no project root above it contains (then the
    folder is all the project there is). A file named on its own, or a folder inside a project
    (``src/`` of a repository), is part of a project: its facts are partial."""
    for given in paths:
        if not os.path.isdir(given):
            return False
        folder = os.path.abspath(given)
        if _is_project_root(folder):
            continue
        parent = os.path.dirname(folder)
        while parent != folder:
            if _is_project_root(parent):
                return False
            folder, parent = parent, os.path.dirname(parent)
    return True


def discover(
    paths: Iterable[str], exclude: Sequence[str] = (), respect_gitignore: bool = True
) -> tuple[list[str], list[Problem], list[str]]:
    """The files to check (sorted, no duplicates), problems with the paths given, and folders without Python files.

    Explicit files are always taken; folders are walked for Python files, skipping default
    excludes, virtualenvs, ``--exclude`` patterns and (unless told not to) .gitignore'd paths.
    """
    excluded = _spec(exclude) if exclude else None
    files: dict[str, str] = {}  # real path -> the path as the user will see it
    problems: list[Problem] = []
    empty: list[str] = []
    for given in paths:
        if os.path.isfile(given):
            files.setdefault(os.path.realpath(given), os.path.normpath(given))
            continue
        if not os.path.isdir(given):
            message = "no such file or directory" if not os.path.lexists(given) else _not_a_file(given)
            problems.append(Problem(given, READ_ERROR, message))
            continue
        root_specs = _ancestor_ignores(given) if respect_gitignore else []
        found = list(_walk(given, excluded, root_specs, respect_gitignore))
        if not found:
            empty.append(given)
        real_folders: dict[str, str] = {}
        for path in found:
            # The same file twice (a symlink, or a file inside a folder also given) is checked once:
            # a second write would find the file already changed. The walk does not enter linked
            # folders, so a file that is no link itself is its folder's real path plus its name (one
            # lstat; ``realpath`` per file took a second over 10,000 files).
            folder, name = os.path.split(path)
            if os.path.islink(path):
                real = os.path.realpath(path)
            else:
                if folder not in real_folders:
                    real_folders[folder] = os.path.realpath(folder)
                real = os.path.join(real_folders[folder], name)
            files.setdefault(real, path)
    return sorted(set(files.values())), problems, empty


def _not_a_file(path: str) -> str:
    """Why a path that exists is neither a file nor a folder: a broken or looping symlink, or a special file."""
    try:
        os.stat(path)
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "cannot read: a symbolic link loop (too many levels of symbolic links)"
        if os.path.islink(path):
            return f"cannot read: a broken symbolic link ({err.strerror})"
        return f"cannot read: {err.strerror or err}"
    return "not a file or directory"


def _walk(root, excluded, root_specs, respect_gitignore):
    specs_by_dir: dict[str, list] = {}
    for folder, dirs, names in os.walk(root):
        specs = specs_by_dir.pop(folder, root_specs)
        if respect_gitignore:
            own = _gitignore(folder)
            if own is not None:
                specs = [*specs, (os.path.abspath(folder), own)]

        def keep(path: str, is_dir: bool) -> bool:
            if excluded is not None and excluded.match_file(_display(path) + ("/" if is_dir else "")):
                return False
            return not (respect_gitignore and _ignored(path, is_dir, specs))

        kept = []
        for name in sorted(dirs):
            path = os.path.join(folder, name)
            if name in DEFAULT_EXCLUDES or os.path.exists(os.path.join(path, "pyvenv.cfg")):
                continue
            if keep(path, True):
                kept.append(name)
                specs_by_dir[path] = specs
        dirs[:] = kept
        for name in names:
            if name.endswith(SOURCE_SUFFIXES):
                path = os.path.join(folder, name)
                if keep(path, False):
                    yield os.path.normpath(path)


def _display(path: str) -> str:
    relative = os.path.relpath(path)
    return (path if relative.startswith("..") else relative).replace(os.sep, "/")


# --- the parallel map ---------------------------------------------------------------------------

_worker_rules: tuple[type[Rule], ...] = ()
_worker_facts: ProjectFacts | None = None
_worker_options: Mapping[str, object] = {}
_worker_fix = True


def _init_worker(codes: tuple[str, ...], facts: ProjectFacts | None, options: Mapping[str, object],
                 fix: bool = True) -> None:
    global _worker_rules, _worker_facts, _worker_options, _worker_fix
    allow_deep_trees()
    by_code = {rule.code: rule for rule in all_rules()}
    _worker_rules = tuple(by_code[code] for code in codes)
    _worker_facts = facts
    _worker_options = options
    _worker_fix = fix


def read_source(path: str) -> bytes | Problem:
    try:
        # Non-blocking, and checked to be a regular file once open: a FIFO named ``.py`` (or a file
        # swapped for one after discovery) would otherwise block the run forever.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return Problem(path, READ_ERROR, "cannot read: not a regular file")
            data = handle.read()
    except OSError as err:
        return Problem(path, READ_ERROR, f"cannot read: {err.strerror or err}")
    if b"\x00" in data:
        return Problem(path, READ_ERROR, "cannot read: binary content, not Python source")
    return data


def fix_path(path: str, rules: Sequence[type[Rule]], facts: ProjectFacts | None = None,
             options: Mapping[str, object] | None = None, fix: bool = True) -> FileResult:
    data = read_source(path)
    if isinstance(data, Problem):
        return FileResult(path, b"", problems=[data])
    return fix_source(path, data, rules, facts, options=options, fix=fix)


def _facts_of_path(path: str) -> FileFacts:
    return _facts_of_data(path, read_source(path))


def _read_later(path: str) -> FileFacts | None:
    """The whole facts of a file whose facts the scan deferred (``facts.read_later``); None where it
    cannot be read again."""
    data = read_source(path)
    try:
        return None if isinstance(data, Problem) else _facts_or_raise(path, data, defer=False)
    except Exception:
        return None


facts_module.read_later = _read_later


def _facts_of_data(path: str, data: bytes | Problem) -> FileFacts:
    try:
        return _facts_or_raise(path, data)
    except Exception:  # a file we cannot read facts from contributes none; the fix pass reports it
        return FileFacts()


def _facts_or_raise(path: str, data: bytes | Problem, defer: bool = True) -> FileFacts:
    if isinstance(data, Problem) or len(data) > max_file_size(_scan_options):  # too large to parse: the fix pass says so
        return FileFacts()
    if is_notebook(path):
        from ddpfix.notebook import python_source

        data = python_source(data)
        if data is None:
            return FileFacts()
    return file_facts(path, data, defer=defer)


def _lean(result: FileResult) -> FileResult:
    if not result.changed and not result.findings:
        result.original = b""  # nothing to show or write: keep neither the bytes nor their trip between processes
    return result


def _fix_in_worker(path: str) -> FileResult:
    return _lean(fix_path(path, _worker_rules, _worker_facts, _worker_options, _worker_fix))


def gather_facts(paths: Sequence[str], rules: Sequence[type[Rule]], jobs: int = 1) -> ProjectFacts:
    """The facts pass over the whole run, done only when a selected rule reads facts."""
    if not any(rule.uses_facts for rule in rules):
        return ProjectFacts()
    return ProjectFacts.merge(_map(_facts_of_path, paths, jobs))


# What the scan says of a file: the fix pass must see it, may skip it, or must see it if a class
# of the file derives from a LightningModule of the run (known only once every file is scanned);
# or the scan fixed it already (DONE).
FIX, SKIP, IF_LIGHTNING, DONE = "fix", "skip", "if-lightning", "done"

_scan_rules: tuple[type[Rule], ...] = ()
_scan_options: Mapping[str, object] = {}
_scan_fix: bool | None = None  # None: the scan fixes nothing itself


def _init_scan(codes: tuple[str, ...], options: Mapping[str, object] | None = None, fix: bool | None = None) -> None:
    global _scan_rules, _scan_options, _scan_fix
    allow_deep_trees()
    by_code = {rule.code: rule for rule in all_rules()}
    _scan_rules = tuple(by_code[code] for code in codes)
    _scan_options = options or {}
    _scan_fix = fix


def _scan_path(path: str) -> tuple[FileFacts, str, FileResult | None]:
    data = read_source(path)
    try:
        facts = _facts_or_raise(path, data)
    except Exception:  # no facts, so no class list to decide IF_LIGHTNING by: the fix pass decides
        return FileFacts(), FIX, None
    # ``facts.lightning`` is ``b"lightning" in data`` wherever the verdict asks it: a full scan of
    # the file, which most files fail, is not repeated.
    verdict = _verdict(path, data, _scan_rules, facts.classes, facts.lightning)
    if verdict == FIX and _scan_fix is not None and isinstance(data, bytes) and _on_its_own(path, data, _scan_rules, facts.lightning):
        return facts, DONE, _lean(fix_source(path, data, _scan_rules, None, options=_scan_options, fix=_scan_fix))
    return facts, verdict, None


def _on_its_own(path: str, data: bytes, rules: Sequence[type[Rule]], lightning: bool) -> bool:
    """Whether ``fix_source`` gives this file the same result without the run's facts: the file is
    not Lightning code by its own words, and no other rule that reads the facts passes its
    prefilter. (The facts could still make it Lightning code, through a class deriving from a
    LightningModule of the run: ``_scan`` sends such a file to the fix pass after all.) Such files,
    in torch those with rank words and collectives for DDP005, are fixed by the scan that read them,
    not read and checked a second time after it."""
    if is_notebook(path) or lightning:
        return False
    return not any(
        rule.uses_facts and not rule.lightning_only and rule.applies_to(path) and rule.triggered_by(data)
        for rule in rules
    )


def _verdict(path: str, data: bytes | Problem, rules: Sequence[type[Rule]],
             classes: Sequence[tuple[str, tuple[str, ...]]], lightning: bool) -> str:
    """``engine._fix_source``'s first questions, asked while the facts pass has the bytes anyway:
    a file that cannot be read or decoded, or that some rule's trigger words may concern, goes to
    the fix pass. Only ever SKIP where ``fix_source`` would return nothing to say."""
    if isinstance(data, Problem) or is_notebook(path) or len(data) > max_file_size(_scan_options):
        return FIX
    if decode_problem(path, data, nul_checked=True) is not None:  # ``read_source`` checked for NUL bytes
        return FIX
    if any(not rule.lightning_only and rule.applies_to(path) and rule.triggered_by(data) for rule in rules):
        return FIX
    lightning_rules = [rule for rule in rules if rule.lightning_only and rule.applies_to(path)]
    if not lightning_rules or b"class" not in data and not lightning:
        return SKIP  # ``is_lightning_code`` is False without either word
    if not lightning:
        return IF_LIGHTNING
    module_rules = False
    for rule in lightning_rules:
        if rule.triggered_by(data):
            if not rule.module_only:
                return FIX
            module_rules = True
    if not module_rules:
        return SKIP
    # Only rules about code inside a LightningModule: the engine drops them unless a class of the
    # file derives from one (Lightning's own modules, which name every hook, mostly define none).
    return FIX if any("LightningModule" in bases for _, bases in classes) else IF_LIGHTNING


def scan(paths: Sequence[str], rules: Sequence[type[Rule]], jobs: int = 1) -> tuple[ProjectFacts, list[str]]:
    """The facts pass, which also decides from the bytes it reads which files the fix pass must see:
    in a big tree with little Lightning most files hold no rule's trigger words, and reading them
    a second time, then sending back an empty result each, cost the fix pass a quarter of its time.
    Returns the facts and those files, in the order of ``paths``."""
    facts, to_fix, _ = _scan(paths, rules, jobs)
    return facts, to_fix


def _scan(paths: Sequence[str], rules: Sequence[type[Rule]], jobs: int, options: Mapping[str, object] | None = None,
          fix: bool | None = None, whole: bool = False) -> tuple[ProjectFacts, list[str], dict[str, FileResult]]:
    """``scan``; with ``fix`` (True or False, as ``fix_files`` takes it) the scan also fixes the
    files it can on their own, and returns their results. ``whole``: ``paths`` are every file of
    the project (``covers_projects``)."""
    if not any(rule.uses_facts for rule in rules):
        return ProjectFacts(whole=whole), list(paths), {}
    codes = tuple(rule.code for rule in rules)
    # Reading a file's facts costs a fraction of a millisecond: bigger chunks than the fix pass's,
    # or the round trips between the processes cost more than the work (0.4 s of 2.4 on corpus A).
    scanned = _map(_scan_path, paths, jobs, initializer=_init_scan, initargs=(codes, dict(options or {}), fix),
                   max_chunk=32)
    facts = ProjectFacts.merge((file for file, _, _ in scanned), whole=whole)
    lightning_modules = facts.lightning_modules.keys()
    to_fix, done = [], {}
    for path, (file, verdict, result) in zip(paths, scanned):
        subclass = verdict in (IF_LIGHTNING, DONE) and any(lightning_modules & set(bases) for _, bases in file.classes)
        if verdict == DONE and not subclass:
            done[path] = result
        elif verdict in (FIX, DONE) or subclass:
            to_fix.append(path)  # a DONE file that is Lightning code after all: its Lightning rules did not run
    return facts, to_fix, done


def check_files(paths: Sequence[str], rules: Sequence[type[Rule]], jobs: int = 1,
                options: Mapping[str, object] | None = None, progress=None, fix: bool = True, whole: bool = False,
                ) -> tuple[ProjectFacts, list[FileResult]]:
    """The whole run over ``paths``: the scan (which fixes the files it can on their own), then
    the fix pass over the files that need the run's facts. Results of the files with something to
    say or that were looked at, in the order of ``paths``. ``progress(n)`` as in ``fix_files``;
    ``whole`` as in ``_scan``."""
    facts, to_fix, done = _scan(paths, rules, jobs, options, fix, whole)
    if progress:
        progress(len(paths) - len(to_fix))
    results = dict(done)
    results.update(zip(to_fix, fix_files(to_fix, rules, facts, jobs, options, progress, fix)))
    return facts, [results[path] for path in paths if path in results]


def fix_files(paths: Sequence[str], rules: Sequence[type[Rule]], facts: ProjectFacts, jobs: int = 1,
              options: Mapping[str, object] | None = None, progress=None, fix: bool = True) -> list[FileResult]:
    """``fix_path`` over every path; with ``jobs`` > 1 in worker processes. Results in the order of
    ``paths``. ``progress(n)`` is called as results come in. ``fix=False``: findings only (``--check``)."""
    codes = tuple(rule.code for rule in rules)
    return _map(_fix_in_worker, paths, jobs, initializer=_init_worker,
                initargs=(codes, facts, dict(options or {}), fix), progress=progress)


def single_fixes(results: Sequence[FileResult], rules: Sequence[type[Rule]], facts: ProjectFacts,
                 options: Mapping[str, object] | None = None, jobs: int = 1) -> dict[Finding, bytes]:
    """What each fixable finding's fix does on its own: the file's bytes with that fix alone
    applied, as an editor or a SARIF viewer would apply it. Each runs its own rule only (with
    ``only``, no other rule's fix is applied anyway; running all of them for every finding made
    JSON output over many findings nine times slower than ``--check``), a file per worker."""
    todo = [result for result in results if result.original and any(f.fixable for f in result.findings)]
    codes = tuple(rule.code for rule in rules)
    per_file = _map(_single_fixes_of, todo, jobs, initializer=_init_worker, initargs=(codes, facts, dict(options or {})),
                    size=lambda result: len(result.original))
    return {finding: output for found in per_file for finding, output in found}


def _single_fixes_of(result: FileResult) -> list[tuple[Finding, bytes]]:
    by_code = {rule.code: rule for rule in _worker_rules}
    return [
        (finding, fix_source(result.path, result.original, [by_code[finding.code]], _worker_facts,
                             only={finding.key}, options=_worker_options).output)
        for finding in result.findings if finding.fixable
    ]


def _map(function, paths: Sequence, jobs: int, initializer=None, initargs=(), progress=None,
         max_chunk: int = 8, size=None) -> list:
    results = []
    if jobs <= 1 or len(paths) < PARALLEL_THRESHOLD:
        if initializer is not None:
            initializer(*initargs)
        for path in paths:
            results.append(function(path))
            if progress:
                progress(1)
        return results
    # Largest files first, the largest one by one: one big file handed out last (torch's 460 kB
    # distributed_test.py parses for two seconds) would leave the other workers idle at the end,
    # and one in a chunk with other big ones would make that chunk the end of the run.
    size = size or _size
    order = sorted(range(len(paths)), key=lambda i: -size(paths[i]))
    chunk = max(1, min(max_chunk, len(paths) // (jobs * 16)))
    singles = jobs * SINGLE_FILES_PER_JOB if chunk > 1 else 0
    results = [None] * len(paths)
    from concurrent.futures import ProcessPoolExecutor  # a run of one file, or a few, never starts a pool
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(max_workers=jobs, initializer=initializer, initargs=initargs) as pool:
            largest = pool.map(function, [paths[i] for i in order[:singles]])
            rest = pool.map(function, [paths[i] for i in order[singles:]], chunksize=chunk)
            for index, result in zip(order, itertools.chain(largest, rest)):
                results[index] = result
                if progress:
                    progress(1)
            return results
    except BrokenProcessPool as err:
        raise WorkerCrashed(
            "a worker process died (out of memory, or a crash in the parser); nothing was written. "
            "Run again with --jobs 1 to see which file causes it."
        ) from err


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0  # gone or unreadable: the worker reports it


class WorkerCrashed(RuntimeError):
    """A worker process ended abruptly; its files' results are unknown."""
