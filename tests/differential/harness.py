"""The differential harness: proof by running that ddpfix's fixes change nothing a correct program
computes except the DDP failure.

A case is a tiny, realistic Lightning script under ``cases/<rule-name>/<case>.py`` whose first line
says what ddpfix must do with it::

    # differential: safe
    # differential: safe; reference=all
    # differential: unchanged
    # differential: unsafe

ddpfix runs twice on a copy of the case alone in a fresh project folder: ``python -m ddpfix --write
--no-color -q .`` (the whole project, complete facts) and ``... FILE`` (the file named alone, a
partial view on which ddpfix may hold fixes back).

- ``safe``: the project run changes the file (and the case's own rule is among the fixes), and the
  FILE run writes the same or nothing; original and rewrite compute the same in one process
  (weights, buffers, every metric, the ``extra`` values the script records), and the same under
  ``devices=2, strategy="ddp"`` (every rank). Where the original fails under DDP by design (it hangs, crashes or
  computes a rank's shard only), ``<case>.reference.py`` beside it is the fix a person would write:
  the rewrite's DDP run must match the reference's, and the original's DDP run must *not* (else the
  case claims a failure it does not have). ``reference=all`` makes the reference the yardstick in
  one process too, for an original whose single-process result is not reproducible (a split drawn
  from an unseeded generator): the original is then held to the rewrite's *shape* only (parameter
  names and shapes, metric names, split sizes). The state each saves must load into the other with
  ``strict=True``, both ways. In every DDP run of the rewrite, all ranks finish and hold the same
  weights and the same ``splits``.
- ``original=fails`` (``safe`` only, with a reference): the original cannot run on this machine at
  all, in one process either (CUDA-only code on a CPU-only build: ``torch.Generator(device="cuda")``,
  ``.cuda()``, a ``device_map`` to a GPU). The reference is then the yardstick everywhere: the
  rewrite must compute what the reference does in one process and under DDP (each loading the
  other's state), and the original must fail in one process (its last error is noted; under DDP
  each rank would fail the same way, so that run is left out).
- ``project=FOLDER``: a folder beside the case holding the other files of the user's project (a
  ``components.py`` the script imports a module class from). They are copied beside the case in
  every folder ddpfix reads and every run: ddpfix's proof may rest on them, and the runs import
  them. ddpfix must leave them as they are.
- ``stubs=FOLDER``: a folder beside the case holding a small stand-in for a library this machine
  lacks (``transformers`` for DDP008). It is put first on the ``PYTHONPATH`` of the case's
  training runs only (never in the folder ddpfix reads); ``DDPFIX_DIFF_NO_STUBS=1`` leaves it out,
  to run the same case against the real library where it is installed.
- A notebook case (``<case>.ipynb``, its first cell's first line the header): its code cells are
  run as one script (magic lines commented out). The rewrite (and a reference) run *as in a
  notebook*: under a launcher that sets ``sys.ps1`` before the script runs, so that Lightning sees an
  interactive environment, as in a Jupyter kernel. The original is run twice: as a plain script
  (the yardstick: what its code computes where Lightning lets it run) and as in a notebook, where
  it must either compute the same or fail (the failure is noted, e.g. Lightning's refusal of
  ``strategy="ddp"`` in an interactive environment). A notebook records its results from a
  callback (``probe.callback()``), in each rank's own process.
- ``unchanged``: the default ``--write`` leaves the file byte-identical in both runs (the rule
  refuses, or its fix is marked unsafe). Nothing is trained.
- ``unsafe``: the default ``--write`` leaves it byte-identical in both runs, and ``--write
  --unsafe-fixes`` changes it (the fix is offered for a person to review). A ddpfix without
  ``--unsafe-fixes`` yields the result ``needs --unsafe-fixes``.

Every subprocess (ddpfix, each training run) runs in its own session/process group under a hard
timeout; on timeout, or when the run leaves processes behind (a DDP rank waiting on a dead peer),
that group and nothing else is killed, while the group leader is still unreaped (so the group id
cannot have been reused). Each training run gets a fresh ``MASTER_PORT`` and ``OMP_NUM_THREADS=1``.
"""

from __future__ import annotations

import atexit
import json
import math
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
ROOT = HERE.parent.parent
# The ddpfix to drive: this checkout's, unless DDPFIX_DIFF_SRC names another ``src`` folder (to
# hold another revision to the same cases).
SRC = Path(os.environ.get("DDPFIX_DIFF_SRC") or ROOT / "src").resolve()
# The warm interpreter that training runs are forked from (this checkout's: it is test machinery).
WARM = ROOT / "src" / "ddpfix" / "rehearse" / "warm.py"

def _load_warm():
    import importlib.util

    spec = importlib.util.spec_from_file_location("ddpfix_warm", WARM)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


warm = _load_warm()

EXPECTATIONS = ("safe", "unchanged", "unsafe")
HEADER = re.compile(r"#\s*differential:\s*(?P<expectation>[a-z]+)\s*(?:;\s*(?P<options>.*?))?\s*$")
NEEDS_UNSAFE = "needs --unsafe-fixes"

# Seconds. A normal run takes 3-6 s on 2 cores; the limits are for loaded CI machines. The original
# of a case with a reference is expected to fail under DDP, possibly by hanging: its limit is shorter.
TRAIN_TIMEOUT = float(os.environ.get("DDPFIX_DIFF_TIMEOUT", "150"))
FAILING_TIMEOUT = float(os.environ.get("DDPFIX_DIFF_FAILING_TIMEOUT", "60"))
DDPFIX_TIMEOUT = 120.0

# Floats are compared with a tolerance: a reference may compute a value another way (a mean of
# gathered values instead of Lightning's sync); every difference the bugs make is far larger.
REL_TOL, ABS_TOL = 1e-6, 1e-9


