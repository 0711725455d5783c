"""DDP011 for real: an unguarded ddp_spawn script fails; after the rewrite it trains."""

from __future__ import annotations

import pytest

from ddpfix.sources import fix_source
from ddpfix.rules.spawn_without_main_guard import SpawnWithoutMainGuard

from .ddp import SCRIPTS, require_lightning, run_script, whole_script_facts

pytestmark = pytest.mark.e2e


def test_unguarded_spawn_fails_and_the_rewrite_trains(tmp_path):
    require_lightning()
    original = SCRIPTS / "spawn_unguarded.py"
    facts = whole_script_facts(original)
    # The module-level `TensorDataset(torch.randn(...))` is not on DDP011's allowlist of what only the
    # parent needs (a module-level draw may matter to a child seeded otherwise), so the fix is unsafe
    # here, and a default run leaves the file; this run applies it on purpose, and proves it trains.
    default = fix_source(str(original), original.read_bytes(), [SpawnWithoutMainGuard], facts)
    assert not default.changed and [f.applicability for f in default.findings] == ["unsafe"]
    result = fix_source(str(original), original.read_bytes(), [SpawnWithoutMainGuard], facts,
                        options={"unsafe_fixes": True})
    assert result.changed
    rewritten = tmp_path / "spawn_guarded.py"
    rewritten.write_bytes(result.fixed)
    assert b'if __name__ == "__main__":\n    main()\n' in result.fixed

    before = run_script(original, timeout=90)
    assert before.hung or before.returncode != 0
    assert "Launching multiple processes with the 'spawn' start method" in before.stderr, before.stderr[-3000:]
    after = run_script(rewritten, timeout=90)
    assert after.returncode == 0, after.stderr[-3000:]
    assert after.results()["finished"] == "True"
