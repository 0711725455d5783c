"""A warm interpreter: one process imports torch and Lightning once, then forks a copy of itself for
each script it is asked to run, as ``python SCRIPT ARGS`` would run it (Lightning's import is about
4 of the 5 to 8 seconds a tiny training run takes on CPU).

Plain Python with no ddpfix import: it runs under the interpreter that holds torch (the user's, or
a test venv's), started by path (``python warm.py serve SOCKET MODULE...``).

What makes a forked copy the interpreter ``python SCRIPT`` would start:

- The script runs as ``__main__`` from its file, with ``sys.argv``, ``sys.path[0]`` (its folder),
  the working folder, the environment and the three standard streams of the request; its exit status
  is the one ``python`` gives (``SystemExit``'s code, 1 for an uncaught exception), after the
  non-daemon threads and the ``atexit`` functions ran.
- Only what is read after start-up may differ from the server's environment (``LATE_NAMES``,
  ``LATE_PREFIXES``: the launcher's rank variables, Lightning's ``PL_*`` defaults). Anything else
  (``PYTHONHASHSEED``, ``OMP_NUM_THREADS``, ``PYTHONWARNINGS``, a variable torch reads at import) is
  fixed at start-up, so a request that differs is refused and the caller runs a cold interpreter.
  ``PYTHONPATH`` may add folders in front, unless one holds a module the server has already loaded.
- Each run leads its own process group in the server's session, or joins the group it names: a rank
  that Lightning's launcher starts through ``sys.executable`` (the proxy, see ``proxy``) joins its
  parent rank's group, so that killing the run's group by id ends every rank, as for cold runs.
- A run's leader stays unreaped (a zombie holding its pid, the group id) until its caller says
  ``reap``, so that the caller can kill what is left of the group without hitting a reused id.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys

LATE_NAMES = frozenset({
    "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK", "RANK", "WORLD_SIZE", "NODE_RANK", "LOCAL_WORLD_SIZE",
    "GROUP_RANK", "PYTHONPATH", "PWD", "OLDPWD", "_",
    # Set by Trainer(deterministic=True) in the launching rank, so inherited by the others; read by
    # cuBLAS when a handle is made and by torch's determinism check when it runs, never at import.
    "CUBLAS_WORKSPACE_CONFIG",
})
LATE_PREFIXES = ("PL_", "DDPFIX_")
STREAMS = 3  # stdin, stdout, stderr


# --- the wire: one JSON object per line; a request carries the run's three streams -------------


def _send(conn: socket.socket, message: dict, fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode() + b"\n"
    if fds:
        socket.send_fds(conn, [data], fds)
    else:
        conn.sendall(data)


class _Lines:
    """Reads newline-ended JSON messages from a stream socket (and the fds sent with the first)."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn, self.buffer, self.fds = conn, b"", []

    def read(self, with_fds: bool = False) -> dict | None:
        while b"\n" not in self.buffer:
            if with_fds and not self.fds:
                data, fds, _, _ = socket.recv_fds(self.conn, 1 << 16, STREAMS)
                self.fds.extend(fds)
            else:
                data = self.conn.recv(1 << 16)
            if not data:
                return None
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)


# --- the server ------------------------------------------------------------------------------


def refusal(start_env: dict[str, str], env: dict[str, str], loaded: set[str],
            set_by_imports: dict[str, str] | None = None) -> str | None:
    """Why a run with ``env`` cannot be forked from a server started with ``start_env`` (whose
    imports then set ``set_by_imports``), or None. A variable the imports set may come either way:
    a rank launched from a warm run inherits it."""
    set_by_imports = set_by_imports or {}
    for name in sorted(set(start_env) | set(env)):
        if name in LATE_NAMES or name.startswith(LATE_PREFIXES):
            continue
        if name in set_by_imports and env.get(name) == set_by_imports[name]:
            continue
        if start_env.get(name) != env.get(name):
            return f"{name} differs from the warm interpreter's (read at start-up)"
    added = _added_paths(start_env.get("PYTHONPATH", ""), env.get("PYTHONPATH", ""))
    if added is None:
        return "PYTHONPATH drops a folder the warm interpreter has"
    for folder in added:
        for name in loaded:
            if os.path.exists(os.path.join(folder, name + ".py")) or os.path.isdir(os.path.join(folder, name)):
                return f"{folder} holds {name}, which the warm interpreter has already imported"
    return None


