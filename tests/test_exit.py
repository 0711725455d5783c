"""How the ``ddpfix`` program ends: its exit skips the interpreter's teardown only where nothing waits
for it, and never loses output (``cli.command_line``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

LOGS = "".join(f"        self.log('val_{i}', loss)\n" for i in range(400))
MODULE = ("import lightning as L\n\n\nclass Model(L.LightningModule):\n"
          "    def validation_step(self, batch, batch_idx):\n        loss = self.layer(batch).sum()\n" + LOGS)


def run(code: str, folder) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, timeout=120)


def test_every_line_of_a_long_report_arrives_through_a_pipe_with_its_status(tmp_path):
    (tmp_path / "model.py").write_text(MODULE)
    done = subprocess.run([sys.executable, "-m", "ddpfix", "--check", "--no-color", "model.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    assert done.returncode == 1, done.stderr
    assert len(lines) == 400 and all(" DDP004 " in line for line in lines), done.stdout[-500:]
    assert lines[-1].startswith("model.py:406:") and "400 more fixes" in done.stderr


@pytest.mark.parametrize("waiting", [
    "import atexit\natexit.register(lambda: print('atexit ran', flush=True))",
    "import weakref\nclass Held: pass\nheld = Held()\nweakref.finalize(held, print, 'finalizer ran')",
])
def test_what_waits_for_the_exit_still_runs(tmp_path, waiting):
    # (a library loaded by the run, or a caller's own hook: the normal exit runs them)
    (tmp_path / "model.py").write_text(MODULE)
    code = (waiting + "\nimport sys\nfrom ddpfix.cli import command_line\n"
            "sys.argv = ['ddpfix', '--check', '--no-color', 'model.py']\ncommand_line()\n")
    done = run(code, tmp_path)
    assert done.returncode == 1 and len(done.stdout.splitlines()) == 401, done.stderr
    assert done.stdout.splitlines()[-1] in ("atexit ran", "finalizer ran")


def test_main_called_in_a_process_exits_as_any_program_does(tmp_path):
    (tmp_path / "model.py").write_text(MODULE)
    code = ("import sys\nfrom ddpfix.cli import main\nsys.argv = ['ddpfix', '--check', 'model.py']\n"
            "try:\n    main()\nexcept SystemExit as done:\n    print('after main', done.code)\n")
    done = run(code, tmp_path)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "after main 1", done.stderr


@pytest.mark.parametrize("closed", [">&-", "2>&-"])
def test_a_closed_output_stream_keeps_the_status(tmp_path, closed):
    # Python then has no sys.stdout (or sys.stderr): a clean file still exits 0 (review helper-54, 2;
    # --quiet: a summary written to a closed stderr fails, as it always did)
    (tmp_path / "clean.py").write_text("x = 1\n")
    done = subprocess.run(["bash", "-c", f"'{sys.executable}' -m ddpfix --quiet --check clean.py {closed}"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


def test_a_profiler_around_the_program_still_writes_its_report(tmp_path):
    (tmp_path / "model.py").write_text(MODULE)
    done = subprocess.run([sys.executable, "-m", "cProfile", "-o", "run.prof", "-m", "ddpfix", "--check", "model.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (tmp_path / "run.prof").stat().st_size > 0, done.stderr
