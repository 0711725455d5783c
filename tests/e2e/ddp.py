"""Running real Lightning DDP scripts (CPU, gloo) as subprocesses with a hard timeout.

Hangs are one of the bugs ddpfix fixes, and a hung DDP run ignores SIGTERM: each script starts in
its own process group, and on timeout that whole group (and nothing else) is killed.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "scripts"


@dataclass
class Run:
    returncode: int | None  # None: killed after the timeout (it hung)
    stdout: str
    stderr: str
    seconds: float

    @property
    def hung(self) -> bool:
        return self.returncode is None

    def results(self) -> dict[str, str]:
        """``RESULT name value`` lines the scripts print (rank 0 unless the line says otherwise)."""
        return dict(re.findall(r"^RESULT (\S+) (.+)$", self.stdout, re.M))


def whole_script_facts(path: Path):
    """Each script is a whole program: its facts are the whole project's (``ProjectFacts.whole``), as
    when ``ddpfix`` is run over a folder that holds just it."""
    from ddpfix.facts import ProjectFacts, file_facts

    return ProjectFacts.merge([file_facts(str(path), path.read_bytes())], whole=True)


def require_lightning() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("lightning")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_script(path: Path, timeout: float = 90, cwd: Path | None = None, interactive: bool = False) -> Run:
    """Run ``path``; ``interactive`` runs it as ``python -i`` with an empty stdin, which Lightning
    takes for a notebook kernel (its ``_IS_INTERACTIVE`` check), as Jupyter would be."""
    # A fresh rendezvous port per run: back-to-back runs must not meet each other's sockets.
    # stdout stays block-buffered on purpose: every rank writes to the same pipe, and an unbuffered
    # print() is two writes (text, then newline) that another rank's line can land between.
    env = dict(
        os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore",
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()),
    )
    env.pop("PYTHONUNBUFFERED", None)
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, *(["-i"] if interactive else []), str(path)], cwd=cwd or path.parent, env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = None
    return Run(code, out, err, time.monotonic() - start)
