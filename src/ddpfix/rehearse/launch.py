"""Run the user's command under the rehearsal's start-up code, in its own process group, with a
watchdog: when no rank makes progress (no event recorded, no CPU time used) for ``stall`` seconds,
or the whole run passes ``timeout``, every rank's Python stack is dumped (``SIGUSR1``, registered
by the start-up code with ``faulthandler``) and the group is killed. A hung DDP rank ignores
SIGTERM, so the group gets SIGKILL; only the group this module started is ever signalled, and the
leader stays unreaped while it is, so that its id (the group's) cannot have been reused.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

INJECT = Path(__file__).resolve().parent / "inject"

# Cluster launchers' variables: with them Lightning would take the job's layout from the cluster
# (SLURM's task count, torchelastic's ranks) instead of starting the rehearsal's CPU ranks.
CLUSTER_PREFIXES = ("SLURM_", "TORCHELASTIC_", "OMPI_", "PMI_", "PMIX_", "LSB_", "KUBEFLOW_", "GROUP_", "ROLE_")
RANK_NAMES = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT",
              "CUDA_VISIBLE_DEVICES", "PL_TRAINER_DEVICES", "PL_TRAINER_ACCELERATOR", "PL_TRAINER_STRATEGY",
              "PL_TRAINER_NUM_NODES")


@dataclass
class Outcome:
    returncode: int | None  # None: stopped by the watchdog
    seconds: float
    stopped: str = ""  # "stall" or "timeout" when the watchdog stopped it
    output: str = ""
    stacks: dict[int, str] = field(default_factory=dict)  # pid -> faulthandler dump
    removed_env: list[str] = field(default_factory=list)


def environment(out: Path, root: Path, devices: int, batches: int, epochs: int, base: dict[str, str],
                shown_from: Path | None = None) -> tuple[dict[str, str], list[str]]:
    """The run's environment, and the variables taken out of it (the cluster's, a rank's)."""
    env = dict(base)
    removed = sorted(k for k in env if k.startswith(CLUSTER_PREFIXES) or k in RANK_NAMES)
    for name in removed:
        del env[name]
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(INJECT), base.get("PYTHONPATH", "")) if p)
    env.update(DDPFIX_REHEARSE_OUT=str(out), DDPFIX_REHEARSE_ROOT=str(root), DDPFIX_REHEARSE_DEVICES=str(devices),
               DDPFIX_REHEARSE_BATCHES=str(batches), DDPFIX_REHEARSE_EPOCHS=str(epochs), CUDA_VISIBLE_DEVICES="",
               DDPFIX_REHEARSE_CWD=str(shown_from or Path.cwd()))
    env.setdefault("OMP_NUM_THREADS", "1")  # N ranks on a laptop's cores: no oversubscription
    return env, [name for name in removed if name != "CUDA_VISIBLE_DEVICES"]


#: The signals that end a rehearsal (Ctrl-C, ``kill``, a closed terminal): each raises
#: ``KeyboardInterrupt`` in it (``signals_raise``), so that every process it started is killed on the
#: way out; by default a SIGTERM or SIGHUP would end ddpfix alone and leave the script's ranks
#: running in their own session.
STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def signals_raise():
    """While it lasts, SIGTERM and SIGHUP raise ``KeyboardInterrupt`` as SIGINT does, once: the
    signal's number is put in the list it gives, and later ones are ignored while the rehearsal
    kills what it started and cleans up. The handlers before it are put back after."""
    stopped: list[int] = []

    def stop(signum, frame):
        if stopped:
            return
        stopped.append(signum)
        raise KeyboardInterrupt

    previous = {}
    for number in STOPPING[1:]:
        if signal.getsignal(number) == signal.SIG_IGN:
            continue  # (``nohup ddpfix rehearse ...``: a hang-up is to be ignored, as asked)
        try:
            previous[number] = signal.signal(number, stop)
        except ValueError:  # not the main thread: the caller's own handlers stand
            break
    try:
        yield stopped
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def run(argv: list[str], cwd: Path, env: dict[str, str], out: Path, stall: float, timeout: float) -> Outcome:
    start = time.monotonic()
    log_path = out / "output.txt"
    # A Ctrl-C between the fork and ``proc`` being known would leave the started group unkilled:
    # it is held until the try below, whose finally kills the group (a handler, not a signal mask:
    # the script must not inherit a blocked SIGINT; exec resets handlers).
    held: list[int] = []
    previous = {number: signal.signal(number, lambda signum, frame: held.append(signum)) for number in STOPPING}
    try:
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    stopped = ""
    stacks: dict[int, str] = {}
    try:
        if held:  # sent again, now to the handler it was held from (``signals_raise``'s, or Ctrl-C's)
            os.kill(os.getpid(), held[0])
            raise KeyboardInterrupt
        last_progress, last_mark = start, None
        while True:
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                break
            now = time.monotonic()
            mark = _progress_mark(out, proc.pid)
            if mark != last_mark:
                last_mark, last_progress = mark, now
            if now - start > timeout or now - last_progress > stall:
                stopped = "timeout" if now - start > timeout else "stall"
                stacks = _dump_stacks(out, proc.pid)
                break
            time.sleep(0.2)
        if not stopped:
            # The leader is done; a rank still running is waiting on it, or finishing its writes.
            grace = time.monotonic() + min(stall, 10.0)
            while _members(proc.pid) and time.monotonic() < grace:
                time.sleep(0.1)
            if _members(proc.pid):
                stopped = "stall"
                stacks = _dump_stacks(out, proc.pid)
    finally:
        _kill_group(proc.pid)  # also on Ctrl-C: nothing the rehearsal started outlives it
        returncode = proc.wait()
    output = log_path.read_text(encoding="utf-8", errors="replace")
    return Outcome(None if stopped else returncode, time.monotonic() - start, stopped, output, stacks)


def _progress_mark(out: Path, pgid: int) -> tuple:
    """What changes while a rank makes progress: its events, and its CPU time (a rank reading a
    dataset writes no event for a while; one waiting in a collective uses no CPU)."""
    sizes = sum(p.stat().st_size for p in out.glob("events-*.jsonl"))
    cpu = sum(_cpu_ticks(pid) for pid in _members(pgid, include_leader=True))
    return sizes, cpu // 50  # half a second of CPU time (100 ticks a second)


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return 0


def _members(pgid: int, include_leader: bool = False) -> list[int]:
    """The live processes of group ``pgid`` (Linux /proc), but the leader unless asked."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or (int(entry.name) == pgid and not include_leader):
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(entry.name))
    return found


def _dump_stacks(out: Path, pgid: int) -> dict[int, str]:
    """Every rank's Python stack, from the faulthandler the start-up code registered: only the
    processes that wrote a stack file (ours), and only those still in the group."""
    members = set(_members(pgid, include_leader=True))
    asked = []
    for path in out.glob("stack-*.txt"):
        pid = int(path.stem.split("-")[1])
        if pid in members:
            try:
                os.kill(pid, signal.SIGUSR1)
                asked.append(pid)
            except OSError:
                pass
    time.sleep(1.0)
    return {pid: (out / f"stack-{pid}.txt").read_text(encoding="utf-8", errors="replace") for pid in asked}


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + 10.0
    while _members(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)