def _added_paths(start: str, now: str) -> list[str] | None:
    """The folders ``now`` puts in front of ``start`` (None: it is not ``start`` with a prefix)."""
    before = [p for p in start.split(os.pathsep) if p]
    after = [p for p in now.split(os.pathsep) if p]
    if after[len(after) - len(before):] != before or len(after) < len(before):
        return None
    return after[:len(after) - len(before)]


def serve(path: str, preload: list[str], proxy_path: str | None) -> None:
    start_env = dict(os.environ)
    for name in preload:
        __import__(name)
    # What the imports set in the environment (torch sets PYTORCH_NVML_BASED_CUDA_CHECK): a run
    # gets it on top of its own environment, as if its own import had set it.
    set_by_imports = {k: v for k, v in os.environ.items() if start_env.get(k) != v}
    start_path = list(sys.path)
    loaded = {name.partition(".")[0] for name in sys.modules} - set(sys.builtin_module_names)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    runs: dict[int, tuple[socket.socket, bool]] = {}  # pid -> (its caller, exit reported)
    readers: dict[socket.socket, _Lines] = {}

    def end(signum, frame):  # the server's end ends every run it started
        for pid in runs:
            _kill(pid)
        os._exit(0)

    signal.signal(signal.SIGTERM, end)
    signal.signal(signal.SIGINT, end)
    parent = os.getppid()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        if os.getppid() != parent:  # whoever started it is gone (killed): so are its runs, and it
            end(None, None)
        ready = select.select([listener, *readers], [], [], 0.02)[0]
        for conn in ready:
            if conn is listener:
                accepted, _ = listener.accept()
                readers[accepted] = _Lines(accepted)
                continue
            lines = readers[conn]
            pid = next((p for p, (c, _) in runs.items() if c is conn), None)
            try:
                message = lines.read(with_fds=pid is None)
            except (OSError, ValueError):
                message = None
            if pid is None and message is not None and "argv" in message:
                why = refusal(start_env, message["env"], loaded, set_by_imports)
                if why is None and len(lines.fds) != STREAMS:
                    why = "the request did not carry its three streams"
                if why is not None:
                    sys.stderr.write(f"refused {message['argv'][:1]}: {why}\n")  # the server's log says why a run went cold
                    sys.stderr.flush()
                    _send(conn, {"refused": why})
                    _close_fds(lines.fds)
                    readers.pop(conn).conn.close()
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                child = os.fork()
                if child == 0:
                    _child(message, lines.fds, start_env, set_by_imports, start_path, proxy_path, [listener, *readers])
                try:  # both sides set the group, so that it is set before the caller hears the pid
                    os.setpgid(child, message.get("pgid") or child)
                except OSError:
                    pass
                _close_fds(lines.fds)
                runs[child] = (conn, False)
                _send(conn, {"pid": child})
                continue
            # A caller that goes away before its run ended takes the run with it (as killing
            # ``python`` would); one that says ``reap`` (or goes away) after it ended lets it go.
            readers.pop(conn)
            conn.close()
            if pid is not None:
                _kill(pid)
                os.waitpid(pid, 0)
                del runs[pid]
        for pid, (conn, reported) in list(runs.items()):
            if reported:
                continue
            status = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            if status is not None:
                code = status.si_status if status.si_code == os.CLD_EXITED else -status.si_status
                runs[pid] = (conn, True)
                try:
                    _send(conn, {"status": code})
                except OSError:
                    pass


