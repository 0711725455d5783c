"""Proof by running: every differential case (tests/differential/cases/<rule>/<case>.py) rewritten by
the real CLI, then — for ``safe`` cases — original and rewrite trained on CPU in one process and
under ``devices=2, strategy="ddp"`` (gloo), comparing weights, buffers, every rank's metrics and
splits, and loading each one's state into the other with ``strict=True``. ``unchanged`` and
``unsafe`` cases only run ddpfix (no torch needed). See tests/differential/harness.py.

``python bench/differential.py`` runs the same cases from the command line, with a table of times.
The cases are checked ahead of their tests, two at a time (``outcomes``).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "differential"))
import harness  # noqa: E402

pytestmark = pytest.mark.e2e

CASES = harness.discover()


def test_the_cases_are_there():
    """The suite is never empty by accident (a bad header raises in discover; a missing folder would
    leave nothing to parametrize over)."""
    by_rule: dict[str, dict[str, int]] = {}
    for case in CASES:
        by_rule.setdefault(case.rule, {}).setdefault(case.expectation, 0)
        by_rule[case.rule][case.expectation] += 1
    # DDP012's fixes are never safe (the split, and every draw after it, change; a seed set in the
    # shell through PL_GLOBAL_SEED cannot be ruled out): its cases are all unsafe or unchanged.
    # Every safe fix shape of these rules runs at least once (see each rule's Fix safety). DDP008's
    # fixes are never safe (the model's other uses and transformers' loading are not read: review
    # helper-41): its cases are all unsafe or unchanged. DDP015: notebooks.
    safe_cases = {"unseeded-random-split": 0, "epoch-log-sync": 18, "rank-gated-log": 4,
                  "init-module-scope": 4, "tensor-attribute": 2, "uncleared-step-outputs": 3,
                  "spawn-without-main-guard": 2, "cuda-generator": 5, "hardcoded-device": 5,
                  "device-map-under-ddp": 0, "notebook-strategy": 4}
    for rule, safe in safe_cases.items():
        counts = by_rule.get(rule, {})
        assert sum(counts.values()) >= 8, (rule, counts)
        assert counts.get("safe", 0) >= safe, (rule, counts)
        assert counts.get("unchanged", 0) + counts.get("unsafe", 0) >= 4, (rule, counts)


def test_every_rule_folder_is_a_rule():
    fixtures = harness.ROOT / "fixtures"
    for case in CASES:
        assert (fixtures / case.rule).is_dir(), f"{case.id}: no rule named {case.rule!r} (see fixtures/)"
        assert harness.rule_code(case.rule) != "?", case.id


def test_references_belong_to_a_case():
    for reference in harness.CASES.glob("*/*.reference.py"):
        case = reference.with_name(reference.name.replace(".reference.py", ".py"))
        assert case.exists(), f"{reference} has no case beside it"
        expectation, _ = harness.parse_header(case.read_text(encoding="utf-8"))
        assert expectation == "safe", f"{reference}: only safe cases are compared with a reference"


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"  # a killed child not yet reaped by init is a zombie


SPAWN = (
    "import subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
    "open(sys.argv[1], 'w').write(str(child.pid))\n"
    "{leader}\n"
)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc")
@pytest.mark.parametrize("leader, hung", [("time.sleep(600)", True), ("sys.exit(3)", False)], ids=["hang", "straggler"])
def test_run_group_kills_its_group_and_nothing_else(tmp_path, leader, hung):
    """A hung run is killed at the timeout with its children; a run whose leader exits while a child
    lives on (a DDP rank waiting for a dead peer) has that child killed too; a process outside the
    group (this one's own child) survives."""
    bystander = __import__("subprocess").Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        script, pid_file = tmp_path / "spawn.py", tmp_path / "pid"
        script.write_text(SPAWN.format(leader=leader))
        proc = harness.run_group([sys.executable, str(script), str(pid_file)], dict(__import__("os").environ), tmp_path, timeout=4)
        assert proc.hung is hung
        assert proc.returncode == (None if hung else 3)
        assert proc.stragglers is not hung
        assert proc.seconds < 30
        assert not _alive(int(pid_file.read_text()))
        assert _alive(bystander.pid)
    finally:
        bystander.kill()
        bystander.wait()


def test_a_session_that_ends_during_the_lightning1_build_ends_the_build(tmp_path):
    """The build runs in a thread while the tests go on; a session that ends first (``-x``) must not
    leave pip running: the step's process group is killed at exit, and only it."""
    marker = tmp_path / "pid"
    step = [sys.executable, "-c", f"import os, time; open({str(marker)!r}, 'w').write(str(os.getpid())); time.sleep(600)"]
    session = (f"import sys, threading, time\nsys.path.insert(0, {str(Path(harness.__file__).parent)!r})\n"
               "import harness\n"
               f"threading.Thread(target=harness._build_step, args=({step!r}, 900), daemon=True).start()\n"
               f"while not __import__('os').path.exists({str(marker)!r}): time.sleep(0.05)\n")
    subprocess.run([sys.executable, "-c", session], timeout=60, check=True)
    pid = int(marker.read_text())
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, 9)
    raise AssertionError(f"the build step {pid} outlived the session")


