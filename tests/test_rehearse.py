"""``ddpfix rehearse`` through the real executable, on real scripts run on 2 CPU ranks (gloo).

The corpus (tests/rehearse/scripts, see its README) holds scripts written for GPUs: each failing one
must be reproduced (exit 1) and named at the line marked ``# rehearse: here``; each clean one must
rehearse clean (exit 0: no false alarm). Then: ``--verify`` on a seed failure, what cannot be
rehearsed (exit 2, saying why), no process left behind after a hang or a Ctrl-C, and the injected
start-up code leaves what the script computes unchanged (the same weights as a plain CPU DDP run).
The corpus, the seed hang and ``--verify`` rehearse ahead of their tests, two at a time (``rehearsals``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ddpfix_executable, default_sigint

pytest.importorskip("lightning")
pytestmark = pytest.mark.e2e

SCRIPTS = Path(__file__).resolve().parent / "rehearse" / "scripts"
HEADER = re.compile(r"^# rehearse: (\w+)")
STALL = "6"  # seconds without progress that make a hang; the default (20) is tested once


def corpus():
    for script in sorted(SCRIPTS.glob("*.py")):
        text = script.read_text(encoding="utf-8")
        expect = HEADER.match(text).group(1)
        if expect == "limit":  # what a rehearsal cannot show (the README says why)
            continue
        here = [i + 1 for i, line in enumerate(text.splitlines()) if line.rstrip().endswith("# rehearse: here")]
        yield pytest.param(script, expect, here, id=script.stem)


def rehearse(*args: str, cwd: Path = SCRIPTS, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([ddpfix_executable(), "rehearse", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env=dict(os.environ, NO_COLOR="1"))


def _ours(folder: Path) -> list[int]:
    """Live processes started in ``folder`` (a test's own scratch folder: its script's ranks), by
    their working folder or command line: never another run's processes of the same script name."""
    found, folder = [], str(folder.resolve())
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue
            if state != "Z" and (cwd == folder or cwd.startswith(folder + os.sep) or folder in command):
                found.append(int(entry.name))
    return found


@dataclass
class Rehearsed:
    run: subprocess.CompletedProcess
    seconds: float
    folder: Path  # the run's own scratch folder, holding its script
    left: list[int]  # the folder's processes alive when the rehearsal returned


def _corpus_job(folder: Path, script: Path, expect, here) -> list[str]:
    """Each script alone in a scratch folder (scripts write checkpoints and reports where they run)."""
    (folder / script.name).write_bytes(script.read_bytes())
    return ["--json", "--stall", STALL, "--", sys.executable, script.name]


def _seed_hang_job(folder: Path) -> list[str]:
    (folder / "train.py").write_bytes((SCRIPTS / "hang_rank_gated_sync_log.py").read_bytes())
    return ["--", sys.executable, "train.py"]


def _verify_job(folder: Path, name: str, unsafe: bool, added: str) -> list[str]:
    (folder / "train.py").write_bytes((SCRIPTS / name).read_bytes())
    return ["--verify", *(["--unsafe-fixes"] if unsafe else []), "--stall", STALL, "--", sys.executable, "train.py"]


#: The tests whose rehearsals run ahead, two at a time, and how each prepares its folder.
POOLED = {
    "test_the_corpus_rehearses_as_its_header_says": _corpus_job,
    "test_a_seed_hang_is_named_at_its_line_within_a_minute_and_the_docs_example_is_its_output": _seed_hang_job,
    "test_verify_applies_the_fix_to_a_copy_and_rehearses_it_clean": _verify_job,
}
#: A rehearsal mostly waits (one rank imports torch while the next is not started yet; a hang is
#: watched for STALL seconds), so two at a time share the two cores of the CI machine with little
#: slowing of each: the module's rehearsals take about half the time. (Under that load gloo's
#: teardown once aborted a clean script's rank 0 after its script had ended; the rehearsal says
#: that as a note since, not a failure.) Each keeps its own folder,
#: and the checks that a rank outlived it look at that folder's processes only.
AT_ONCE = 2


