"""DDP001 for real: the seed-pattern script and its rewrite train identically under DDP (CPU, gloo).

On the CPU the default-device bug itself cannot show (the init device is the CPU), but the rewrite
must not change what the script computes.
"""

from __future__ import annotations

import shutil

import pytest

from ddpfix.sources import fix_source
from ddpfix.rules.init_module_scope import InitModuleScope

from .ddp import SCRIPTS, require_lightning, run_script, whole_script_facts

pytestmark = pytest.mark.e2e


def test_rewritten_seed_pattern_trains_the_same(tmp_path):
    require_lightning()
    original = tmp_path / "original.py"
    shutil.copy(SCRIPTS / "init_module_seed.py", original)
    facts = whole_script_facts(original)
    # Moving trainer.fit out of the block is unsafe (the hooks fit runs would no longer build their
    # tensors with the block's device and dtype): a default run leaves it; this run applies it on
    # purpose, and proves that on this script (precision 32, CPU) it trains the same.
    default = fix_source(str(original), original.read_bytes(), [InitModuleScope], facts)
    assert not default.changed and [f.applicability for f in default.findings] == ["unsafe"]
    result = fix_source(str(original), original.read_bytes(), [InitModuleScope], facts, options={"unsafe_fixes": True})
    assert result.changed and result.findings[0].fixed
    rewritten = tmp_path / "rewritten.py"
    rewritten.write_bytes(result.fixed)
    assert b"    dm = RandomData()\n    trainer.fit(" in result.fixed  # out of the block

    before = run_script(original)
    after = run_script(rewritten)
    assert before.returncode == 0, before.stderr[-3000:]
    assert after.returncode == 0, after.stderr[-3000:]
    assert "weight_sum" in before.results()
    assert after.results() == before.results()