@pytest.mark.parametrize("case_id, reference", [("epoch-log-sync/plateau_scheduler", False),
                                               ("rank-gated-log/guarded_sync_dist_log", True)])
def test_a_warm_run_computes_what_a_cold_one_does(case_id, reference, tmp_path, monkeypatch):
    """The runs are forked from a warm interpreter (harness.Warm, src/ddpfix/rehearse/warm.py): on
    one process and under DDP (the second rank through the proxy ``sys.executable``) a case computes
    exactly what fresh interpreters compute: the same weights, buffers, metrics and splits on every
    rank, and the runs really were warm (forked, nothing refused)."""
    case = next(c for c in CASES if c.id == case_id)
    source = case.path.with_name(case.path.stem + ".reference.py") if reference else case.path  # (its original hangs)
    script = tmp_path / case.path.name
    script.write_text(harness.case_text(source), encoding="utf-8")
    server = harness._warm()
    assert server is not None
    for devices in (1, 2):
        forked = server.forked
        warm = harness.train(script, devices, tmp_path / f"warm{devices}", "warm")
        assert server.forked == forked + 1 and not server.refusals()
        monkeypatch.setenv("DDPFIX_DIFF_WARM", "0")
        cold = harness.train(script, devices, tmp_path / f"cold{devices}", "cold")
        monkeypatch.delenv("DDPFIX_DIFF_WARM")
        assert warm.proc.returncode == cold.proc.returncode == 0, (warm.proc.stderr[-2000:], cold.proc.stderr[-2000:])
        assert sorted(warm.ranks) == sorted(cold.ranks) == list(range(devices))
        assert harness.compare(warm, cold) == []


def test_headers():
    assert harness.parse_header("# differential: safe\n") == ("safe", {})
    assert harness.parse_header("# differential: safe; reference=all\nx = 1\n") == ("safe", {"reference": "all"})
    assert harness.parse_header("# differential: unsafe") == ("unsafe", {})
    assert harness.parse_header("# differential: safe; original=fails; stubs=stubs") == (
        "safe", {"original": "fails", "stubs": "stubs"})
    assert harness.parse_header("# differential: safe; project=parts") == ("safe", {"project": "parts"})
    for bad in ("", "# differential: maybe", "x = 1\n# differential: safe", "# differential: safe; reference=none",
                "# differential: unsafe; original=fails", "# differential: safe; original=works", "# differential: safe; original=runs",
                "# differential: safe; stubs=../elsewhere", "# differential: safe; project=../elsewhere"):
        with pytest.raises(ValueError):
            harness.parse_header(bad)


