"""Many files: discovery, then ``sources.fix_source`` over them in parallel, results in path order
(and, to a caller that asks, each file's result as soon as it is final: ``--write`` writes it then)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING

from ddpfix import budget
from ddpfix.engine import READ_ERROR, set_up_for_trees, decode_problem, max_file_size
from ddpfix.interrupts import check as check_interrupted, deferred, ignore_in_worker, stop_pool
from ddpfix.records import record
from ddpfix.syntax import with_syntax_checked
from ddpfix.sources import fix_source, is_notebook
import ddpfix.facts as facts_module
from ddpfix.facts import FileFacts, ProjectFacts, file_facts
from ddpfix.findings import FileResult, Finding, Problem
from ddpfix.model.program import ANY_MODULE, marked_root
from ddpfix.rules import all_rules
from ddpfix.rules.base import Rule
from ddpfix.settings import Flags, Resolver

if TYPE_CHECKING:
    from ddpfix.gitignore import GitIgnore

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
# A file read for its facts only (a project's file that the run did not name) costs about this
# fraction of a file checked, when it comes to starting worker processes (bench/project_facts.py:
# 0.5 ms a file in process; two workers cost 0.2 s to start).
FACTS_ONLY_PER_FILE = 32
# The largest files of a parallel run, this many per worker, are handed out one at a time.
SINGLE_FILES_PER_JOB = 8


def _spec(lines: Iterable[str]) -> GitIgnore:
    # Our matcher, not a regex translation: a stranger's .gitignore must not stall the walk.
    from ddpfix.gitignore import GitIgnore  # loaded where patterns are read: a file named alone never needs it

    return GitIgnore.from_lines(lines)


def _gitignore(folder: str) -> GitIgnore | None:
    try:
        with open(os.path.join(folder, ".gitignore"), encoding="utf-8", errors="replace") as handle:
            return _spec(handle)
    except OSError:
        return None


def _ancestor_ignores(folder: str) -> list[tuple[str, GitIgnore]]:
    """The .gitignore files that apply to ``folder`` from above: from the repository root down to its parent."""
    parent = os.path.realpath(folder)
    chain = []
    while True:
        chain.append(parent)
        if os.path.exists(os.path.join(parent, ".git")):
            break
        above = os.path.dirname(parent)
        if above == parent:
            return []  # not in a repository: no outer .gitignore applies
        parent = above
    specs = []
    for parent in reversed(chain[1:]):
        spec = _gitignore(parent)
        if spec is not None:
            specs.append((parent, spec))
    return specs


def _ignored(path: str, is_dir: bool, specs: Sequence[tuple[str, GitIgnore]]) -> bool:
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


def project_root(path: str) -> str | None:
    """The root folder (a real path) of the marked project ``path`` belongs to (``model.program``:
    the nearest pyproject.toml, setup.cfg, setup.py or .git); None where there is none."""
    return marked_root(path)


def walk_boundary(folder: str) -> str:
    """How far a walk of ``folder`` may reach (a real path): the repository it lies in, else its
    project, else the folder itself. A symbolic link in the walk to a file beyond it is skipped:
    discovery never reads or writes a file outside what the run was given (``ddpfix --write .``
    must not rewrite ``../outside/victim.py`` through ``train.py -> ../outside/victim.py``)."""
    real = here = os.path.realpath(folder)
    project = None
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        if project is None and os.path.isfile(os.path.join(here, "pyproject.toml")):
            project = here
        parent = os.path.dirname(here)
        if parent == here:
            return project or real
        here = parent


def _inside(real: str, folder: str) -> bool:
    return real == folder or real.startswith(folder.rstrip(os.sep) + os.sep)


@record
class Discovery:
    """What ``find_files`` found: the files to check (sorted, no duplicates), problems with the
    paths given, folders without Python files, and lines for stderr (``warning: ...`` for a folder
    named but excluded under ``--force-exclude``; ``note: ...`` for one checked although excluded,
    and for a symbolic link out of the folder given, skipped)."""

    files: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The real path of each file found -> the path as the user will see it.
    real: dict[str, str] = field(default_factory=dict)
    #: The walk stopped at ``limit`` files: ``files`` is not all there is.
    truncated: bool = False


def discover(
    paths: Iterable[str], exclude: Sequence[str] = (), respect_gitignore: bool = True
) -> tuple[list[str], list[Problem], list[str]]:
    """``find_files`` with ``exclude`` patterns (anchored at the current directory) and no
    pyproject.toml: the files, the problems, the folders without Python files."""
    found = find_files(paths, Resolver(Flags(exclude=tuple(exclude)), tables=False), respect_gitignore)
    return found.files, found.problems, found.empty


def find_files(paths: Iterable[str], resolver: Resolver, respect_gitignore: bool = True,
               force_exclude: bool = False, limit: int | None = None, whole_program: bool = False) -> Discovery:
    """The files of a run. Explicit files are always taken (unless ``force_exclude`` and their
    settings exclude them, as Ruff's ``--force-exclude``); folders are walked for Python files and
    notebooks, skipping default excludes, virtualenvs, each folder's ``exclude`` settings
    (``resolver``), .gitignore'd paths (unless told not to) and symbolic links to files outside
    the folder's repository or project. A folder named that is itself excluded is checked (it was
    named: Ruff's rule), with a note; with ``force_exclude`` it is skipped with a warning.
    ``whole_program``: every file of the program, for its facts: what the settings exclude and
    .gitignore leaves out is left out of fixing, not out of the program (only default excludes and
    virtualenvs, which hold no code of it, are skipped)."""
    found = Discovery()
    files = found.real
    for given in paths:
        if os.path.isfile(given):
            if not (force_exclude and named_exclusion(given, False, resolver)):
                files.setdefault(os.path.realpath(given), os.path.normpath(given))
            continue
        if not os.path.isdir(given):
            message = "no such file or directory" if not os.path.lexists(given) else _not_a_file(given)
            found.problems.append(Problem(given, READ_ERROR, message))
            continue
        reason = None if whole_program else named_exclusion(given, True, resolver)
        shown = _display(given)
        respect_gitignore = respect_gitignore and not whole_program
        root_specs = _ancestor_ignores(given) if respect_gitignore else []
        if root_specs and _ignored(os.path.abspath(given), True, root_specs):
            # A folder named inside a gitignored one (a package in .venv): named, so checked as an
            # excluded one is; the ignore rules above it would otherwise drop every file in it.
            reason = f"{reason}; also ignored by .gitignore" if reason else "ignored by .gitignore"
            root_specs = []
        if reason and force_exclude:
            found.notes.append(f"warning: {shown}: excluded ({reason}), so not checked (--force-exclude)")
            continue
        if reason:
            found.notes.append(f"note: {shown}: checked because it was named, although excluded ({reason}); "
                               "--force-exclude skips it")
        boundary = walk_boundary(given)
        spare = os.path.abspath(given) if reason else None
        real_folders: dict[str, str] = {}
        walked = 0
        for path in _walk(given, None if whole_program else resolver, spare, root_specs, respect_gitignore):
            walked += 1
            # The same file twice (a symlink, or a file inside a folder also given) is checked once:
            # a second write would find the file already changed. The walk does not enter linked
            # folders, so a file that is no link itself is its folder's real path plus its name (one
            # lstat; ``realpath`` per file took a second over 10,000 files).
            folder, name = os.path.split(path)
            if os.path.islink(path):
                real = os.path.realpath(path)
                if not _inside(real, boundary):
                    found.notes.append(f"note: {_display(path)}: skipped: a symbolic link to {real}, outside "
                                       f"{_display(boundary)}; it is never read or written")
                    continue
            else:
                if folder not in real_folders:
                    real_folders[folder] = os.path.realpath(folder)
                real = os.path.join(real_folders[folder], name)
            files.setdefault(real, path)
            if limit is not None and len(files) > limit:
                found.truncated = True
                break
        if not walked:
            found.empty.append(given)
        if found.truncated:
            break
    found.files = sorted(set(files.values()))
    return found


def named_exclusion(path: str, is_dir: bool, resolver: Resolver) -> str | None:
    """Why a path named on the command line is excluded, or None: it, or a folder above it up to
    the current directory (or, outside it, up to its project root), is a default exclude, a
    virtualenv, or matches an exclude pattern of the settings that govern it."""
    absolute = os.path.abspath(path)
    here = os.getcwd()
    stop = here if _inside(absolute, here) else project_root(absolute)
    item, item_is_dir = absolute, is_dir
    while item != stop and os.path.dirname(item) != item:
        name = os.path.basename(item)
        if item_is_dir and name in DEFAULT_EXCLUDES:
            return f'default exclude "{name}"'
        if item_is_dir and os.path.exists(os.path.join(item, "pyvenv.cfg")):
            return "a virtualenv"
        reason = resolver.for_folder(os.path.dirname(item)).excluded(item, item_is_dir)
        if reason:
            return reason
        if stop is None:
            break  # in no project: the path alone is judged
        item, item_is_dir = os.path.dirname(item), True
    return None


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


def _walk(root, resolver, spare, root_specs, respect_gitignore):
    specs_by_dir: dict[str, list] = {}
    for folder, dirs, names in os.walk(root):
        specs = specs_by_dir.pop(folder, root_specs)
        if respect_gitignore:
            own = _gitignore(folder)
            if own is not None:
                specs = [*specs, (os.path.abspath(folder), own)]
        settings = resolver.for_walked(folder, names) if resolver is not None else None

        def keep(path: str, is_dir: bool) -> bool:
            if settings is not None and settings.excluded(path, is_dir, spare) is not None:
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
_worker_named: frozenset[str] = frozenset()


def _init_worker(codes: tuple[str, ...], facts: ProjectFacts | None, options: Mapping[str, object],
                 fix: bool = True, named: frozenset[str] = frozenset()) -> None:
    global _worker_rules, _worker_facts, _worker_options, _worker_fix, _worker_named
    set_up_for_trees()
    by_code = {rule.code: rule for rule in all_rules()}
    _worker_rules = tuple(by_code[code] for code in codes)
    _worker_facts = facts
    _worker_options = options
    _worker_fix = fix
    _worker_named = named


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
    except Exception as err:
        budget.raise_if_wrapped(err)
        return None


facts_module.read_later = _read_later


def _facts_of_data(path: str, data: bytes | Problem) -> FileFacts:
    try:
        return _facts_or_raise(path, data)
    except Exception as err:  # a file we cannot read facts from contributes none; the fix pass reports it
        budget.raise_if_wrapped(err)
        return FileFacts()


def _facts_or_raise(path: str, data: bytes | Problem, defer: bool = True) -> FileFacts:
    if isinstance(data, Problem):
        return FileFacts()
    options = _scan_options_of(path)
    runs_scripts = False
    if is_notebook(path):  # its code, not its outputs, is what may be too large to parse
        from ddpfix.notebook import python_source

        # IPython's ``%run script.py`` runs a file in the kernel's process (the magic itself is not
        # in the code the facts read).
        runs_scripts = b"%run" in data or b"run_line_magic" in data
        data = python_source(data, options)
        if data is None:
            return FileFacts()
    if len(data) > max_file_size(options):  # too large to parse: the fix pass says so
        return FileFacts()
    facts = file_facts(path, data, defer=defer)
    if runs_scripts:
        facts.dynamic = (ANY_MODULE,)
    return facts


def _lean(result: FileResult) -> FileResult:
    if not result.changed and not result.findings:
        result.original = b""  # nothing to show or write: keep neither the bytes nor their trip between processes
    return result


def _fix_in_worker(path: str) -> FileResult:
    result = fix_path(path, _worker_rules, _worker_facts, _worker_options, _worker_fix)
    if path in _worker_named:
        result = with_syntax_checked(result, _worker_options)
    return _lean(result)


def gather_facts(paths: Sequence[str], rules: Sequence[type[Rule]], jobs: int = 1, whole: bool = False,
                 buffer: tuple[str, bytes] | None = None) -> ProjectFacts:
    """The facts pass over the whole run, done only when a selected rule reads facts. ``buffer``:
    (path, bytes) of a file read elsewhere (stdin, an editor buffer), in place of what is on disk."""
    if not any(rule.uses_facts for rule in rules):
        return ProjectFacts(whole=whole)
    parts = _map(_facts_of_path, paths, jobs)
    if buffer is not None:
        parts.append(_facts_of_data(*buffer))
    return ProjectFacts.merge(parts, whole=whole)


# What the scan says of a file: the fix pass must see it, may skip it, or must see it if a class
# of the file derives from a LightningModule of the run (known only once every file is scanned);
# or the scan fixed it already (DONE).
FIX, SKIP, IF_LIGHTNING, DONE = "fix", "skip", "if-lightning", "done"

_scan_rules: tuple[type[Rule], ...] = ()
_scan_options: Mapping[str, object] = {}
_scan_fix: bool | None = None  # None: the scan fixes nothing itself
#: Per-file settings: (codes, options) of each group, and each path's group where not the first.
_scan_groups: tuple[tuple[tuple[type[Rule], ...], Mapping[str, object]], ...] = ()
_scan_group_of: Mapping[str, int] = {}
#: Files of the project that the run did not name: their facts are read, nothing else.
_scan_facts_only: frozenset[str] = frozenset()
#: Files named on the command line: always syntax-checked (``syntax``).
_scan_named: frozenset[str] = frozenset()


def _init_scan(codes: tuple[str, ...], options: Mapping[str, object] | None = None, fix: bool | None = None,
               groups: Sequence[tuple[tuple[str, ...], Mapping[str, object]]] = (), group_of: Mapping[str, int] | None = None,
               facts_only: frozenset[str] = frozenset(), named: frozenset[str] = frozenset()) -> None:
    global _scan_rules, _scan_options, _scan_fix, _scan_groups, _scan_group_of, _scan_facts_only, _scan_named
    set_up_for_trees()
    by_code = {rule.code: rule for rule in all_rules()}
    _scan_rules = tuple(by_code[code] for code in codes)
    _scan_options = options or {}
    _scan_fix = fix
    _scan_groups = tuple((tuple(by_code[code] for code in group_codes), group_options)
                         for group_codes, group_options in groups)
    _scan_group_of = group_of or {}
    _scan_facts_only = facts_only
    _scan_named = named


def _scan_options_of(path: str) -> Mapping[str, object]:
    """The options of the settings that govern ``path`` in the scan (its group's, where not the first)."""
    group = _scan_group_of.get(path)
    return _scan_options if group is None else _scan_groups[group][1]


def _scan_path(path: str) -> tuple[FileFacts, str, FileResult | None]:
    data = read_source(path)
    try:
        facts = _facts_or_raise(path, data)
    except Exception as err:  # no facts, so no class list to decide IF_LIGHTNING by: the fix pass decides
        budget.raise_if_wrapped(err)
        return FileFacts(), FIX, None
    if path in _scan_facts_only:
        return facts, SKIP, None
    group = _scan_group_of.get(path)
    if group is not None:
        rules, options = _scan_groups[group]
        return _scan_verdict(path, data, facts, rules, options)
    return _scan_verdict(path, data, facts, _scan_rules, _scan_options)


def _scan_verdict(path: str, data: bytes | Problem, facts: FileFacts, rules: Sequence[type[Rule]],
                  options: Mapping[str, object]) -> tuple[FileFacts, str, FileResult | None]:
    # ``facts.lightning`` is ``b"lightning" in data`` wherever the verdict asks it: a full scan of
    # the file, which most files fail, is not repeated.
    verdict = _verdict(path, data, rules, options, facts.classes, facts.lightning)
    if verdict == FIX and _scan_fix is not None and isinstance(data, bytes) and _on_its_own(path, data, rules, facts.lightning):
        result = fix_source(path, data, rules, None, options=options, fix=_scan_fix)
        return facts, DONE, _lean(with_syntax_checked(result, options) if path in _scan_named else result)
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


def _verdict(path: str, data: bytes | Problem, rules: Sequence[type[Rule]], options: Mapping[str, object],
             classes: Sequence[tuple[str, tuple[str, ...]]], lightning: bool) -> str:
    """``engine._fix_source``'s first questions, asked while the facts pass has the bytes anyway:
    a file that cannot be read or decoded, or that some rule's trigger words may concern, goes to
    the fix pass. Only ever SKIP where ``fix_source`` would return nothing to say."""
    if isinstance(data, Problem) or is_notebook(path) or len(data) > max_file_size(options):
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
    # Only rules about code inside a LightningModule (or a Callback): the engine drops them unless a
    # class of the file derives from one (Lightning's own modules, which name every hook, mostly define none).
    kinds = {kind for rule in lightning_rules if rule.module_only for kind in rule.module_kinds}
    return FIX if any(kinds.intersection(bases) for _, bases in classes) else IF_LIGHTNING


def scan(paths: Sequence[str], rules: Sequence[type[Rule]], jobs: int = 1) -> tuple[ProjectFacts, list[str]]:
    """The facts pass, which also decides from the bytes it reads which files the fix pass must see:
    in a big tree with little Lightning most files hold no rule's trigger words, and reading them
    a second time, then sending back an empty result each, cost the fix pass a quarter of its time.
    Returns the facts and those files, in the order of ``paths``."""
    facts, to_fix, _ = _scan(paths, rules, jobs)
    return facts, to_fix


def _scan(paths: Sequence[str], rules: Sequence[type[Rule]], jobs: int, options: Mapping[str, object] | None = None,
          fix: bool | None = None, whole: bool = False, facts_from: Sequence[str] = (),
          groups: Sequence[RunGroup] = (), named: frozenset[str] = frozenset(), progress=None,
          on_result=None) -> tuple[ProjectFacts, list[str], dict[str, FileResult]]:
    """``scan``; with ``fix`` (True or False, as ``fix_files`` takes it) the scan also fixes the
    files it can on their own, and returns their results. ``whole``: ``paths`` and ``facts_from``
    are every file of their projects (``project.project_view``). ``facts_from``: files of the
    project the run did not name, read for their facts only. ``groups``: the paths checked with
    other settings than ``rules`` and ``options`` (``check_groups``). ``named``: files named on the
    command line, always syntax-checked: by the scan where it fixes them, else by the fix pass,
    whatever the scan says. ``progress`` as in ``check_files``; ``on_result(result)`` is handed, as
    they come, the results the scan made that are final and whose file no one reads again
    (``_final_at_once``); the caller hands over the rest."""
    if not any(rule.uses_facts for rule in [*rules, *(rule for group in groups for rule in group.rules)]):
        return ProjectFacts(whole=whole), list(paths), {}
    codes = tuple(rule.code for rule in rules)
    group_settings = tuple((tuple(rule.code for rule in group.rules), dict(group.options)) for group in groups)
    group_of = {path: index for index, group in enumerate(groups) for path in group.paths}
    everything = [*paths, *facts_from]
    if len(paths) + len(facts_from) // FACTS_ONLY_PER_FILE < PARALLEL_THRESHOLD:
        jobs = 1  # a few files named in a project of a few hundred: starting workers costs more

    def final_at_once(index: int, scanned: tuple[FileFacts, str, FileResult | None]):
        file, verdict, result = scanned
        return (file, verdict, on_result(result)) if verdict == DONE and _final_at_once(file) else scanned

    if progress:
        progress.stage("scan")
    # Reading a file's facts costs a fraction of a millisecond: bigger chunks than the fix pass's,
    # or the round trips between the processes cost more than the work (0.4 s of 2.4 on corpus A).
    scanned = _map(_scan_path, everything, jobs, initializer=_init_scan,
                   initargs=(codes, dict(options or {}), fix, group_settings, group_of, frozenset(facts_from), named),
                   max_chunk=32, progress=progress, on_result=final_at_once if on_result else None)
    facts = ProjectFacts.merge((file for file, _, _ in scanned), whole=whole)
    lightning_modules = {name for kind in {k for rule in _scan_rules for k in rule.module_kinds} for name in facts.of_kind(kind)}
    lightning_modules |= facts.lightning_modules.keys()
    to_fix, done = [], {}
    for path, (file, verdict, result) in zip(paths, scanned):
        subclass = verdict in (IF_LIGHTNING, DONE) and any(lightning_modules & set(bases) for _, bases in file.classes)
        if verdict == DONE and not subclass:
            done[path] = result
        elif verdict in (FIX, DONE) or subclass or path in named:
            to_fix.append(path)  # a DONE file that is Lightning code after all: its Lightning rules did not run
    return facts, to_fix, done


def _final_at_once(file: FileFacts) -> bool:
    """Whether the scan's result for ``file`` is final and may be handed over (written) before the
    scan ends: no class of the file has a base (only a base could make it Lightning code through the
    run's facts), and no facts of it were deferred (the fix pass may read it again: ``_read_again``)."""
    return file.hazards is not None and not file.switches_deferred and not any(bases for _, bases in file.classes)


def _read_again(facts: ProjectFacts) -> set[str]:
    """The files whose facts were deferred: a worker of the fix pass may read them again
    (``read_later``), and must find them as the scan did. Their results are handed over (written)
    once the fix pass is over."""
    return {*facts.hazard_sources, *(part for part in facts.switch_parts if isinstance(part, str))}


def check_files(paths: Sequence[str], rules: Sequence[type[Rule]], jobs: int = 1,
                options: Mapping[str, object] | None = None, progress=None, fix: bool = True, whole: bool = False,
                facts_from: Sequence[str] = (), named: Iterable[str] = (), on_result=None,
                ) -> tuple[ProjectFacts, list[FileResult]]:
    """The whole run over ``paths``: the scan (which fixes the files it can on their own), then
    the fix pass over the files that need the run's facts. Results of the files with something to
    say or that were looked at, in the order of ``paths``. ``whole`` and ``facts_from`` as in
    ``_scan``; ``named``: the paths named on the command line, always syntax-checked (``syntax``).

    ``on_result(result)``, where given, is called in this process once with each file's final
    result, as soon as it is known (in the order they come in), and what it returns is kept:
    ``--write`` writes each file then, so a run stopped part-way keeps what it fixed. A file whose
    facts the fix pass may read again (``_read_again``) is handed over when that pass is over: it
    must not change under a worker's feet. ``progress``: told of each stage (``stage("scan")``,
    ``stage("fix")``, then ``stage("write")`` for those files) and of each file's start and end."""
    return check_groups([RunGroup(paths, rules, options or {})], jobs, progress, fix, whole, facts_from, named,
                        on_result)


@record(frozen=True)
class RunGroup:
    """Files checked with the same rules and options (the settings that govern them)."""

    paths: Sequence[str]
    rules: Sequence[type[Rule]]
    options: Mapping[str, object]


def check_groups(groups: Sequence[RunGroup], jobs: int = 1, progress=None, fix: bool = True, whole: bool = False,
                 facts_from: Sequence[str] = (), named: Iterable[str] = (), on_result=None,
                 ) -> tuple[ProjectFacts, list[FileResult]]:
    """``check_files`` over files governed by different settings: one scan over all of them (one
    set of facts), then the fix pass group by group. Results in the order of the paths; of
    several groups' paths, sorted (discovery's order)."""
    first, others = groups[0], groups[1:]
    paths = [path for group in groups for path in group.paths]
    named = frozenset(named)
    handed: set[str] = set()  # the paths whose results ``on_result`` has had

    def hand(result: FileResult) -> FileResult:
        handed.add(result.path)
        return on_result(result)

    facts, to_fix, done = _scan(paths, first.rules, jobs, first.options, fix, whole, facts_from, others, named,
                                progress, on_result and hand)
    later = _read_again(facts) if on_result else set()
    for path, result in done.items():
        if on_result and path not in handed and path not in later:
            done[path] = hand(result)
    if progress:
        progress.stage("fix")
    results = dict(done)
    at_once = (lambda result: result if result.path in later else hand(result)) if on_result else None
    waiting = set(to_fix)
    for group in groups:
        todo = [path for path in group.paths if path in waiting]
        results.update(zip(todo, fix_files(todo, group.rules, facts, jobs, group.options, progress, fix, named, at_once)))
    ordered = [path for path in (paths if len(groups) == 1 else sorted(paths)) if path in results]
    if on_result:  # the files the fix pass might have read again, now it is over
        held = [path for path in ordered if path not in handed]
        if progress and any(results[path].changed for path in held):
            progress.stage("write")
            progress.start(held, [len(results[path].output) for path in held])
        for position, path in enumerate(held):
            results[path] = hand(results[path])
            if progress:
                progress.finished(position)
    return facts, [results[path] for path in ordered]


def fix_files(paths: Sequence[str], rules: Sequence[type[Rule]], facts: ProjectFacts, jobs: int = 1,
              options: Mapping[str, object] | None = None, progress=None, fix: bool = True,
              named: frozenset[str] = frozenset(), on_result=None) -> list[FileResult]:
    """``fix_path`` over every path; with ``jobs`` > 1 in worker processes. Results in the order of
    ``paths``; ``progress`` and ``on_result`` as in ``check_files``. ``fix=False``: findings only (``--check``)."""
    codes = tuple(rule.code for rule in rules)
    return _map(_fix_in_worker, paths, jobs, initializer=_init_worker,
                initargs=(codes, facts, dict(options or {}), fix, named), progress=progress,
                on_result=(lambda index, result: on_result(result)) if on_result else None)


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


def _map(function, items: Sequence, jobs: int, initializer=None, initargs=(), progress=None,
         max_chunk: int = 8, size=None, on_result=None) -> list:
    """``function`` over ``items``, results in the order of ``items``; with ``jobs`` > 1 (and enough
    items) in worker processes, which hand results back as they finish. ``on_result(index, result)``
    is called in this process as each comes in, and its return value is kept. ``progress``, where
    given, hears ``start(names, sizes)`` with the items in the order they are handed out, then
    ``finished(position)`` of each, in that order's positions.

    A Ctrl-C (or any exception) while the workers run ends them within a deadline
    (``interrupts.stop_pool``) before it goes on up: no worker outlives the run."""
    size = size or _size
    parallel = jobs > 1 and len(items) >= PARALLEL_THRESHOLD
    sizes = [size(item) for item in items] if parallel or progress else []
    # Largest files first, the largest one by one: one big file handed out last (torch's 460 kB
    # distributed_test.py parses for two seconds) would leave the other workers idle at the end,
    # and one in a chunk with other big ones would make that chunk the end of the run.
    order = sorted(range(len(items)), key=lambda i: -sizes[i]) if parallel else range(len(items))
    if progress:
        progress.start([str(items[i]) for i in order], [sizes[i] for i in order])
    results = [None] * len(items)

    def take(position: int, result) -> None:
        check_interrupted()  # a Ctrl-C Python could not raise where it came stops the run here
        index = order[position]
        results[index] = on_result(index, result) if on_result else result
        if progress:
            progress.finished(position)

    if not parallel:
        if initializer is not None:
            initializer(*initargs)
        for position, item in enumerate(items):
            take(position, function(item))
        return results
    chunk = max(1, min(max_chunk, len(items) // (jobs * 16)))
    singles = jobs * SINGLE_FILES_PER_JOB if chunk > 1 else 0
    batches = [range(p, p + 1) for p in range(min(singles, len(items)))]
    batches += [range(p, min(p + chunk, len(items))) for p in range(len(batches), len(items), chunk)]
    from concurrent.futures import ProcessPoolExecutor, as_completed  # a run of one file, or a few, never starts a pool
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_start_worker, initargs=(initializer, initargs))
    try:
        with deferred():  # the workers start here: a Ctrl-C waits until stop_pool can know them all
            futures = {pool.submit(_run_batch, function, [items[order[p]] for p in batch]): batch for batch in batches}
        for future in as_completed(futures):
            for position, result in zip(futures[future], future.result()):
                take(position, result)
        pool.shutdown()
    except BrokenProcessPool as err:
        stop_pool(pool, grace=0)
        raise WorkerCrashed(
            "a worker process died (out of memory, or a crash in the parser); the run stopped. "
            "Run again with --jobs 1 to see which file causes it."
        ) from err
    except BaseException:
        stop_pool(pool)
        raise
    return results


def _start_worker(initializer, initargs) -> None:
    ignore_in_worker()
    if initializer is not None:
        initializer(*initargs)


def _run_batch(function, items: Sequence) -> list:
    return [function(item) for item in items]


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0  # gone or unreadable: the worker reports it


class WorkerCrashed(RuntimeError):
    """A worker process ended abruptly; its files' results are unknown."""
