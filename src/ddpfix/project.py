"""Project facts whatever paths are named.

What crosses files (a monitor in train.py of a metric model.py logs under a rank guard) must come
from the whole project, even when only some of its files are named: pre-commit names the staged
files, an editor one buffer. So the facts are read from every file of each project a named path
belongs to (``model.program.program_root``: the folder of the nearest pyproject.toml, setup.cfg,
setup.py or .git; with none, the named file's folder), found by the same discovery rules as a folder
named (default excludes, .gitignore, ``exclude`` settings), while only the named files are reported
and fixed. The facts are then whole (``ProjectFacts.whole``), and fixes resting on them can be safe.
Only a truly partial view (stdin without a file name, a project too big to read) keeps them partial.

The one place this is decided: the CLI (files and stdin) and the language server ask
``project_view``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from ddpfix.facts import ProjectFacts
from ddpfix.model.program import program_root
from ddpfix.records import record
from ddpfix.runner import find_files, gather_facts, named_exclusion, project_root
from ddpfix.settings import Resolver

#: A project above this many files is not read whole for a few files named in it (a home folder
#: that is a git repository): the facts stay partial, and the run says so once.
MAX_PROJECT_FILES = 20_000


@record(frozen=True)
class ProjectView:
    """The projects of the paths a run names."""

    #: Their project roots (real paths), in the order first named.
    roots: tuple[str, ...]
    #: The files of those projects the run did not name: read for their facts, never reported or written.
    others: tuple[str, ...]
    #: The named files and ``others`` are every file of the projects: facts from them are whole.
    whole: bool
    #: Why the facts are partial (None when whole).
    partial_because: str | None = None
    #: What a run should say on stderr, once: why the view is partial (a project too big to read whole).
    note: str | None = None


def project_view(paths: Iterable[str], named_files: dict[str, str] | Sequence[str], resolver: Resolver,
                 respect_gitignore: bool = True) -> ProjectView:
    """The projects of ``paths`` (files and folders as named on the command line, or the file name
    an editor buffer or stdin stands for). ``named_files``: the files the run checks (their real
    path -> the path shown, as ``Discovery.real``; or plain paths). A path in no marked project
    belongs to the program of its folder (``model.program.program_root``): a lone script is whole."""
    if not isinstance(named_files, dict):
        named_files = {os.path.realpath(path): path for path in named_files}
    roots: list[str] = []
    partial_because = note = None
    for given in paths:
        root = program_root(given)  # a lone script's folder is its program
        if root not in roots:
            roots.append(root)
    others: dict[str, str] = {}
    for root in roots:
        # Every file of the program, those the settings exclude or .gitignore leaves out too: left
        # out of fixing is not absent from the program (a gitignored experiments/ script that makes
        # CUDA the default device runs the same data code).
        found = find_files([_shown(root)], resolver, respect_gitignore, limit=MAX_PROJECT_FILES, whole_program=True)
        if found.truncated:
            partial_because = f"the project at {_shown(root)} has over {MAX_PROJECT_FILES:,} files"
            note = (f"{partial_because}: facts come from the files named only, so fixes that need the whole "
                    "project stay unsafe (name the project's folder to read it all)")
            continue
        for real, shown in found.real.items():
            if real not in named_files:
                others.setdefault(real, shown)
    return ProjectView(tuple(roots), tuple(sorted(others.values())), partial_because is None, partial_because, note)


def buffer_facts(name: str, data: bytes, resolver: Resolver, respect_gitignore: bool = True,
                 jobs: int = 1) -> ProjectFacts:
    """The facts for a buffer that stands for the file ``name`` (stdin with ``--stdin-filename``,
    an editor buffer): its program's files (``project_view``), with the buffer in place of that file."""
    view = project_view([name], [name], resolver, respect_gitignore)
    return gather_facts(view.others, resolver.for_path(name).rules, jobs, view.whole, buffer=(name, data))


def settings_report(paths: Iterable[str], resolver: Resolver) -> list[str]:
    """What ``--show-settings`` prints: for each path, the settings that apply and where they come
    from, where its facts come from, and whether it is excluded."""
    lines = []
    for path in paths:
        if project_root(path) is not None:
            project = f"project = {_shown(program_root(path))} (facts from all its files)"
        else:
            project = (f"project = {_shown(program_root(path))} (no pyproject.toml, setup.cfg, setup.py or git repository "
                       "above it: the folder is the program; facts from all its files)")
        excluded = named_exclusion(path, os.path.isdir(path), resolver)
        lines += [f"{_shown(path)}:", *(f"  {line}" for line in resolver.for_path(path).describe()), f"  {project}",
                  f"  excluded = {excluded} (checked only when named explicitly, unless --force-exclude)"
                  if excluded else "  excluded = no"]
    return lines


def _shown(path: str) -> str:
    relative = os.path.relpath(path)
    return (path if relative.startswith("..") else relative).replace(os.sep, "/")