def test_original_fails_needs_a_reference(tmp_path):
    """``original=fails`` (an original that cannot run even in one process, as a ddp_spawn script
    without a main guard) makes the reference stand in for it: without a reference the case fails
    before anything is trained."""
    folder = tmp_path / "cases" / "spawn-without-main-guard"
    folder.mkdir(parents=True)
    (folder / "spawned.py").write_text(
        "# differential: safe; original=fails\n"
        "import lightning as L\n\n\n"
        "class Model(L.LightningModule):\n"
        "    pass\n\n\n"
        "trainer = L.Trainer(accelerator=\"cpu\", devices=1, strategy=\"ddp_spawn\", logger=False)\n"
        "trainer.fit(Model())\n",
        encoding="utf-8",
    )
    [case] = harness.discover(root=tmp_path / "cases")
    assert case.original_fails and case.reference_everywhere and case.reference is None
    outcome = harness.check_case(case, tmp_path / "work")
    assert not outcome.passed
    assert any("original=fails without a <case>.reference.py" in p for p in outcome.problems), outcome.report()
    assert not outcome.runs


def test_rule_bugs_name_cases():
    ids = {case.id for case in CASES}
    assert set(RULE_BUGS) <= ids


def test_original_fails_and_stubs_cases_have_what_they_name():
    for case in CASES:
        if case.original_fails:
            assert case.reference is not None, f"{case.id}: original=fails needs a reference"
            assert case.reference_everywhere
        for option in ("stubs", "project"):
            if option in case.options:
                assert (case.path.parent / case.options[option]).is_dir(), f"{case.id}: no folder {case.options[option]!r}"


NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# differential: safe\n", "\n", "Why."]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["%matplotlib inline\n", "!pip install x\n", "import sys\n", "x = 1"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "if x:\n    %time y = 2\n    y = 2\nprint(x, hasattr(sys, 'ps1'))\n"},
    ],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
}


def test_notebook_cases_are_found_with_their_header(tmp_path):
    import json

    (tmp_path / "some-rule").mkdir()
    (tmp_path / "some-rule" / "nb.ipynb").write_text(json.dumps(NOTEBOOK))
    (tmp_path / "some-rule" / "nb.reference.ipynb").write_text(json.dumps(NOTEBOOK))
    (case,) = harness.discover(root=tmp_path)
    assert (case.id, case.expectation, case.notebook) == ("some-rule/nb", "safe", True)
    assert case.reference == tmp_path / "some-rule" / "nb.reference.ipynb"


@pytest.mark.parametrize("interactive", [False, True], ids=["script", "notebook"])
def test_notebook_cells_run_as_one_script(tmp_path, interactive):
    """The code cells joined in order, magics commented out; run as in a notebook, the script sees
    ``sys.ps1`` (what Lightning reads to refuse "ddp" in a kernel), and its exit status is its own."""
    import json

    notebook = tmp_path / "nb.ipynb"
    notebook.write_text(json.dumps(NOTEBOOK))
    script = harness.notebook_script(notebook)
    assert script.read_text() == (
        "# %matplotlib inline\n# !pip install x\nimport sys\nx = 1\n\n"
        "if x:\n    # %time y = 2\n    y = 2\nprint(x, hasattr(sys, 'ps1'))\n")
    argv = [sys.executable, *(["-c", harness.INTERACTIVE] if interactive else []), str(script)]
    proc = harness.run_group(argv, dict(__import__("os").environ), tmp_path, timeout=60)
    assert (proc.returncode, proc.stdout) == (0, f"1 {interactive}\n")
    script.write_text("raise SystemExit(3)\n")
    assert harness.run_group(argv, dict(__import__("os").environ), tmp_path, timeout=60).returncode == 3


@pytest.mark.skipif(importlib.util.find_spec("lightning") is None, reason="needs lightning")
def test_lightning_sees_a_notebook(tmp_path):
    script = tmp_path / "check.py"
    script.write_text("from lightning.fabric.utilities.imports import _IS_INTERACTIVE\nprint(_IS_INTERACTIVE)\n")
    env = dict(__import__("os").environ)
    for interactive in (False, True):
        argv = [sys.executable, *(["-c", harness.INTERACTIVE] if interactive else []), str(script)]
        proc = harness.run_group(argv, env, tmp_path, timeout=120)
        assert proc.stdout.strip() == str(interactive), proc.stderr


