"""DDP002's proof obligations that cross files: the run's default-device switches, and whether the run
saw the whole project (so that "no switch anywhere" means something).

A default device of CUDA (``torch.set_default_device("cuda")``, a CUDA default tensor type, a
``with torch.device("cuda"):`` block, Lightning's ``init_module()``) makes samplers draw on CUDA: there a
CUDA generator is what works, and a CPU one fails with "Expected a 'cuda' device type for generator but
found 'cpu'". The switch may stand in any file of the program, so the fix is proven only where the run
read every Python file of the project and found none.
"""

from __future__ import annotations

import os

from ddpfix.facts import DeviceSwitch, ProjectFacts

#: What marks a project's root folder: the walk for "every file of the project" starts there.
PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
#: Switches named in a message, at most.
SHOWN = 3

_whole: dict[tuple[str, frozenset[str]], bool] = {}


def project_root(path: str) -> str | None:
    """The nearest folder at or above ``path``'s own that holds a project marker; None if there is none."""
    folder = os.path.dirname(path)
    while True:
        if any(os.path.exists(os.path.join(folder, marker)) for marker in PROJECT_MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def sees_whole_project(path: str, facts: ProjectFacts) -> bool:
    """Whether the facts pass read every Python file of ``path``'s project (the files a run over the
    project's root would check: default excludes, .gitignore and the project's own ``exclude`` /
    ``extend-exclude`` honoured). False for stdin (``-``), a buffer that is no file on disk, a file
    outside any project (no marker above it), a file named alone in a project of several files, a
    folder below the root, or files the run left out."""
    real = os.path.realpath(path)
    if real not in facts.files or not os.path.isfile(real):
        return False
    root = project_root(real)
    if root is None:
        return False
    key = (root, facts.files)
    if key not in _whole:
        if len(_whole) > 64:
            _whole.clear()
        _whole[key] = _every_file_seen(root, facts.files)
    return _whole[key]


def _every_file_seen(root: str, seen: frozenset[str]) -> bool:
    import pathspec

    from ddpfix.config import ConfigError, load as load_config
    from ddpfix.runner import _ancestor_ignores, _walk  # lazily: the runner imports the rules

    pyproject = os.path.join(root, "pyproject.toml")
    try:
        config = load_config(pyproject if os.path.isfile(pyproject) else None)
    except (ConfigError, OSError):
        return False
    patterns = [*config.exclude, *config.extend_exclude]
    # The project's patterns, relative to its root (the runner matches them relative to the working
    # folder, which is the root when the project is checked as a whole).
    excluded = pathspec.GitIgnoreSpec.from_lines(patterns) if patterns else None
    for path in _walk(root, None, _ancestor_ignores(root), True):
        relative = os.path.relpath(path, root).replace(os.sep, "/")
        if excluded is not None and excluded.match_file(relative):
            continue
        if os.path.realpath(path) not in seen:
            return False
    return True


def describe(switch: DeviceSwitch, here: str) -> str:
    """``torch.set_default_device(...) (line 3)`` in this file, ``(train.py:3)`` in another, its path
    relative to this file's folder where it lies below it."""
    real = os.path.realpath(here)
    if switch.path == real:
        return f"{switch.what} (line {switch.line})"
    relative = os.path.relpath(switch.path, os.path.dirname(real))
    shown = switch.path if relative.startswith("..") else relative
    return f"{switch.what} ({shown.replace(os.sep, '/')}:{switch.line})"


def switches_text(switches: tuple[DeviceSwitch, ...], here: str) -> str:
    shown = ", ".join(describe(switch, here) for switch in switches[:SHOWN])
    more = len(switches) - SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def blocking_switch(switches: tuple[DeviceSwitch, ...], here: str) -> bool:
    """A switch of the whole process to a literal CUDA device in this very file: the sampler's draws
    are on CUDA there, and a CPU generator fails for everyone."""
    real = os.path.realpath(here)
    return any(s.cuda and not s.scoped and s.path == real for s in switches)