# --- cases -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    rule: str
    name: str
    path: Path
    expectation: str
    options: dict[str, str]

    @property
    def id(self) -> str:
        return f"{self.rule}/{self.name}"

    @property
    def notebook(self) -> bool:
        return self.path.suffix == ".ipynb"

    @property
    def reference(self) -> Path | None:
        path = self.path.with_name(f"{self.name}.reference{self.path.suffix}")
        return path if path.exists() else None

    @property
    def original_fails(self) -> bool:
        """The original cannot run on this machine at all (``original=fails``): the reference is the
        yardstick in one process too."""
        return self.options.get("original") == "fails"

    @property
    def reference_everywhere(self) -> bool:
        return self.options.get("reference") == "all" or self.original_fails

    @property
    def stubs(self) -> Path | None:
        """The folder of stand-in libraries the case's runs import (``stubs=FOLDER``), if any."""
        name = self.options.get("stubs")
        if not name or os.environ.get("DDPFIX_DIFF_NO_STUBS"):
            return None
        return self.path.parent / name

    @property
    def project(self) -> Path | None:
        """The folder of the project's other files, copied beside the case (``project=FOLDER``)."""
        name = self.options.get("project")
        return self.path.parent / name if name else None

    def place(self, source: Path, target: Path) -> None:
        """Copy ``source`` (the case, or its reference) to ``target``, with the project's other files
        beside it."""
        target.parent.mkdir(parents=True, exist_ok=True)
        if self.project is not None:
            shutil.copytree(self.project, target.parent, dirs_exist_ok=True)
        shutil.copyfile(source, target)

    @property
    def trains(self) -> bool:
        return self.expectation == "safe"

    @property
    def python(self) -> str | None:
        """The interpreter its training runs use: this one, or for a Lightning 1.x case
        (``lightning=1``) ``lightning1_python()`` (None where there is none)."""
        return lightning1_python() if self.options.get("lightning") == "1" else sys.executable


LIGHTNING1_VENV = ROOT / ".venv-lightning1"
#: What the Lightning 1.x interpreter holds: the CPU torch the suite pins (first, so that nothing
#: pulls another build), Lightning's last 1.x release, and the setuptools whose ``pkg_resources``
#: it imports.
LIGHTNING1_REQUIREMENTS = (("torch==2.13.0",), ("pytorch-lightning==1.9.5", "setuptools<70"))


def ensure_lightning1(log: Callable[[str], None] = lambda _: None) -> str | None:
    """``lightning1_python()``, making ``.venv-lightning1`` first where there is none (a minute or
    two, once; callers in several threads wait for the one build); None where it cannot be made
    (no package index): the reason is logged."""
    with _LIGHTNING1_BUILD:
        found = lightning1_python()
        if found is not None:
            return found
        shutil.rmtree(LIGHTNING1_VENV, ignore_errors=True)  # what an interrupted build left
        try:
            _build_step([sys.executable, "-m", "venv", str(LIGHTNING1_VENV)], timeout=300)
            pip = [str(LIGHTNING1_VENV / "bin" / "python"), "-m", "pip", "install", "-q"]
            for requirements in LIGHTNING1_REQUIREMENTS:
                _build_step([*pip, *requirements], timeout=900)
            _build_step([str(LIGHTNING1_VENV / "bin" / "python"), "-c", "import pytorch_lightning"], timeout=300)
            (LIGHTNING1_VENV / LIGHTNING1_MADE).write_text("made whole by tests/differential/harness.py\n")
        except (OSError, subprocess.SubprocessError) as error:
            detail = getattr(error, "stderr", b"") or b""
            log(f"could not make {LIGHTNING1_VENV.name}: {error} {detail.decode(errors='replace')[-500:]}")
            shutil.rmtree(LIGHTNING1_VENV, ignore_errors=True)
            return None
        return lightning1_python()


_BUILD_STEPS: set[subprocess.Popen] = set()  # the build's processes still running