def _rehearsed(folder: Path, args: list[str]) -> Rehearsed:
    started = time.monotonic()
    run = rehearse(*args, cwd=folder)
    return Rehearsed(run, time.monotonic() - started, folder, _ours(folder))


@pytest.fixture(scope="module")
def rehearsals(request, tmp_path_factory):
    """The rehearsals of the selected POOLED tests, started in the order the tests run, each asked
    for by its test's node id (a test selected alone runs its own rehearsal only)."""
    with ThreadPoolExecutor(AT_ONCE) as pool:
        runs = {}
        for item in request.session.items:
            prepare = POOLED.get(getattr(item, "originalname", ""))
            if prepare is None or item.module is not request.module:
                continue
            folder = tmp_path_factory.mktemp("rehearsal")
            args = prepare(folder, **item.callspec.params) if hasattr(item, "callspec") else prepare(folder)
            runs[item.nodeid] = pool.submit(_rehearsed, folder, args)
        yield runs


def result_of(request, rehearsals) -> Rehearsed:
    return rehearsals[request.node.nodeid].result()


@pytest.mark.parametrize("script, expect, here", list(corpus()))
def test_the_corpus_rehearses_as_its_header_says(script, expect, here, request, rehearsals):
    done = result_of(request, rehearsals)
    run = done.run
    report = json.loads(run.stdout)
    if expect == "clean":
        assert run.returncode == 0, run.stdout
        # Nothing said but, at most, gloo's abort in teardown under load (a note: see the test below).
        assert report["result"] == "clean"
        assert all(p["note"] and p["kind"] == "teardown" for p in report["problems"]), report["problems"]
        assert report["ranks"].keys() == {"0", "1"} and all(rank["exited"] for rank in report["ranks"].values())
        return
    assert run.returncode == 1, run.stdout + run.stderr
    assert report["result"] == "failed"
    named = {(p["path"], p["line"]) for p in report["problems"]}
    assert any((script.name, line) in named for line in here), (here, report["problems"])
    if expect == "hang":
        assert {p["kind"] for p in report["problems"]} & {"hang", "exception", "collective-order", "batches"}
    assert not done.left and not _ours(done.folder), "a rank outlived the rehearsal"
    assert done.seconds < 120


def test_a_seed_hang_is_named_at_its_line_within_a_minute_and_the_docs_example_is_its_output(request, rehearsals):
    """The gated synced log, with the default --stall: named at its line in under a minute, with
    the static rule that knows it and the mappings made; and docs/rehearse.md's console example is
    exactly this run's output (but the seconds)."""
    done = result_of(request, rehearsals)
    run, seconds = done.run, done.seconds
    assert run.returncode == 1
    line = next(i + 1 for i, text in enumerate((SCRIPTS / "hang_rank_gated_sync_log.py").read_text().splitlines())
                if text.endswith("# rehearse: here"))
    assert re.search(rf"^train.py:{line}: hang: ", run.stdout, re.M), run.stdout
    assert "DDP003" in run.stdout and "accelerator='gpu' -> 'cpu'" in run.stdout
    assert seconds < 60, seconds
    assert not done.left and not _ours(done.folder)
    page = (SCRIPTS.parent.parent.parent / "docs" / "rehearse.md").read_text(encoding="utf-8")
    shown = re.search(r"```console\n\$ ddpfix rehearse -- python train.py\n(.*?)```", page, re.S).group(1)
    seconds_out = re.compile(r"\d+\.\d s")
    printed = run.stdout.replace(f"-- {Path(sys.executable).name} train.py", "-- python train.py")
    assert seconds_out.sub("N s", shown) == seconds_out.sub("N s", printed), printed


#: The five seed failures, each with the fix that makes it clean: the script, whether the fix is an
#: unsafe one (--verify --unsafe-fixes), and what the shown diff must add.
SEEDS = [
    ("hang_rank_gated_sync_log.py", False, "rank_zero_only=True"),
    ("crash_cuda_generator.py", False, "torch.Generator()"),
    ("crash_monitored_metric_rank_zero.py", True, "sync_dist=True"),
    ("divergence_unseeded_random_split.py", True, "generator=torch.Generator().manual_seed("),
    ("crash_tensor_attribute_collective.py", True, "register_buffer("),
]


