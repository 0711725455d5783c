"""The Lightning in force: which versions a file may run with, and what those versions have.

Read, never imported: a notebook's own install magics first (``%pip install "pytorch-lightning==1.6.5"``:
what it runs with when its cells run), then the project's own pins, found upward from the file to its repository's
root (lock files, which name the one version installed, before declarations such as
``requirements*.txt``, ``pyproject.toml``'s PEP 621 and Poetry tables, ``setup.py``/``setup.cfg``,
``environment.yml``); else the metadata of a distribution installed in the project's own virtualenv
(``.venv``/``venv`` at the root) or in the interpreter running ddpfix; else unknown (None).

Per package: ``lightning`` (``import lightning``, ``lightning.pytorch``) and ``pytorch_lightning``
are two distributions; a file is judged by the pin of the one it imports. A range that allows
versions on both sides of a feature's first release answers "unknown" for that feature.

``FEATURES`` says when each keyword, hook or value a fix may write first shipped: a fix never writes
one the version in force lacks, and an unknown version makes such a fix unsafe.
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import os
import re

from ddpfix.lazy_regex import lazy_compile
from ddpfix.records import record

Version = tuple[int, int, int]

#: The first release that has each feature a fix may write, or whose presence a fix's safety asks
#: (checked in the released wheels).
FEATURES: dict[str, Version] = {
    "self.log(rank_zero_only=...)": (1, 4, 0),
    # ``log_dict`` took the keyword a release later (1.4.9's has none; review round 15).
    "self.log_dict(rank_zero_only=...)": (1, 5, 0),
    "strategy='ddp_notebook'": (1, 7, 0),
    # (1.5.0 has neither; 1.8.6 is the earliest wheel checked that has it, 1.9.5 lacks the ``_true`` one)
    "strategy='ddp_notebook_find_unused_parameters_false'": (1, 8, 6),
    "strategy='ddp_notebook_find_unused_parameters_true'": (2, 0, 0),
    "DDPStrategy(start_method=...)": (1, 9, 0),  # 1.8.6's DDPStrategy has no such parameter
    "Trainer(use_distributed_sampler=...)": (2, 0, 0),
    "the LR finder's fix of PL#19813": (2, 4, 0),
    # ``Trainer(move_metrics_to_cpu=...)`` was removed in 2.0: the results stay on the device.
    "logged values kept on the device (no move_metrics_to_cpu)": (2, 0, 0),
    # 1.4.2, 1.8.6, 1.9.5 and 2.0.0 save on rank 0 alone with no collective; 2.1.0 added the barrier.
    "Trainer.save_checkpoint's barrier": (2, 1, 0),
    # A duration (``timedelta``, ``"DD:HH:MM:SS"``, a dict) as ``Trainer(val_check_interval=...)``:
    # validation by each rank's clock (PL#21071; 2.5.5 takes an int or a float only).
    "val_check_interval as a duration": (2, 6, 0),
}

#: Distributions by the top-level package a file imports.
DISTRIBUTIONS = {"lightning": "lightning", "pytorch_lightning": "pytorch-lightning", "lightning_fabric": "lightning-fabric"}
_NORMAL = {"lightning": "lightning", "pytorch-lightning": "pytorch-lightning", "pytorch_lightning": "pytorch-lightning",
           "lightning-fabric": "lightning-fabric", "lightning_fabric": "lightning-fabric"}
_REQUIREMENT = lazy_compile(
    r"""(?:^|[\s"',\[(])(?P<name>lightning(?:[-_]fabric)?|pytorch[-_]lightning)(?![\w-])(?:\[[^\]]*\])?\s*"""
    r"""(?P<spec>(?:[<>=!~]=?|===)[^;"'#\n\]]*)?""",
    re.I | re.M,
)
_POETRY = lazy_compile(
    r"""^\s*["']?(?P<name>lightning(?:[-_]fabric)?|pytorch[-_]lightning)["']?\s*=\s*(?:\{[^}\n]*version\s*=\s*)?"""
    r"""["']\s*(?P<op>[\^~]|[<>=!~]=?)?\s*(?P<version>[0-9][0-9.*]*)""",
    re.I | re.M,
)
# ``[[package]]`` tables of poetry.lock / uv.lock / pdm.lock: a name line, then its version line.
_LOCKED = lazy_compile(
    r"""^name\s*=\s*["'](?P<name>lightning(?:[-_]fabric)?|pytorch[-_]lightning)["']\s*\r?\n"""
    r"""(?:[^\[\n][^\n]*\r?\n)*?version\s*=\s*["'](?P<version>[0-9][^"']*)["']""",
    re.I | re.M,
)
_PIPFILE_LOCK = lazy_compile(r'"(?P<name>lightning(?:[-_]fabric)?|pytorch[-_]lightning)"\s*:\s*\{[^}]*?"version"\s*:\s*"==(?P<version>[^"]+)"', re.I)
_CLAUSE = lazy_compile(r"(===|==|~=|!=|<=|>=|<|>|=)\s*([0-9][0-9a-zA-Z.*+!-]*)")
_LOCK_FILES = ("poetry.lock", "uv.lock", "pdm.lock", "Pipfile.lock")
_DECLARATIONS = ("pyproject.toml", "setup.cfg", "setup.py", "environment.yml", "environment.yaml", "Pipfile")


@record(frozen=True)
class LightningVersion:
    """The versions of one Lightning distribution a file may run with."""

    package: str  # the distribution: "lightning", "pytorch-lightning", "lightning-fabric"
    spec: str  # "==1.3.5", ">=2.1,<2.4", "2.6.6 (installed)"
    source: str  # where it was read: "requirements.txt:3", "installed distribution"
    low: Version
    high: Version  # with ``high_open``: below it; else up to it, included
    high_open: bool

    def describe(self) -> str:
        return f"{self.package} {self.spec} ({self.source})"

    def at_least(self, version: Version) -> bool | None:
        """Every allowed version is ``version`` or later (True), none is (False), or some are (None)."""
        if self.low >= version:
            return True
        if self.high < version or (self.high == version and self.high_open):
            return False
        return None

    def has(self, feature: str) -> bool | None:
        """The version in force has ``feature`` (a key of ``FEATURES``): True, False, or None (unknown)."""
        return self.at_least(FEATURES[feature])


def feature_problem(version: LightningVersion | None, feature: str) -> str | None:
    """Why a fix that writes ``feature`` is not proven to run (None where every allowed version has it)."""
    first = ".".join(map(str, FEATURES[feature]))
    if version is None:
        return (f"the Lightning version could not be found (no pin in the project, none installed); {feature} "
                f"needs {first} or later")
    has = version.has(feature)
    if has:
        return None
    if has is False:
        return f"{version.describe()} has no {feature} (it arrived in {first})"
    return f"{version.describe()} allows versions before {first}, which have no {feature}"


def parse_version(text: str) -> Version:
    parts = []
    for piece in text.split(".")[:3]:
        digits = re.match(r"\d+", piece)
        parts.append(int(digits.group()) if digits else 0)
    return tuple(parts + [0] * (3 - len(parts)))  # type: ignore[return-value]


def version_range(spec: str) -> tuple[Version, Version, bool]:
    """(lowest allowed, highest, whether the highest is excluded) of a requirement specifier."""
    low: Version = (0, 0, 0)
    high: Version = (10**6, 0, 0)
    high_open = False
    for op, text in _CLAUSE.findall(spec):
        version = parse_version(text.rstrip(".*"))
        if op in ("==", "===") and "*" not in text:
            low = high = version
            high_open = False
        elif op in ("==", "===", "~=", "="):  # ``==2.3.*``, ``~=2.3.1``, conda's ``=2.3``: a series
            parts = text.rstrip(".*").split(".")
            low = max(low, version)
            if op == "~=":
                parts = parts[:-1]  # ~=2.3.1 allows 2.3.x; ~=2.3 allows 2.x
            bumped = [int(p) if p.isdigit() else 0 for p in parts] or [0]
            bumped[-1] += 1
            top = parse_version(".".join(map(str, bumped)))
            if top <= high:
                high, high_open = top, True
        elif op in (">=", ">"):
            low = max(low, version)
        elif op == "<=":
            if version < high:
                high, high_open = version, False
        elif op == "<":
            if version <= high:
                high, high_open = version, True
    return low, high, high_open


def _pinned(package: str, spec: str, source: str) -> LightningVersion:
    return LightningVersion(package, spec, source, *version_range(spec))


def _poetry_spec(op: str | None, version: str) -> str:
    major, minor, _ = parse_version(version)
    if op == "^":
        return f">={version},<{major + 1}" if major else f">={version},<0.{minor + 1}"
    if op == "~":
        return f">={version},<{major}.{minor + 1}"
    return f"{op}{version}" if op else f"=={version}"


def _line(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def _without_comments(text: str) -> str:
    """The text with each line's comment blanked out (a ``#`` outside quotes to the line's end), so
    that prose such as ``# needs pytorch-lightning>=1.4`` is never read as a pin. Line numbers stay."""
    lines = []
    for line in text.split("\n"):
        quote = None
        for index, char in enumerate(line):
            if quote:
                if char == quote:
                    quote = None
            elif char in "\"'":
                quote = char
            elif char == "#" and (index == 0 or line[index - 1] in " \t"):
                line = line[:index]
                break
        lines.append(line)
    return "\n".join(lines)


def _union(package: str, pins: list[LightningVersion]) -> LightningVersion:
    """One pin for several entries of a distribution (environment markers, a dev and a main file,
    two files of one folder): any of them may be in force, so the range covers them all."""
    if len(pins) == 1:
        return pins[0]
    low = min(pin.low for pin in pins)
    top = max(pins, key=lambda pin: (pin.high, not pin.high_open))
    spec = " or ".join(dict.fromkeys(pin.spec for pin in pins))
    sources = ", ".join(dict.fromkeys(pin.source for pin in pins))
    return LightningVersion(package, spec, sources, low, top.high, top.high_open)


_MARKER = lazy_compile(r";[^\n]*")


def pins_in_text(text: str, source: str, name: str) -> dict[str, LightningVersion]:
    """Each Lightning distribution's pin in one file's text (``source``: its shown path; ``name``
    its file name, which says how to read it); several entries of one distribution (markers such as
    ``; python_version < "3.8"``) give their union."""
    found: dict[str, list[LightningVersion]] = {}
    if name in _LOCK_FILES:
        pattern = _PIPFILE_LOCK if name == "Pipfile.lock" else _LOCKED
        for match in pattern.finditer(text):
            package = _NORMAL[match.group("name").lower()]
            spec = f"=={match.group('version')}"
            found.setdefault(package, []).append(_pinned(package, spec, f"{source}:{_line(text, match.start('name'))}"))
        return {package: _union(package, pins) for package, pins in found.items()}
    text = _without_comments(text)
    if name in ("pyproject.toml", "Pipfile"):
        for match in _POETRY.finditer(text):  # ``pytorch-lightning = "^1.3"`` in [tool.poetry.dependencies]
            package = _NORMAL[match.group("name").lower()]
            spec = _poetry_spec(match.group("op"), match.group("version"))
            found.setdefault(package, []).append(_pinned(package, spec, f"{source}:{_line(text, match.start('name'))}"))
    for match in _REQUIREMENT.finditer(text):
        spec = (match.group("spec") or "").strip().rstrip(",").strip()
        spec = _MARKER.sub("", spec).strip()
        if not spec or not _CLAUSE.search(spec):
            continue
        if re.fullmatch(r"=\s*[0-9][0-9.*]*", spec):  # conda: ``lightning=2.5`` means 2.5.*
            spec = spec if spec.count(".") < 2 or "*" in spec else "=" + spec  # ``=2.5.1`` is exact
        package = _NORMAL[match.group("name").lower()]
        pin = _pinned(package, spec, f"{source}:{_line(text, match.start('name'))}")
        if pin not in found.get(package, []):
            found.setdefault(package, []).append(pin)
    return {package: _union(package, pins) for package, pins in found.items()}


_INCLUDE = lazy_compile(r"^\s*(?:-r|-c|--requirement|--constraint)[\s=]+(\S+)", re.M)


def _read(path: str) -> str | None:
    try:
        if os.path.getsize(path) > 8_000_000:
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _requirement_pins(path: str, seen: set[str]) -> dict[str, list[LightningVersion]]:
    """The pins of a requirements file and of the files it includes (``-r``/``-c``), each once."""
    real = os.path.realpath(path)
    if real in seen or len(seen) > 50:
        return {}
    seen.add(real)
    text = _read(path)
    if text is None:
        return {}
    found: dict[str, list[LightningVersion]] = {}
    for package, pin in pins_in_text(text, _shown(path), "requirements.txt").items():
        found.setdefault(package, []).append(pin)
    for match in _INCLUDE.finditer(_without_comments(text)):
        included = os.path.join(os.path.dirname(path), match.group(1))
        for package, pins in _requirement_pins(included, seen).items():
            found.setdefault(package, []).extend(pins)
    return found


def _shown(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


@functools.lru_cache(maxsize=None)
def _pins_in_folder(folder: str) -> tuple[dict[str, LightningVersion], dict[str, LightningVersion]]:
    """(locked, declared) pins of the files in ``folder`` itself: a lock file names the version
    installed; declarations in several files of the folder (``requirements.txt`` and
    ``requirements-dev.txt``, ``setup.py`` and ``environment.yml``, a ``requirements/`` folder's
    files) give their union."""
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    locked: dict[str, list[LightningVersion]] = {}
    declared: dict[str, list[LightningVersion]] = {}
    seen: set[str] = set()
    for name in names:
        path = os.path.join(folder, name)
        if name in _LOCK_FILES or name in _DECLARATIONS:
            text = _read(path)
            if text is None:
                continue
            target = locked if name in _LOCK_FILES else declared
            for package, pin in pins_in_text(text, _shown(path), name).items():
                target.setdefault(package, []).append(pin)
        elif "requirement" in name and name.endswith((".txt", ".in")):
            # ``requirements.txt``, ``dev-requirements.txt``, ``requirements_gpu.in`` (review helper-45, c03)
            for package, pins in _requirement_pins(path, seen).items():
                declared.setdefault(package, []).extend(pins)
        elif name.startswith(("environment", "conda")) and name.endswith((".yml", ".yaml")) and name not in _DECLARATIONS:
            text = _read(path)  # ``environment-gpu.yml``, ``conda.yaml`` (an MLproject's)
            if text is not None:
                for package, pin in pins_in_text(text, _shown(path), "environment.yml").items():
                    declared.setdefault(package, []).append(pin)
        elif _installs_packages(name):
            text = _read(path)  # a Dockerfile's or a Makefile's ``pip install``, tox's ``deps``
            if text is not None:
                for match in _PINNED_LIGHTNING.finditer(text):
                    shown = f"{_shown(path)}:{_line(text, match.start())}"
                    for package, pin in pins_in_text(match.group(), shown, "requirements.txt").items():
                        declared.setdefault(package, []).append(dataclasses.replace(pin, source=shown))
        elif name in ("requirements", "requirement") and os.path.isdir(path):
            # ``requirements/base.txt``, ``requirements/pytorch/base.txt``: a folder of them, which
            # ``setup.py`` reads or a ``-r`` names (review round 15); their union
            for inner in sorted(glob.glob(os.path.join(path, "**", "*.txt"), recursive=True)
                                + glob.glob(os.path.join(path, "**", "*.in"), recursive=True))[:200]:
                for package, pins in _requirement_pins(inner, seen).items():
                    declared.setdefault(package, []).extend(pins)
    return ({package: _union(package, pins) for package, pins in locked.items()},
            {package: _union(package, pins) for package, pins in declared.items()})


def _installs_packages(name: str) -> bool:
    """A file that may install the project's packages outside its declarations: a Dockerfile, tox's
    or nox's settings, an MLproject, a Makefile, a shell script."""
    return (name.startswith("Dockerfile") or name.endswith((".dockerfile", ".sh")) or
            name in ("tox.ini", "noxfile.py", "MLproject", "Makefile", "Containerfile", "Jenkinsfile"))


#: A Lightning distribution with a version specifier, anywhere in a line (``pip install
#: pytorch-lightning==1.3.8``, ``deps = pytorch_lightning>=1.9``).
_PINNED_LIGHTNING = lazy_compile(r"(?<![\w.-])(?:pytorch[-_]lightning|lightning(?:[-_]fabric)?)[ \t]*"
                                 r"(?:===?|>=|<=|~=|!=|<|>)[ \t]*[0-9][\w.*]*(?:[ \t]*,[ \t]*(?:===?|>=|<=|~=|!=|<|>)"
                                 r"[ \t]*[0-9][\w.*]*)*")


#: A notebook's own install (``%pip install pytorch-lightning==1.6.5``, ``!pip install -q ...``): the
#: version it runs with, whatever the project pins (review round 15).
_INSTALL_MAGIC = lazy_compile(r"[%!][ \t]*pip3?[ \t]+install\b([^\n]*)")


@functools.lru_cache(maxsize=None)
def _notebook_pins(path: str) -> dict[str, LightningVersion]:
    """The pins of the install magics in the notebook at ``path`` (their union)."""
    text = _read(path)
    if text is None or "pip" not in text:
        return {}
    found: dict[str, list[LightningVersion]] = {}
    for match in _INSTALL_MAGIC.finditer(text):
        arguments = match.group(1).replace('\\"', '"').split('",')[0]  # to the end of the JSON string
        for package, pin in pins_in_text(arguments, "", "requirements.txt").items():
            found.setdefault(package, []).append(dataclasses.replace(pin, source=f"{_shown(path)}:{_line(text, match.start())}"))
    return {package: _union(package, pins) for package, pins in found.items()}


@functools.lru_cache(maxsize=None)
def _project_pins(folder: str) -> dict[str, LightningVersion]:
    """Each distribution's pin found upward from ``folder`` to its repository's root: the nearest
    folder that pins it decides (its lock file before its declarations), so ``legacy/``'s own
    requirements are not overridden by the repository root's lock file."""
    found: dict[str, LightningVersion] = {}
    here = folder
    while True:
        own_locked, own_declared = _pins_in_folder(here)
        for package in {*own_locked, *own_declared}:
            if package not in found:
                found[package] = own_locked.get(package) or own_declared[package]
        parent = os.path.dirname(here)
        if parent == here or os.path.exists(os.path.join(here, ".git")):
            return found
        here = parent


@functools.lru_cache(maxsize=None)
def _installed_in_venv(folder: str) -> dict[str, LightningVersion]:
    """Distributions installed in a virtualenv at ``folder`` or above (``.venv``, ``venv``): the
    project's own environment, read from its ``*.dist-info`` folder names."""
    found: dict[str, LightningVersion] = {}
    here = folder
    while True:
        for venv in (".venv", "venv", "env"):
            if not os.path.isfile(os.path.join(here, venv, "pyvenv.cfg")):
                continue
            for info in glob.glob(os.path.join(here, venv, "lib", "python*", "site-packages", "*.dist-info")):
                base = os.path.basename(info)[: -len(".dist-info")]
                name, _, version = base.partition("-")
                package = _NORMAL.get(name.lower().replace("_", "-"))
                if package and version:
                    found.setdefault(package, _pinned(package, f"=={version}", _shown(info)))
        parent = os.path.dirname(here)
        if found or parent == here or os.path.exists(os.path.join(here, ".git")):
            return found
        here = parent


@functools.lru_cache(maxsize=None)
def entry_point_providers(groups: tuple[str, ...]) -> tuple[str, ...]:
    """The installed distributions that declare entry points in ``groups`` (metadata only:
    ``model.installed``)."""
    from ddpfix.model.installed import entry_point_providers as declared

    return declared(groups)


def _installed(package: str) -> LightningVersion | None:
    from ddpfix.model.installed import version as installed_version

    version = installed_version(package)  # metadata only: Lightning itself is never imported
    if version is None:
        return None
    return LightningVersion(package, f"{version} (installed)", "installed distribution", *version_range(f"=={version}"))


def version_in_force(path: str, imported: str | tuple[str, ...] | None = None) -> LightningVersion | None:
    """The Lightning version the file at ``path`` runs with. ``imported``: the top-level package(s)
    the file imports (``lightning``, ``pytorch_lightning``, ``lightning_fabric``; several where a
    ``try``/``except ImportError`` takes either: then either may run, and the answer covers both, or
    is None where one of them is not known); None: whichever the project pins (``lightning`` first).
    None where nothing is known."""
    if isinstance(imported, tuple) and len(imported) > 1:
        each = [version_in_force(path, package) for package in imported]
        if any(version is None for version in each):
            return None
        return _union("/".join(version.package for version in each), each)  # type: ignore[arg-type]
    if isinstance(imported, tuple):
        imported = imported[0] if imported else None
    folder = os.path.dirname(os.path.abspath(path))
    packages = [DISTRIBUTIONS[imported]] if imported in DISTRIBUTIONS else ["lightning", "pytorch-lightning", "lightning-fabric"]
    own = _notebook_pins(os.path.abspath(path)) if path.endswith(".ipynb") else {}
    for source in (own, _project_pins(folder), _installed_in_venv(folder)):
        for package in packages:
            if package in source:
                return source[package]
    for package in packages:
        installed = _installed(package)
        if installed is not None:
            return installed
    return None


_TRAINER_PACKAGES = ("lightning", "pytorch_lightning")


@functools.lru_cache(maxsize=8)  # asked per finding of a file: searching its text each time was quadratic
def imported_package(data: bytes) -> tuple[str, ...]:
    """The Lightning packages a file imports (``lightning`` and ``pytorch_lightning``, either or
    both), else ``lightning_fabric`` where that is all it imports; () for none."""
    found = tuple(package for package in _TRAINER_PACKAGES
                  if re.search(rb"^\s*(?:from|import)\s+" + package.encode() + rb"\b", data, re.M))
    if found:
        return found
    if re.search(rb"^\s*(?:from|import)\s+lightning_fabric\b", data, re.M):
        return ("lightning_fabric",)
    return ()