def test_compare_sees_a_changed_metric_weight_and_split():
    def run(metric, weight, split, label):
        rank = {"rank": 0, "state": {"w": {"shape": [1], "values": [weight]}}, "buffers": {},
                "callback_metrics": {"val_loss": metric}, "logged_metrics": {"val_loss": metric},
                "epochs": 1, "global_step": 4, "extra": {"splits": {"val": split}}}
        return harness.Run(label, Path("x.py"), 1, harness.Proc(0, "", "", 0.0), Path("."), {0: rank})

    base = run(0.5, 1.0, [1, 2], "a")
    assert harness.compare(base, run(0.5, 1.0 + 1e-9, [1, 2], "b")) == []
    assert len(harness.compare(base, run(0.6, 1.0, [1, 2], "b"))) == 2  # callback and logged metric
    assert len(harness.compare(base, run(0.5, 1.1, [1, 2], "b"))) == 1
    assert len(harness.compare(base, run(0.5, 1.0, [2, 1], "b"))) == 1
    assert harness.compare(base, run(0.9, 2.0, [3, 4], "b"), shape_only=True) == []
    assert len(harness.compare(base, run(0.5, 1.0, [3], "b"), shape_only=True)) == 1


# Cases that show a bug of the rule itself (a fix labelled safe that must not be): kept, so that
# `bench/differential.py` shows them, and skipped here until the rule is fixed (src/ is not this
# suite's to change). Each reason says how to see it.
RULE_BUGS: dict[str, str] = {
    # e.g. "hardcoded-device/teacher_devices_in_kwargs": "DDP006 bug: <what>; see: python bench/differential.py --case ...",
    # (that one was: devices hidden in Trainer(**settings) counted as left out; fixed on main in 3542935).
}


#: Cases checked ahead of their tests, two at a time (as ``bench/differential.py --jobs 2``): a
#: case's runs mostly wait (a rank that imports while the other is not started, gloo's rendezvous,
#: a hang's timeout), so two share the CI machine's two cores with little slowing of each.
AT_ONCE = 2


def _runnable(case: harness.Case) -> bool:
    """What ``test_case`` would check rather than skip (it says why it skips)."""
    if case.id in RULE_BUGS:
        return False
    if case.trains:
        if any(importlib.util.find_spec(module) is None for module in ("torch", "lightning")):
            return False
        if case.options.get("lightning") == "1" and harness.ensure_lightning1(print) is None:
            return False
    return True


@pytest.fixture(scope="module")
def outcomes(request, tmp_path_factory):
    """The outcomes of the selected ``test_case`` items, checked ahead in the order the tests run,
    each in its own folder; a test selected alone checks its own case only."""
    cases = [(item.nodeid, item.callspec.params["case"]) for item in request.session.items
             if getattr(item, "originalname", "") == "test_case" and item.module is request.module]
    cases = [(nodeid, case) for nodeid, case in cases if _runnable(case)]
    if any(case.trains for _, case in cases):
        harness._warm()  # started once here, not by two threads at once
    with ThreadPoolExecutor(AT_ONCE) as pool:
        yield {nodeid: pool.submit(harness.check_case, case, tmp_path_factory.mktemp("case")) for nodeid, case in cases}


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_case(case: harness.Case, request, outcomes):
    if case.id in RULE_BUGS:
        pytest.skip(RULE_BUGS[case.id])
    if case.trains:
        for module in ("torch", "lightning"):
            if importlib.util.find_spec(module) is None:
                pytest.skip(f"{module} is not installed (pip install torch==2.13.0, then -e '.[e2e]')")
        if case.options.get("lightning") == "1" and harness.ensure_lightning1(print) is None:
            if os.environ.get("DDPFIX_DIFF_REQUIRE_LIGHTNING1"):
                pytest.fail(f"{case.id} needs Lightning 1.x and {harness.LIGHTNING1_VENV.name} could not be made")
            pytest.skip(f"needs Lightning 1.x: {harness.LIGHTNING1_VENV.name} could not be made (no package index?), "
                        "nor is $DDPFIX_DIFF_LIGHTNING1 set")
    outcome = outcomes[request.node.nodeid].result()
    if outcome.result == harness.NEEDS_UNSAFE:
        pytest.fail(f"{case.id}: {harness.NEEDS_UNSAFE} (this ddpfix has no such flag)\n{outcome.report()}", pytrace=False)
    if not outcome.passed:
        pytest.fail(outcome.report(), pytrace=False)
