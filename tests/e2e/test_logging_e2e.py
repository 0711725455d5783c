"""DDP003/DDP004 for real, under Trainer(accelerator="cpu", devices=2, strategy="ddp") with gloo.

Each script is rewritten by the engine with every rule (as the CLI would), the rewrite is compared
with the minimal hand-made fix beside it, then the original and the rewrite both run.
"""

from __future__ import annotations

import pytest

from ddpfix.sources import fix_source
from ddpfix.rules import all_rules

from .ddp import SCRIPTS, require_lightning, run_script, whole_script_facts

pytestmark = pytest.mark.e2e


def rewrite(name: str, tmp_path):
    source = SCRIPTS / f"{name}.py"
    result = fix_source(str(source), source.read_bytes(), all_rules(), whole_script_facts(source))
    assert result.changed and not result.problems
    assert result.fixed == (SCRIPTS / f"{name}.fixed_by_hand.py").read_bytes()
    rewritten = tmp_path / f"{name}.py"
    rewritten.write_bytes(result.fixed)
    return source, rewritten


def test_gated_sync_dist_log_hangs_and_the_rewrite_finishes(tmp_path):
    require_lightning()
    original, rewritten = rewrite("gated_sync_log", tmp_path)
    before = run_script(original, timeout=60)
    # Rank 0 waits in the all-reduce nobody else joins; the script's 20 s DDP timeout (or our kill) ends it.
    assert before.hung or before.returncode != 0
    after = run_script(rewritten, timeout=60)
    assert after.returncode == 0, after.stderr[-3000:]
    assert after.results()["rank0_finished"] == "True" and after.results()["rank1_finished"] == "True"


def test_gated_monitored_metric_fails_on_rank_1_and_the_rewrite_logs_it_everywhere(tmp_path):
    require_lightning()
    original, rewritten = rewrite("gated_monitored_log", tmp_path)
    before = run_script(original, timeout=60)
    assert before.hung or before.returncode != 0
    # Usually rank 1 raises EarlyStopping's error; when its next collective meets rank 0's pending
    # log sync first, gloo reports the mismatch instead. Either way the run dies.
    assert any(
        sign in before.stderr
        for sign in ("Early stopping conditioned on metric `val_loss` which is not available", "gloo", "Connection closed by peer")
    ), before.stderr[-3000:]
    after = run_script(rewritten, timeout=60)
    assert after.returncode == 0, after.stderr[-3000:]
    results = after.results()
    assert results["rank0_has_val_loss"] == "True" and results["rank1_has_val_loss"] == "True"


def test_epoch_metric_becomes_the_cross_rank_mean(tmp_path):
    require_lightning()
    original, rewritten = rewrite("epoch_metric_per_rank", tmp_path)
    before = run_script(original, timeout=60)
    assert before.returncode == 0, before.stderr[-3000:]
    expected = float(before.results()["expected_mean"])
    assert float(before.results()["logged"]) != pytest.approx(expected)  # rank 0's shard only
    after = run_script(rewritten, timeout=60)
    assert after.returncode == 0, after.stderr[-3000:]
    assert float(after.results()["logged"]) == pytest.approx(expected)