def _kill(pid: int) -> None:
    """Kill a run: the whole group it leads (its launched ranks), or itself where it joined one."""
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def _close_fds(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _child(message: dict, fds: list[int], start_env: dict, set_by_imports: dict, start_path: list[str],
           proxy_path: str | None, sockets: list[socket.socket]) -> None:
    code = 1
    try:
        for sock in sockets:
            sock.close()
        for signum in (signal.SIGTERM, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.setpgid(0, message.get("pgid") or 0)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        _close_fds(fds)
        os.chdir(message["cwd"])
        os.environ.clear()
        os.environ.update(message["env"])
        os.environ.update(set_by_imports)
        added = _added_paths(start_env.get("PYTHONPATH", ""), message["env"].get("PYTHONPATH", "")) or []
        script = message["argv"][0]
        sys.path[:] = [os.path.dirname(os.path.abspath(script)), *added, *start_path[1:]]
        sys.argv = list(message["argv"])
        if proxy_path:
            sys.executable = proxy_path
        code = _run_main(script)
    finally:
        os._exit(code)


def _run_main(script: str) -> int:
    """Run ``script`` as ``python script`` runs its ``__main__``; the exit status it gives."""
    import atexit
    import threading
    import types

    main = types.ModuleType("__main__")
    main.__file__ = script
    main.__cached__ = None
    main.__spec__ = None
    sys.modules["__main__"] = main
    try:
        with open(script, "rb") as handle:
            code = compile(handle.read(), script, "exec")
        exec(code, main.__dict__)
        status = 0
    except SystemExit as stop:
        status = _exit_status(stop.code)
    except BaseException as error:
        # The traceback starts at the script, as ``python``'s does (this frame is not the user's).
        error.__traceback__ = error.__traceback__.tb_next
        sys.excepthook(type(error), error, error.__traceback__)
        status = 1
    try:
        threading._shutdown()  # as the interpreter does at exit: wait for non-daemon threads
    except Exception:
        pass
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    return status


def _exit_status(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


# --- callers ---------------------------------------------------------------------------------


def request(path: str, argv: list[str], env: dict[str, str], cwd: str, streams: list[int],
            pgid: int | None = None) -> tuple[socket.socket, _Lines, dict]:
    """Ask the server at ``path`` to run ``argv`` (``[SCRIPT, ARGS...]``); its first answer:
    ``{"pid": N}`` or ``{"refused": WHY}``. The socket then brings ``{"status": CODE}``."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    _send(conn, {"argv": argv, "env": env, "cwd": cwd, "pgid": pgid}, streams)
    lines = _Lines(conn)
    answer = lines.read() or {"refused": "the warm interpreter went away"}
    return conn, lines, answer


def proxy(path: str, real_python: str) -> None:
    """Stands in for ``sys.executable`` in a warm run: ``python SCRIPT.py ARGS`` (how Lightning's
    launcher starts the other ranks) is forked from the server into the caller's process group;
    anything else, or a refusal, runs the real interpreter."""
    argv = sys.argv[1:]
    if not argv or argv[0].startswith("-") or not argv[0].endswith(".py"):
        os.execv(real_python, [real_python, *argv])
    try:
        conn, lines, answer = request(path, argv, dict(os.environ), os.getcwd(), list(range(STREAMS)), os.getpgid(0))
    except OSError:
        answer = {"refused": "no warm interpreter"}
    if "pid" not in answer:
        os.execv(real_python, [real_python, *argv])
    pid = answer["pid"]

    def forward(signum, frame):
        try:
            os.kill(pid, signum)
        except OSError:
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    message = lines.read() or {"status": 1}
    code = message["status"]
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


def write_proxy(folder: str, socket_path: str, real_python: str) -> str:
    """An executable that runs ``proxy``: what ``sys.executable`` names in a warm run."""
    target = os.path.join(folder, "python")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(f"#!{real_python} -S\n"
                     f"import sys\nsys.path.insert(0, {here!r})\n"
                     f"import warm\nwarm.proxy({socket_path!r}, {real_python!r})\n")
    os.chmod(target, 0o755)
    return target


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "serve":
        folder = os.path.dirname(sys.argv[2])
        serve(sys.argv[2], sys.argv[3:], write_proxy(folder, sys.argv[2], sys.executable))
    else:
        sys.exit("usage: warm.py serve SOCKET [MODULE...]")