def _build_step(command: list[str], timeout: float) -> None:
    """Run one step of the build in a process group of its own, known to ``_end_the_build`` while
    it runs; raise ``CalledProcessError`` (with its output) where it fails, ``TimeoutExpired``
    (its group killed) where it runs over ``timeout``."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    _BUILD_STEPS.add(process)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise
    finally:
        _BUILD_STEPS.discard(process)
    if process.returncode != 0:
        raise subprocess.CalledProcessError(process.returncode, command, stdout, stderr)


def _kill_group(process: subprocess.Popen) -> None:
    """End a build step and every process it started (its group: pip's own children too)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


@atexit.register
def _end_the_build() -> None:
    """A test session that ends while the build runs in its thread (``-x`` on an early failure)
    ends the build's processes too, rather than leaving pip running: the venv then has no marker,
    and the next session builds it again."""
    for process in list(_BUILD_STEPS):
        _kill_group(process)


def ensure_lightning1_in_background() -> None:
    """Start making ``.venv-lightning1`` in a thread, where it is missing: the suite asks this
    when its first test starts, so that the pip installs overlap the tests before the
    differential cases of Lightning 1.x (which then wait for the same build)."""
    if lightning1_python() is None:
        threading.Thread(target=ensure_lightning1, name="make .venv-lightning1", daemon=True).start()


#: Made together: one build at a time, and what marks a build that ran to its end (a build
#: interrupted halfway leaves a venv without it, which the next build replaces).
_LIGHTNING1_BUILD = threading.Lock()
LIGHTNING1_MADE = "ddpfix-made"


def lightning1_python() -> str | None:
    """An interpreter with ``pytorch_lightning`` 1.x, for the cases of Lightning 1.x's hooks (2.x
    refuses a module that defines them): ``$DDPFIX_DIFF_LIGHTNING1``, else ``.venv-lightning1`` of
    the checkout (``.ci/run`` makes it: torch first, then ``pytorch-lightning==1.9.5``); None
    without either."""
    named = os.environ.get("DDPFIX_DIFF_LIGHTNING1")
    if named:
        return named
    found = ROOT / ".venv-lightning1" / "bin" / "python"
    return str(found) if found.exists() and (LIGHTNING1_VENV / LIGHTNING1_MADE).exists() else None


def notebook_cells(text: str) -> list[str]:
    """The source of each cell of a notebook (JSON text), in order."""
    cells = json.loads(text).get("cells", [])
    return [c["source"] if isinstance(c["source"], str) else "".join(c["source"]) for c in cells]


def case_text(path: Path) -> str:
    """A case's text as its header is read: a script's, or a notebook's first cell."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        cells = notebook_cells(text)
        return cells[0] if cells else ""
    return text


def parse_header(text: str) -> tuple[str, dict[str, str]]:
    first = text.splitlines()[0] if text else ""
    match = HEADER.match(first)
    if not match or match["expectation"] not in EXPECTATIONS:
        raise ValueError(f"the first line must be '# differential: {'|'.join(EXPECTATIONS)}', not {first!r}")
    options: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in (match["options"] or "").split(";"))):
        key, _, value = part.partition("=")
        options[key.strip()] = value.strip()
    unknown = set(options) - {"reference", "original", "stubs", "lightning", "project"}
    if (unknown or options.get("reference", "all") not in ("all", "ddp") or options.get("lightning", "1") != "1"
            or options.get("original", "fails") != "fails"
            or any(key in options and not re.fullmatch(r"\w+", options[key]) for key in ("stubs", "project"))):
        raise ValueError(f"unknown header options {options!r} in {first!r}")
    if "original" in options and match["expectation"] != "safe":
        raise ValueError(f"original=fails is for safe cases (with a reference), not in {first!r}")
    return match["expectation"], options


def discover(rule: str | None = None, case: str | None = None, root: Path = CASES) -> list[Case]:
    """Every case (``<rule>/<case>.py`` or ``.ipynb``, references excluded), sorted; ``rule``/``case`` filter by
    name (a case filter may also be ``rule/case``)."""
    found: list[Case] = []
    for path in sorted([*root.glob("*/*.py"), *root.glob("*/*.ipynb")]):
        if path.name.endswith((".reference.py", ".reference.ipynb")) or path.name == "__init__.py":
            continue
        name = path.stem
        if rule and path.parent.name != rule:
            continue
        if case and case not in (name, f"{path.parent.name}/{name}"):
            continue
        expectation, options = parse_header(case_text(path))
        found.append(Case(path.parent.name, name, path, expectation, options))
    return found


# --- subprocesses in their own process group ---------------------------------------------------


@dataclass
class Proc:
    returncode: int | None  # None: killed at the timeout (it hung)
    stdout: str
    stderr: str
    seconds: float
    stragglers: bool = False  # processes of its group outlived the leader and were killed

    @property
    def hung(self) -> bool:
        return self.returncode is None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_group(argv: list[str], env: dict[str, str], cwd: Path, timeout: float, warm: "Warm | None" = None) -> Proc:
    """Run ``argv`` as the leader of a new process group; kill its group (only it) on timeout or
    when members outlive the leader. The leader is waited for with ``WNOWAIT`` so that it stays a
    zombie, holding its pid (the group id), until the group has been killed. With ``warm``, a
    ``python SCRIPT`` run is forked from that warm interpreter where it takes the request (see
    ``ddpfix/rehearse/warm.py``), else started cold."""
    start = time.monotonic()
    started = warm.start(argv, env, cwd) if warm is not None else None
    if started is None:
        started = _Cold(argv, env, cwd)
    deadline = start + timeout
    status = started.poll(deadline)
    hung = status is None
    stragglers = False
    if hung:
        os.killpg(started.pid, signal.SIGKILL)
        status = started.poll(time.monotonic() + 10.0)
    else:
        # Members may still be finishing (a DDP rank writing its results, or one that a dead peer's
        # closed socket is about to end): wait for them within the time left, then kill the group.
        grace = min(deadline, time.monotonic() + 30.0)
        while _other_members(started.pid) and time.monotonic() < grace:
            time.sleep(0.05)
        if _other_members(started.pid):
            stragglers = True
            os.killpg(started.pid, signal.SIGKILL)
    if hung or stragglers:
        # SIGKILL is sent, not done: on a loaded machine a member may run on for a moment (CI saw
        # one still alive right after). Wait for the group to end while the leader, unreaped, holds
        # its id.
        gone_by = time.monotonic() + 10.0
        while _other_members(started.pid) and time.monotonic() < gone_by:
            time.sleep(0.01)
    returncode = started.reap()  # only now may its pid (the group id) be reused
    out, err = started.output()
    return Proc(None if hung else returncode, out, err, time.monotonic() - start, stragglers)


class _Output:
    """Collects a run's stdout and stderr from two pipes, in threads."""

    def __init__(self, out, err) -> None:
        self.chunks: dict[str, list[bytes]] = {"out": [], "err": []}
        self.readers = [threading.Thread(target=self._drain, args=(out, "out"), daemon=True),
                        threading.Thread(target=self._drain, args=(err, "err"), daemon=True)]
        for reader in self.readers:
            reader.start()

    def _drain(self, stream, key: str) -> None:
        for block in iter(lambda: stream.read1(65536), b""):
            self.chunks[key].append(block)
        stream.close()

    def text(self) -> tuple[str, str]:
        for reader in self.readers:
            reader.join(timeout=10)
        return tuple(b"".join(self.chunks[k]).decode("utf-8", "replace") for k in ("out", "err"))


class _Cold:
    """A run in a fresh interpreter: this process's child, leading a new session."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self.pid = self.proc.pid
        self.streams = _Output(self.proc.stdout, self.proc.stderr)

    def poll(self, deadline: float) -> int | None:
        """Whether the leader has exited by ``deadline`` (it stays unreaped); None if not."""
        delay = 0.01
        while True:
            if os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return 0
            if time.monotonic() >= deadline:
                return None
            time.sleep(delay)
            delay = min(delay * 1.5, 0.1)

    def reap(self) -> int:
        return self.proc.wait()

    def output(self) -> tuple[str, str]:
        return self.streams.text()


class Warm:
    """A warm interpreter (``ddpfix/rehearse/warm.py``) that has imported torch and Lightning,
    started on first use with ``env`` (what training runs share; a run whose start-up environment
    differs is refused by it and runs cold), ended with this process."""

    def __init__(self, env: dict[str, str], modules: tuple[str, ...] = ("torch", "lightning")) -> None:
        self.env, self.modules = env, modules
        self.socket: str | None = None
        self.server: subprocess.Popen | None = None
        self.failed = False
        self.forked = 0  # runs it has forked (a refused one runs cold and is not counted)

    def _serve(self) -> bool:
        if self.server is not None or self.failed:
            return not self.failed
        folder = tempfile.mkdtemp(prefix="ddpfix-warm-")
        self.socket = os.path.join(folder, "socket")
        log = open(os.path.join(folder, "server.log"), "wb")
        self.server = subprocess.Popen([sys.executable, str(WARM), "serve", self.socket, *self.modules], env=self.env,
                                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        log.close()
        ready = select.select([self.server.stdout], [], [], 180)[0] and self.server.stdout.readline() == b"ready\n"
        self.server.stdout.close()
        if not ready:
            self.close()
            self.failed = True
        else:
            import atexit
            atexit.register(self.close)
        return not self.failed

    def start(self, argv: list[str], env: dict[str, str], cwd: Path) -> "_WarmRun | None":
        """The run forked from the warm interpreter, or None where it cannot be (not ``python
        SCRIPT.py``, a start-up environment that differs, no server)."""
        if len(argv) < 2 or argv[0] != sys.executable or not argv[1].endswith(".py") or not self._serve():
            return None
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        devnull = os.open(os.devnull, os.O_RDONLY)
        try:
            conn, lines, answer = warm.request(self.socket, argv[1:], env, str(cwd), [devnull, out_w, err_w])
        except OSError:
            answer = {"refused": "no server"}
        finally:
            for fd in (out_w, err_w, devnull):
                os.close(fd)
        if "pid" not in answer:
            os.close(out_r)
            os.close(err_r)
            return None
        self.forked += 1
        return _WarmRun(answer["pid"], conn, lines, _Output(os.fdopen(out_r, "rb"), os.fdopen(err_r, "rb")))

    def refusals(self) -> list[str]:
        """What the server refused (its log: ``refused [SCRIPT]: WHY``), launched ranks included."""
        log = Path(os.path.dirname(self.socket)) / "server.log" if self.socket else None
        return [line for line in (log.read_text().splitlines() if log and log.exists() else []) if line.startswith("refused")]

    def close(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()  # the server kills every run it started, then exits
            try:
                self.server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.server.pid, signal.SIGKILL)
                self.server.wait()
        if self.socket and not os.environ.get("DDPFIX_DIFF_KEEP_WARM_LOG"):
            shutil.rmtree(os.path.dirname(self.socket), ignore_errors=True)
            self.socket = None


class _WarmRun:
    """A run forked by the warm interpreter: it leads its own group; its exit status comes over the
    socket, and the server reaps it only when told (until then its pid, the group id, is held)."""

    def __init__(self, pid: int, conn, lines, streams: _Output) -> None:
        self.pid, self.conn, self.lines, self.streams = pid, conn, lines, streams
        self.status: int | None = None

    def poll(self, deadline: float) -> int | None:
        while self.status is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.conn.settimeout(left)
            try:
                message = self.lines.read()
            except TimeoutError:
                return None
            self.status = 1 if message is None else message["status"]
        return self.status

    def reap(self) -> int:
        try:
            self.conn.settimeout(None)
            warm._send(self.conn, {"reap": True})
        except OSError:
            pass
        self.conn.close()
        return 1 if self.status is None else self.status

    def output(self) -> tuple[str, str]:
        return self.streams.text()


def _other_members(pgid: int) -> bool:
    """Whether a process other than the (zombie) leader is in group ``pgid`` (Linux /proc)."""
    proc = Path("/proc")
    if not proc.is_dir():  # pragma: no cover - elsewhere (not Linux): assume none remain
        return False
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == pgid:
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after the last ')'.
        fields = stat[stat.rfind(")") + 2:].split()  # state, ppid, pgrp, ...
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


def _python_env(extra_paths: Iterable[Path] = ()) -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(p) for p in extra_paths]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


# --- ddpfix ------------------------------------------------------------------------------------


@dataclass
class Rewrite:
    before: bytes
    after: bytes
    proc: Proc
    unsafe: bool

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def missing_flag(self) -> bool:
        return self.unsafe and self.proc.returncode == 2 and "no such option" in self.proc.stderr.lower()

    @property
    def errored(self) -> bool:
        return self.proc.returncode not in (0, 1)

    def fixed_codes(self) -> list[str]:
        """Codes of the findings ddpfix reports as written (``[fixed]``)."""
        return re.findall(r"^\S.*?:\d+:\d+: ([A-Z]+\d+) \[fixed\]", self.proc.stdout, re.M)

    def codes(self) -> list[str]:
        return re.findall(r"^\S.*?:\d+:\d+: ([A-Z]+\d+) ", self.proc.stdout, re.M)

    def summary(self) -> str:
        return (self.proc.stdout + self.proc.stderr).strip()


def ddpfix(args: list[str], cwd: Path, timeout: float = DDPFIX_TIMEOUT) -> Proc:
    """``python -m ddpfix ARGS`` with this worktree's ``src`` first on the path."""
    env = _python_env([SRC])
    env["NO_COLOR"] = "1"
    return run_group([sys.executable, "-m", "ddpfix", *args], env, cwd, timeout)


_codes: dict[str, str] | None = None


def rule_code(rule: str) -> str:
    """``unseeded-random-split`` -> ``DDP012``, from ``ddpfix --list-rules``."""
    global _codes
    if _codes is None:
        listing = ddpfix(["--list-rules"], ROOT).stdout
        _codes = {m[2]: m[1] for m in re.finditer(r"^([A-Z]+\d+)\s+(\S+)", listing, re.M)}
    return _codes.get(rule, "?")


def rewrite(source: Path, folder: Path, unsafe: bool = False, whole: bool = True, project: Path | None = None) -> Rewrite:
    """Copy ``source`` alone into ``folder`` (a fresh folder, so that no other file's facts — seeds,
    monitored metrics — reach ddpfix; ``project``: a folder of the project's other files, copied
    beside it, which must stay unchanged) with a ``pyproject.toml`` of default settings (the folder
    is a project root), and run ``python -m ddpfix --write --show-fixes --no-color -q`` (``--unsafe-fixes`` too if
    asked) on it: on the folder (``whole``: the run reads the whole project, so its facts are
    complete), or on the file named alone (``FILE``: a partial view, on which ddpfix may hold back
    fixes whose safety rests on the rest of the project)."""
    folder.mkdir(parents=True, exist_ok=False)
    (folder / "pyproject.toml").write_text("[tool.ddpfix]\n", encoding="utf-8")
    if project is not None:
        shutil.copytree(project, folder, dirs_exist_ok=True)
    target = folder / source.name
    shutil.copyfile(source, target)
    before = source.read_bytes()
    args = ["--write", "--show-fixes", "--no-color", "-q", *(["--unsafe-fixes"] if unsafe else []), "." if whole else target.name]
    proc = ddpfix(args, folder)
    if project is not None:
        for other in project.rglob("*"):
            if other.is_file() and (folder / other.relative_to(project)).read_bytes() != other.read_bytes():
                raise AssertionError(f"ddpfix changed the project's file {other.relative_to(project)}")
    return Rewrite(before, target.read_bytes(), proc, unsafe)


# --- training runs -----------------------------------------------------------------------------


@dataclass
class Run:
    label: str
    script: Path
    devices: int
    proc: Proc
    out: Path
    ranks: dict[int, dict[str, Any]] = field(default_factory=dict)

    @property
    def state(self) -> Path | None:
        path = self.out / "state.pt"
        return path if path.exists() else None

    @property
    def ok(self) -> bool:
        return self.proc.returncode == 0 and sorted(self.ranks) == list(range(self.devices))

    def describe(self) -> str:
        if self.proc.hung:
            status = f"hung (killed after {self.proc.seconds:.0f} s)"
        else:
            status = f"exit {self.proc.returncode}"
        tail = "\n".join(self.proc.stderr.strip().splitlines()[-15:])
        return f"{self.label} ({self.devices} process{'es' if self.devices > 1 else ''}): {status}, ranks recorded {sorted(self.ranks)}\n{tail}"


# Runs a script as a Jupyter kernel would hold it: ``sys.ps1`` is set (Lightning's _IS_INTERACTIVE reads
# it, or ``sys.flags.interactive``) before the script's first line. ``python -i`` would do as well, but
# it exits 0 whatever the script raised.
INTERACTIVE = (
    "import runpy, sys\n"
    "sys.ps1 = '>>> '\n"
    "path = sys.argv[1]\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(path, run_name='__main__')\n"
)
_MAGIC = re.compile(r"^(\s*)([%!])", re.M)


def notebook_script(notebook: Path) -> Path:
    """The code cells of ``notebook`` as one script beside it (``<stem>.py``), in order, magic and
    shell lines (``%matplotlib``, ``!pip``) commented out."""
    data = json.loads(notebook.read_text(encoding="utf-8"))
    cells = [c["source"] if isinstance(c["source"], str) else "".join(c["source"])
             for c in data.get("cells", []) if c.get("cell_type") == "code"]
    script = notebook.with_suffix(".py")
    script.write_text("\n\n".join(_MAGIC.sub(r"\1# \2", cell).rstrip("\n") for cell in cells) + "\n", encoding="utf-8")
    return script


def training_env(paths: Iterable[Path] = ()) -> dict[str, str]:
    """The environment of a training run, but for what is read after start-up (the run's out
    folder, devices, port: see ``train``). ``paths`` go first on ``PYTHONPATH``."""
    env = _python_env([*paths, HERE])
    env.update(PL_TRAINER_ACCELERATOR=os.environ.get("DDPFIX_DIFF_ACCELERATOR", "cpu"), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONWARNINGS="ignore",
               PYTHONHASHSEED="0", MASTER_ADDR="127.0.0.1")
    for name in ("DDPFIX_DIFF_LOAD", "PYTHONUNBUFFERED", "LOCAL_RANK", "RANK", "WORLD_SIZE", "NODE_RANK", "PL_GLOBAL_SEED"):
        env.pop(name, None)
    # pytest names the running test in the environment: a value that changes per test would make
    # every run after the first differ from the warm interpreter's start (and run cold).
    for name in [name for name in env if name.startswith("PYTEST_")]:
        del env[name]
    return env


_warm_interpreter: Warm | None = None


def _warm() -> Warm | None:
    """The warm interpreter training runs are forked from (one per process, started on first use),
    unless ``DDPFIX_DIFF_WARM=0`` asks for a fresh interpreter per run."""
    global _warm_interpreter
    if os.environ.get("DDPFIX_DIFF_WARM", "1") == "0":
        return None
    if _warm_interpreter is None:
        _warm_interpreter = Warm(training_env())
    return _warm_interpreter


def train(script: Path, devices: int, out: Path, label: str, load: Path | None = None,
          timeout: float = TRAIN_TIMEOUT, interactive: bool = False, paths: Iterable[Path] = (),
          python: str | None = None) -> Run:
    """Run a case script (or a notebook's cells, see ``notebook_script``) on CPU with ``devices``
    processes; the probe writes to ``out``. ``interactive``: as in a notebook (``INTERACTIVE``).
    ``paths`` go first on ``PYTHONPATH`` (a case's stubs). Lightning's own environment defaults
    ``PL_TRAINER_DEVICES`` and ``PL_TRAINER_ACCELERATOR=cpu`` are set, so that a case may leave
    ``devices`` (and ``accelerator``) out of its Trainer call, as DDP006's and DDP008's safe fixes
    need to see; an argument the script writes wins over them. ``python``: another interpreter
    (Lightning 1.x), started cold."""
    out.mkdir(parents=True, exist_ok=False)
    if script.suffix == ".ipynb":
        script = notebook_script(script)
    env = training_env(paths)
    env.update(
        DDPFIX_DIFF_OUT=str(out), DDPFIX_DIFF_DEVICES=str(devices),
        PL_TRAINER_DEVICES=str(devices), MASTER_PORT=str(free_port()),
    )
    if load is not None:
        env["DDPFIX_DIFF_LOAD"] = str(load)
    other = python is not None and python != sys.executable
    argv = [python if other else sys.executable, *(["-c", INTERACTIVE] if interactive else []), str(script)]
    proc = run_group(argv, env, script.parent, timeout, warm=None if other else _warm())
    ranks: dict[int, dict[str, Any]] = {}
    for path in out.glob("rank*.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        ranks[int(data["rank"])] = data
    return Run(label, script, devices, proc, out, ranks)


# --- comparing ---------------------------------------------------------------------------------


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return a == b


def _flat(value: Any) -> list[float]:
    if isinstance(value, list):
        return [x for v in value for x in _flat(v)]
    return [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


def _show(value: Any, limit: int = 6) -> str:
    flat = _flat(value)
    if isinstance(value, list) and len(flat) > limit:
        return "[" + ", ".join(f"{x:.6g}" for x in flat[:limit]) + f", ... ({len(flat)} values)]"
    if isinstance(value, float):
        return f"{value:.8g}"
    return repr(value)


def _diff_mapping(what: str, a: dict[str, Any], b: dict[str, Any], shape_only: bool, key: str | None = None) -> list[str]:
    problems: list[str] = []
    if a.keys() != b.keys():
        only_a, only_b = sorted(a.keys() - b.keys()), sorted(b.keys() - a.keys())
        problems.append(f"{what}: names differ (only in the first: {only_a}, only in the second: {only_b})")
    for name in sorted(a.keys() & b.keys()):
        x, y = (a[name], b[name]) if key is None else (a[name][key], b[name][key])
        if shape_only:
            if key is not None and a[name]["shape"] != b[name]["shape"]:
                problems.append(f"{what} {name}: shape {a[name]['shape']} != {b[name]['shape']}")
            continue
        if not _close(x, y):
            problems.append(f"{what} {name}: {_show(x)} != {_show(y)}")
    return problems


def _diff_extra(a: dict[str, Any], b: dict[str, Any], shape_only: bool) -> list[str]:
    if not shape_only:
        return [] if _close(a, b) else [f"extra: {_show(a, 12)} != {_show(b, 12)}"]

    def sizes(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: sizes(v) for k, v in value.items()}
        return len(value) if isinstance(value, list) else type(value).__name__

    return [] if sizes(a) == sizes(b) else [f"extra (sizes): {sizes(a)} != {sizes(b)}"]


def compare(first: Run, second: Run, shape_only: bool = False) -> list[str]:
    """What differs between two runs: which ranks recorded, and per rank the weights, buffers, every
    metric, the epoch/step counters and the ``extra`` values. ``shape_only`` compares names, shapes
    and sizes, not values."""
    label = f"{first.label} vs {second.label} ({first.devices} process{'es' if first.devices > 1 else ''})"
    problems: list[str] = []
    if sorted(first.ranks) != sorted(second.ranks):
        problems.append(f"ranks recorded: {sorted(first.ranks)} != {sorted(second.ranks)}")
    for rank in sorted(set(first.ranks) & set(second.ranks)):
        a, b = first.ranks[rank], second.ranks[rank]
        found: list[str] = []
        found += _diff_mapping("weight", a["state"], b["state"], shape_only, key="values")
        found += _diff_mapping("buffer", a["buffers"], b["buffers"], shape_only, key="values")
        for metrics in ("callback_metrics", "logged_metrics", "progress_bar_metrics"):
            found += _diff_mapping(metrics, a.get(metrics, {}), b.get(metrics, {}), shape_only)
        if not shape_only:
            for counter in ("epochs", "global_step"):
                if a[counter] != b[counter]:
                    found.append(f"{counter}: {a[counter]} != {b[counter]}")
        found += _diff_extra(a["extra"], b["extra"], shape_only)
        problems += [f"rank {rank}: {p}" for p in found]
    return [f"{label}: {p}" for p in problems]


def ddp_invariants(run: Run) -> list[str]:
    """What every correct DDP run holds: all ranks finished, hold the same weights, and drew the
    same ``splits``."""
    problems: list[str] = []
    if not run.ok:
        return [f"did not finish: {run.describe()}"]
    ranks = [run.ranks[r] for r in sorted(run.ranks)]
    for other in ranks[1:]:
        for problem in _diff_mapping("weight", ranks[0]["state"], other["state"], False, key="values"):
            problems.append(f"{run.label}: rank 0 vs rank {other['rank']}: {problem}")
        splits = (ranks[0]["extra"].get("splits"), other["extra"].get("splits"))
        if splits[0] != splits[1]:
            problems.append(f"{run.label}: rank 0 and rank {other['rank']} drew different splits: {_show(splits[0], 12)} != {_show(splits[1], 12)}")
    return problems


def load_checks(run: Run, source: str) -> list[str]:
    problems = []
    for rank, data in sorted(run.ranks.items()):
        load = data.get("load")
        if not load or not load.get("ok"):
            error = (load or {}).get("error", "no load was attempted")
            problems.append(f"strict load of the {source}'s state into the {run.label} (rank {rank}) failed: {error}")
    return problems


# --- one case ----------------------------------------------------------------------------------


@dataclass
class Outcome:
    case: Case
    result: str  # "pass", "fail", NEEDS_UNSAFE
    problems: list[str]
    seconds: float
    notes: list[str] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    rewrites: list[Rewrite] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.result == "pass"

    def report(self) -> str:
        lines = [f"{self.case.id} [{self.case.expectation}]: {self.result} in {self.seconds:.1f} s"]
        lines += [f"  - {p}" for p in self.problems]
        lines += [f"  . {n}" for n in self.notes]
        return "\n".join(lines)


def _diff_text(rewrite: Rewrite) -> str:
    import difflib

    before = rewrite.before.decode("utf-8", "replace").splitlines(keepends=True)
    after = rewrite.after.decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(before, after, "original", "rewrite", n=1))


def check_case(case: Case, workdir: Path, log: Callable[[str], None] = lambda _: None) -> Outcome:
    """Check one case under ``workdir`` (a fresh, empty folder) and say how it went."""
    start = time.monotonic()
    outcome = Outcome(case, "pass", [], 0.0)
    try:
        _check(case, workdir, outcome, log)
    finally:
        outcome.seconds = time.monotonic() - start
    if outcome.problems and outcome.result == "pass":
        outcome.result = "fail"
    return outcome


def _check(case: Case, workdir: Path, outcome: Outcome, log: Callable[[str], None]) -> None:
    problems = outcome.problems
    code = rule_code(case.rule)
    default = rewrite(case.path, workdir / "rewrite", project=case.project)
    alone = rewrite(case.path, workdir / "rewrite-file", whole=False, project=case.project)
    outcome.rewrites += [default, alone]
    for run, how in ((default, "ddpfix --write . (the whole project)"), (alone, "ddpfix --write FILE")):
        if run.errored:
            problems.append(f"{how} failed (exit {run.proc.returncode}): {run.summary()}")
    if problems:
        return
    if case.expectation in ("unchanged", "unsafe"):
        for run, how in ((default, "the default --write of the project"), (alone, "the default --write of the file named alone")):
            if run.changed:
                problems.append(f"{how} changed the file ({', '.join(run.fixed_codes()) or 'no [fixed] line'}):\n{_diff_text(run)}")
        outcome.notes.append(f"findings: {', '.join(default.codes()) or 'none'}")
        if case.expectation == "unsafe":
            unsafe = rewrite(case.path, workdir / "rewrite-unsafe", unsafe=True, project=case.project)
            outcome.rewrites.append(unsafe)
            if unsafe.missing_flag:
                outcome.result = NEEDS_UNSAFE if not problems else "fail"
                outcome.notes.append("this ddpfix has no --unsafe-fixes: the unsafe fix could not be asked for")
            elif unsafe.errored:
                problems.append(f"ddpfix --write --unsafe-fixes failed (exit {unsafe.proc.returncode}): {unsafe.summary()}")
            elif not unsafe.changed:
                problems.append(f"--unsafe-fixes offered no fix: {unsafe.summary() or 'no findings'}")
            elif code not in unsafe.fixed_codes():
                problems.append(f"--unsafe-fixes changed the file, but not by {code}: {unsafe.fixed_codes()}")
        return
    # A partial view may hold fixes back, but what it writes must be what the runs below check.
    if alone.changed and alone.after != default.after:
        problems.append("ddpfix --write FILE rewrote the file otherwise than ddpfix --write . (only the latter is run):\n" + _diff_text(alone))
    elif not alone.changed and default.changed:
        outcome.notes.append("ddpfix --write FILE (a partial view) leaves it; the whole-project run fixes it")
    # safe
    if not default.changed:
        problems.append(f"the default --write of the project left the file as it was: {default.summary() or 'no findings'}")
        return
    if code not in default.fixed_codes():
        problems.append(f"the rewrite is not {code}'s ({case.rule}) doing: fixed {default.fixed_codes()}")
    outcome.notes.append("rewrite:\n" + _diff_text(default))
    rewritten = workdir / "rewrite" / case.path.name
    original = workdir / "original" / case.path.name
    case.place(case.path, original)
    reference = None
    if case.reference is not None:
        reference = workdir / "reference" / case.path.name
        case.place(case.reference, reference)
    elif case.reference_everywhere:
        problems.append(f"{'original=fails' if case.original_fails else 'reference=all'} without a <case>.reference{case.path.suffix}")
        return
    runs = workdir / "runs"
    paths = [case.stubs] if case.stubs is not None else []

    def go(script: Path, devices: int, label: str, interactive: bool | None = None, **kwargs) -> Run:
        # A notebook case runs as in a notebook, but for its original's yardstick run (a plain script).
        interactive = case.notebook if interactive is None else interactive
        run = train(script, devices, runs / f"{label}-{devices}", label, interactive=interactive, paths=paths,
                    python=case.python, **kwargs)
        outcome.runs.append(run)
        log(f"{case.id}: {label} on {devices}: {'ok' if run.ok else 'FAILED'} in {run.proc.seconds:.1f} s")
        return run

    def in_notebook(devices: int, rewrite_run: Run) -> None:
        """A notebook's original run as in a notebook: it computes what the rewrite does, or fails."""
        run = go(original, devices, "original-in-notebook", interactive=True, timeout=FAILING_TIMEOUT)
        setting = f"{devices} process{'es' if devices > 1 else ''}"
        if run.ok:
            problems.extend(compare(run, rewrite_run) + (ddp_invariants(run) if devices > 1 else []))
            outcome.notes.append(f"the original as a notebook ({setting}) runs and computes the same")
        else:
            outcome.notes.append(f"the original as a notebook ({setting}) fails: {last_error(run.proc)}")

    # One process. The rewrite first: the original (or, where it cannot run, the reference) then
    # loads its state (original <- rewrite).
    rewrite1 = go(rewritten, 1, "rewrite")
    if not rewrite1.ok:
        problems.append(f"the rewrite fails in one process: {rewrite1.describe()}")
        return
    if case.original_fails:
        reference1 = go(reference, 1, "reference", load=rewrite1.state)
        if not reference1.ok:
            problems.append(f"the reference fails in one process: {reference1.describe()}")
            return
        problems += load_checks(reference1, "rewrite")
        problems += compare(reference1, rewrite1)
        original1 = go(original, 1, "original", timeout=FAILING_TIMEOUT)
        if original1.ok:
            problems.append("the original runs in one process: the case says it cannot (original=fails)")
        else:
            outcome.notes.append(f"the original in one process fails: {last_error(original1.proc)}")
        yardstick1 = reference1
    else:
        original1 = go(original, 1, "original", load=rewrite1.state, interactive=False)
        if not original1.ok:
            problems.append(f"the original fails in one process (a case must be a correct program there): {original1.describe()}")
            return
        problems += load_checks(original1, "rewrite")
        if case.reference_everywhere:
            reference1 = go(reference, 1, "reference")
            if not reference1.ok:
                problems.append(f"the reference fails in one process: {reference1.describe()}")
                return
            problems += compare(reference1, rewrite1)
            problems += compare(original1, rewrite1, shape_only=True)
        else:
            problems += compare(original1, rewrite1)
        if case.notebook:
            in_notebook(1, rewrite1)
        yardstick1 = original1

    # Two processes, DDP. The rewrite loads the original's state (rewrite <- original), or the
    # reference's where the original cannot run.
    rewrite2 = go(rewritten, 2, "rewrite", load=yardstick1.state)
    invariants = ddp_invariants(rewrite2)
    problems += invariants
    if not rewrite2.ok:
        return
    problems += load_checks(rewrite2, yardstick1.label)
    if reference is None:
        original2 = go(original, 2, "original", interactive=False)
        if not original2.ok:
            problems.append(f"the original fails under DDP, and the case has no reference: {original2.describe()}")
            return
        problems += compare(original2, rewrite2)
        if case.notebook:
            in_notebook(2, rewrite2)
        return
    reference2 = go(reference, 2, "reference")
    if not reference2.ok:
        problems.append(f"the reference fails under DDP: {reference2.describe()}")
        return
    problems += ddp_invariants(reference2)
    problems += compare(reference2, rewrite2)
    if case.original_fails:
        return  # it failed in one process (checked above): under DDP each rank fails the same way
    # The case claims that the original fails under DDP: it must, or the reference hides nothing.
    original2 = go(original, 2, "original", timeout=FAILING_TIMEOUT)
    if original2.ok and not compare(reference2, original2) and not ddp_invariants(original2):
        problems.append("the original computes under DDP what the reference does: it does not fail, so the case needs no reference")
    else:
        how = "hangs" if original2.proc.hung else ("crashes" if not original2.ok else "differs from the reference")
        outcome.notes.append(f"the original under DDP {how}" + (
            f": {(ddp_invariants(original2) + compare(reference2, original2))[:3]}" if original2.ok else f": {last_error(original2.proc)}"))


def check_in_tempdir(case: Case, log: Callable[[str], None] = lambda _: None, keep: bool = False) -> Outcome:
    folder = Path(tempfile.mkdtemp(prefix=f"ddpfix-diff-{case.rule}-{case.name}-"))
    try:
        return check_case(case, folder, log)
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


# --- behaviour of an unsafe or refused fix (bench only) -----------------------------------------


def last_error(proc: Proc) -> str:
    """The last line of a failed run's stderr that names an error (a rank's traceback's end)."""
    if proc.hung:
        return f"hung (killed after {proc.seconds:.0f} s)"
    lines = [l.strip() for l in proc.stderr.splitlines() if re.search(r"(Error|Exception|Timeout)\b", l)]
    return (lines[-1] if lines else f"exit {proc.returncode}")[:240]


def behaviour(case: Case, workdir: Path, unsafe: bool = True, log: Callable[[str], None] = lambda _: None) -> tuple[str, list[str]]:
    """Run the original and the rewrite (``--unsafe-fixes`` if asked) in one process and under DDP
    and say how their behaviour compares: per setting ``same``, ``differs`` (both finish, with other
    results), ``rewrite fails``, ``original fails`` (the rewrite finishes) or ``both fail``. A
    notebook's both run as in a notebook. Returns (verdict, details)."""
    rewritten = rewrite(case.path, workdir / "rewrite", unsafe=unsafe, project=case.project)
    if rewritten.missing_flag:
        return NEEDS_UNSAFE, []
    if not rewritten.changed:
        return "no rewrite", []
    original = workdir / "original" / case.path.name
    case.place(case.path, original)
    script = workdir / "rewrite" / case.path.name
    details: list[str] = []
    verdicts: list[str] = []
    for devices in (1, 2):
        runs = []
        for label, path in (("original", original), ("rewrite", script)):
            timeout = FAILING_TIMEOUT if devices == 2 else TRAIN_TIMEOUT
            run = train(path, devices, workdir / "runs" / f"{label}-{devices}", label, timeout=timeout,
                        interactive=case.notebook, paths=[case.stubs] if case.stubs is not None else [],
                        python=case.python)
            log(f"{case.id}: {label} on {devices}: {'ok' if run.ok else 'FAILED'} in {run.proc.seconds:.1f} s")
            runs.append(run)
        first, second = runs
        setting = "1p" if devices == 1 else "ddp"
        for run in runs:
            if not run.ok:
                details.append(f"{setting} {run.label}: {last_error(run.proc)} (ranks recorded: {sorted(run.ranks)})")
        if first.ok and second.ok:
            found = compare(first, second) + (ddp_invariants(second) if devices == 2 else [])
            details += found
            verdicts.append(f"{setting} {'differs' if found else 'same'}")
        else:
            verdicts.append(f"{setting} " + ("both fail" if not (first.ok or second.ok) else
                                             "rewrite fails" if first.ok else "original fails"))
        for run in runs:  # metrics that are not numbers (NaN) on a finished run are worth a word
            for rank, data in sorted(run.ranks.items()):
                odd = {k: v for k, v in data["callback_metrics"].items() if isinstance(v, str)}
                if odd:
                    details.append(f"{setting} {run.label} rank {rank}: {odd}")
    return ", ".join(verdicts), details
