"""Preview rules (below their precision target on real code) leave the default selection, as
Ruff's: an exact code or name still selects one; ``--preview`` / ``preview = true`` adds them back."""

from __future__ import annotations

import pytest

from ddpfix.config import Config
from ddpfix.rules import all_rules, select_rules
from ddpfix.settings import Flags, Settings


@pytest.fixture
def one_preview(monkeypatch):
    rule = next(r for r in all_rules() if r.code == "DDP014")
    monkeypatch.setattr(rule, "preview", True)
    return rule


def codes(rules) -> list[str]:
    return [rule.code for rule in rules]


def test_a_preview_rule_needs_its_code_its_name_or_preview(one_preview):
    assert "DDP014" not in codes(select_rules([], []))
    assert "DDP014" not in codes(select_rules(["ALL"], []))
    assert "DDP014" not in codes(select_rules(["DDP01"], []))
    assert codes(select_rules(["DDP014"], [])) == ["DDP014"]
    assert codes(select_rules([one_preview.name], [])) == ["DDP014"]
    assert "DDP014" in codes(select_rules([], [], ["DDP014"]))
    assert "DDP014" in codes(select_rules([], [], preview=True))
    assert "DDP014" not in codes(select_rules([], ["DDP014"], preview=True))
    assert len(select_rules([], [], preview=True)) == len(all_rules())


def test_the_table_and_the_flag_turn_preview_on_and_the_flag_wins(one_preview):
    assert "DDP014" not in codes(Settings(Config(), Flags()).rules)
    assert "DDP014" in codes(Settings(Config(preview=True), Flags()).rules)
    assert "DDP014" not in codes(Settings(Config(preview=True), Flags(preview=False)).rules)
    assert "DDP014" in codes(Settings(Config(), Flags(preview=True, ignore=("DDP001",))).rules)
    assert "preview = true" in Settings(Config(), Flags(preview=True)).describe()


def test_preview_in_the_table_must_be_a_boolean(tmp_path, run_cli):
    (tmp_path / "pyproject.toml").write_text('[tool.ddpfix]\npreview = "yes"\n')
    (tmp_path / "a.py").write_text("x = 1\n")
    proc = run_cli("--check", "a.py", cwd=tmp_path)
    assert proc.returncode == 2 and b"preview must be true or false" in proc.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.ddpfix]\npreview = true\n")
    proc = run_cli("--check", "--show-settings", "a.py", cwd=tmp_path)
    assert proc.returncode == 0 and b"preview = true" in proc.stdout