@pytest.mark.parametrize("name, unsafe, added", SEEDS, ids=[name[:-3] for name, _, _ in SEEDS])
def test_verify_applies_the_fix_to_a_copy_and_rehearses_it_clean(name, unsafe, added, request, rehearsals):
    """Each seed failure: reproduced, fixed in a scratch copy (its unsafe fix with --unsafe-fixes),
    rehearsed again clean, and the user's folder left as it was."""
    done = result_of(request, rehearsals)
    run, script = done.run, done.folder / "train.py"
    assert run.returncode == 0, run.stdout + run.stderr
    assert "+++ train.py (ddpfix's fixes)" in run.stdout
    shown = [line.strip() for line in run.stdout.splitlines()]
    assert any(line.startswith("+") and not line.startswith("+++") and added in line for line in shown), run.stdout
    assert "ddpfix-verify-" not in run.stdout  # places are named as the user's files
    assert "verified: the failure is gone after the fixes" in run.stdout
    assert script.read_bytes() == (SCRIPTS / name).read_bytes()  # the user's file is never touched
    assert sorted(p.name for p in done.folder.iterdir()) == ["train.py"]  # nor anything written beside it


@pytest.mark.parametrize("body, why", [
    ("import not_a_module_anywhere\n", "failed before it built a Trainer or Fabric at train.py:1"),
    ("print('no training here')\n", "built no Trainer or Fabric"),
    ("import torch\ntorch.cuda.get_device_properties(0)\n", "needs a GPU for something the rehearsal cannot map at train.py:2"),
], ids=["import-error", "no-trainer", "needs-a-gpu"])
def test_what_cannot_be_rehearsed_exits_2_and_says_why(tmp_path, body, why):
    (tmp_path / "train.py").write_text(body)
    run = rehearse("--", sys.executable, "train.py", cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert why in run.stdout


def test_no_script_or_a_missing_one_exits_2(tmp_path):
    for args, why in ((["--", sys.executable, "-c", "pass"], "names no Python script"),
                      (["--", sys.executable, "missing.py"], "no such script"), ([], "no command given")):
        run = rehearse(*args, cwd=tmp_path)
        assert run.returncode == 2 and why in run.stderr, (args, run.stderr)


@pytest.mark.parametrize("stop, status, said", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "stopped"),
                                                (signal.SIGHUP, 129, "stopped")], ids=["ctrl-c", "kill", "hang-up"])
def test_ctrl_c_or_a_kill_stops_every_process_it_started(tmp_path, stop, status, said):
    """Ctrl-C, ``kill`` (SIGTERM) or a closed terminal (SIGHUP) ends the rehearsal and every rank it
    started (they run in a session of their own: a SIGTERM's default action would have ended ddpfix
    alone and left them running), and removes its folder."""
    script = tmp_path / "interrupted_train.py"
    script.write_bytes((SCRIPTS / "hang_guarded_all_reduce.py").read_bytes())
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "interrupted_train.py"])
    try:
        proc = subprocess.Popen([ddpfix_executable(), "rehearse", "--stall", "120", "--", sys.executable, script.name],
                                cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=_default_stops, env={**os.environ, "TMPDIR": str(scratch)})
        ranks = lambda: [pid for pid in _ours(tmp_path) if pid not in (bystander.pid, proc.pid)]  # noqa: E731
        deadline = time.monotonic() + 90
        while len(ranks()) < 2 and time.monotonic() < deadline:  # both ranks are up
            time.sleep(0.2)
        assert len(ranks()) >= 2
        time.sleep(2)
        proc.send_signal(stop)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == status and said in err, (proc.returncode, err)
        assert not ranks()
        assert bystander.poll() is None  # a process it did not start is left alone
        assert not [p for p in scratch.iterdir() if p.name.startswith("ddpfix-rehearse-")], list(scratch.iterdir())
    finally:
        bystander.kill()
        bystander.wait()


