"""The warm interpreter (src/ddpfix/rehearse/warm.py): a script forked from it runs as ``python
SCRIPT`` would (argv, folder, environment, streams, ``__main__``, exit status, atexit, threads);
what is fixed at start-up is refused rather than faked; every run leads a process group that its
launched ranks join, so that killing the group ends them all; a caller that goes away takes its
run with it. The training-run equivalence (same weights, every rank) is in test_differential."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "differential"))
import harness  # noqa: E402

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux (fork, /proc)")

PROBE = r'''
import atexit, json, os, sys, threading, time
print(json.dumps({"name": __name__, "file": __file__, "argv": sys.argv, "cwd": os.getcwd(),
                  "path0": sys.path[0], "value": os.environ.get("LATE_VALUE"), "pl": os.environ.get("PL_X"),
                  "stdin": sys.stdin.read(), "executable_runs": os.path.exists(sys.executable)}))
atexit.register(lambda: print("atexit ran"))
threading.Thread(target=lambda: (time.sleep(0.2), print("thread joined"))).start()
sys.exit(int(sys.argv[1]))
'''


@pytest.fixture()
def server(tmp_path):
    env = dict(os.environ, PYTHONHASHSEED="0")
    server = harness.Warm(env, modules=("json",))
    yield server, env
    server.close()


def both(server, env, argv, cwd, **kwargs):
    """The same run, cold and warm."""
    cold = harness.run_group([sys.executable, *argv], dict(env, **kwargs), cwd, 60)
    warm = harness.run_group([sys.executable, *argv], dict(env, **kwargs), cwd, 60, warm=server)
    return cold, warm


def test_a_warm_run_is_the_run_python_gives(server, tmp_path):
    server, env = server
    script = tmp_path / "folder" / "probe.py"
    script.parent.mkdir()
    script.write_text(PROBE)
    cold, warm = both(server, env, [str(script), "3"], tmp_path, PL_X="late")
    assert server.server is not None and server.server.poll() is None  # it did start
    assert (cold.returncode, cold.stdout, cold.stderr) == (warm.returncode, warm.stdout, warm.stderr)
    assert warm.returncode == 3 and "atexit ran" in warm.stdout and "thread joined" in warm.stdout
    assert '"name": "__main__"' in warm.stdout and f'"path0": "{script.parent}"' in warm.stdout


def test_an_uncaught_exception_and_a_message_exit(server, tmp_path):
    server, env = server
    script = tmp_path / "boom.py"
    script.write_text("import sys\nif sys.argv[1] == 'raise':\n    raise ValueError('boom')\nsys.exit('a message')\n")
    for arg in ("raise", "exit"):
        cold, warm = both(server, env, [str(script), arg], tmp_path)
        assert (cold.returncode, cold.stdout, cold.stderr) == (warm.returncode, warm.stdout, warm.stderr) != (0, "", "")


def test_it_is_really_warm(server, tmp_path):
    """A module the server loaded is not loaded again: the run sees it already in sys.modules."""
    server, env = server
    script = tmp_path / "loaded.py"
    script.write_text("import sys\nprint('json' in sys.modules)\n")
    cold, warm = both(server, env, [str(script)], tmp_path)
    assert cold.stdout == "False\n" and warm.stdout == "True\n"


def test_what_is_read_at_start_up_is_refused_and_runs_cold(server, tmp_path):
    server, env = server
    script = tmp_path / "seed.py"
    script.write_text("import os, sys\nprint(os.environ['PYTHONHASHSEED'], 'json' in sys.modules)\n")
    run = harness.run_group([sys.executable, str(script)], dict(env, PYTHONHASHSEED="1"), tmp_path, 60, warm=server)
    assert run.stdout == "1 False\n"  # a fresh interpreter ran it
    assert "differs" in harness.warm.refusal({"PYTHONHASHSEED": "0"}, {"PYTHONHASHSEED": "1"}, set())
    assert harness.warm.refusal({"A": "1"}, {"A": "1", "MASTER_PORT": "5", "PL_TRAINER_DEVICES": "2"}, set()) is None
    shadow = tmp_path / "stubs"
    (shadow / "json").mkdir(parents=True)
    assert "already imported" in harness.warm.refusal({}, {"PYTHONPATH": str(shadow)}, {"json"})
    assert harness.warm.refusal({}, {"PYTHONPATH": str(shadow)}, {"torch"}) is None
    assert "drops" in harness.warm.refusal({"PYTHONPATH": "/a"}, {"PYTHONPATH": "/b"}, set())


LAUNCHER = r'''
import os, subprocess, sys, time
if len(sys.argv) > 1:  # the launched rank
    print("rank", os.getpgid(0) == int(sys.argv[1]), flush=True)
    time.sleep(600)
child = subprocess.Popen([sys.executable, os.path.abspath(__file__), str(os.getpgid(0))])
open(os.environ["PID_FILE"], "w").write(str(child.pid))
time.sleep(600)
'''


def test_a_launched_rank_joins_the_group_and_dies_with_it(server, tmp_path):
    """Lightning starts the other ranks with ``sys.executable SCRIPT``: in a warm run that is the
    proxy, which has the server fork the rank into the caller's group; the run's timeout kills the
    whole group, the forked rank included."""
    server, env = server
    script = tmp_path / "launcher.py"
    script.write_text(LAUNCHER)
    pid_file = tmp_path / "pid"
    run = harness.run_group([sys.executable, str(script)], dict(env, PID_FILE=str(pid_file)), tmp_path, 3, warm=server)
    assert run.hung and "rank True" in run.stdout
    proxy = int(pid_file.read_text())
    assert not Path(f"/proc/{proxy}").exists() or "Z" in Path(f"/proc/{proxy}/stat").read_text().split(")")[1][:3]
    assert not any(_in_group(pid, proxy) for pid in _pids())  # nothing of the run is left
    assert server.server.poll() is None  # and the server lives on


def _pids():
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def _in_group(pid: int, pgid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z" and int(fields[2]) == pgid


def test_a_caller_that_goes_away_takes_its_run_with_it(server, tmp_path):
    server, env = server
    assert server._serve()
    script = tmp_path / "sleep.py"
    script.write_text("import time\ntime.sleep(600)\n")
    conn, lines, answer = harness.warm.request(server.socket, [str(script)], env, str(tmp_path), [0, 1, 2])
    pid = answer["pid"]
    assert Path(f"/proc/{pid}").exists()
    conn.close()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists()  # killed and reaped


def test_closing_the_server_ends_its_runs(tmp_path):
    server = harness.Warm(dict(os.environ), modules=())
    assert server._serve()
    script = tmp_path / "sleep.py"
    script.write_text("import time\ntime.sleep(600)\n")
    conn, lines, answer = harness.warm.request(server.socket, [str(script)], dict(os.environ), str(tmp_path), [0, 1, 2])
    server.close()
    assert server.server.returncode is not None
    deadline = time.monotonic() + 10
    while _alive(answer["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(answer["pid"])
    conn.close()


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


OWNER = """
import sys, time
sys.path.insert(0, sys.argv[1])
import harness
server = harness.Warm(dict(__import__('os').environ), modules=())
assert server._serve()
print(server.server.pid, flush=True)
time.sleep(600)
"""


def test_a_server_whose_owner_was_killed_ends():
    """A killed test run cannot close its server (no atexit): the server sees its parent gone and
    ends, with its runs, instead of living on."""
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(Path(harness.__file__).parent)], stdout=subprocess.PIPE, text=True)
    try:
        server_pid = int(owner.stdout.readline())
        assert _alive(server_pid)
        owner.kill()
        owner.wait()
        deadline = time.monotonic() + 10
        while _alive(server_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(server_pid)
    finally:
        owner.kill()