def _default_stops() -> None:
    """Ctrl-C, SIGTERM and SIGHUP as at a terminal, however the test runner was started (``nohup``
    ignores SIGHUP, which children inherit, and the rehearsal then keeps ignoring it, as asked)."""
    default_sigint()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


SAME = '''
import os
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.layer(x), y)
        self.log("loss", loss, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.seed_everything(3)
    data = TensorDataset(torch.randn(64, 8), torch.randn(64, 1))
    if os.environ.get("PLAIN"):  # what the rehearsal runs, written out: CPU DDP, 2 batches, 2 epochs
        trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", limit_train_batches=2, max_epochs=2,
                            logger=False, enable_checkpointing=False, enable_progress_bar=False,
                            enable_model_summary=False)
    else:
        trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=50, logger=False,
                            enable_checkpointing=False, enable_model_summary=False)
    model = Model()
    trainer.fit(model, DataLoader(data, batch_size=8, shuffle=True))
    torch.save(model.state_dict(), os.environ["WEIGHTS"] + str(trainer.global_rank))
'''


def test_the_injected_code_leaves_the_results_unchanged(tmp_path):
    (tmp_path / "train.py").write_text(SAME)
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    plain = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                           env=dict(env, PLAIN="1", WEIGHTS=str(tmp_path / "plain")), start_new_session=True)
    assert plain.returncode == 0, plain.stderr[-2000:]
    run = subprocess.run([ddpfix_executable(), "rehearse", "--", sys.executable, "train.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300, env=dict(env, WEIGHTS=str(tmp_path / "rehearsed")))
    assert run.returncode == 0, run.stdout
    import torch

    for rank in (0, 1):
        plain_weights = torch.load(tmp_path / f"plain{rank}")
        rehearsed = torch.load(tmp_path / f"rehearsed{rank}")
        assert plain_weights.keys() == rehearsed.keys()
        assert all(torch.equal(plain_weights[k], rehearsed[k]) for k in plain_weights), rank
    assert not (tmp_path / "lightning_logs").exists()  # logs and checkpoints went to the scratch folder


ABORTS = '''
import ctypes
import os

import lightning as L
import torch


def main():
    fabric = L.Fabric(accelerator="cuda", devices=2, strategy="ddp")
    fabric.launch()
    total = fabric.all_reduce(torch.ones(1), reduce_op="sum")
    if os.environ.get("ABORT_DURING") and fabric.global_rank == 0:
        os.abort()
    fabric.print(total.item())


if __name__ == "__main__":
    libc = ctypes.CDLL(None)
    # A C exit handler (glibc's __cxa_atexit, what atexit() calls) runs after Python's teardown,
    # as gloo's and other native destructors do.
    libc.__cxa_atexit(ctypes.cast(libc.abort, ctypes.c_void_p), None, None)
    main()
'''


@pytest.mark.parametrize("during", [False, True], ids=["after-the-script", "during-the-script"])
def test_an_abort_after_the_script_ended_is_a_note_one_during_it_a_failure(tmp_path, during):
    """A rank killed by a signal once every rank has ended its script (gloo's teardown, when a peer
    has already gone, aborts so under load) is not the script's doing: a note, exit 0. The same
    signal while the script runs is a failure."""
    (tmp_path / "train.py").write_text(ABORTS)
    env = dict(os.environ, NO_COLOR="1", **({"ABORT_DURING": "1"} if during else {}))
    run = subprocess.run([ddpfix_executable(), "rehearse", "--json", "--stall", STALL, "--", sys.executable, "train.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    report = json.loads(run.stdout)
    teardown = [p for p in report["problems"] if p["kind"] == "teardown"]
    if during:
        assert run.returncode == 1 and report["result"] == "failed" and not teardown, run.stdout
    else:
        assert run.returncode == 0 and report["result"] == "clean", run.stdout
        assert [(p["note"], "SIGABRT" in p["message"]) for p in report["problems"]] == [(True, True)], report["problems"]
    assert not _ours(tmp_path)
