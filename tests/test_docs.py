"""The rule pages in docs/rules/ are the rules' docstrings, and every rule links to its page."""

from __future__ import annotations

from ddpfix.docs import pages
from ddpfix.rules import all_rules

from conftest import ROOT


def test_rule_pages_are_up_to_date():
    folder = ROOT / "docs" / "rules"
    expected = pages()
    stale = [name for name, text in expected.items() if not (folder / name).exists() or (folder / name).read_text() != text]
    assert not stale, f"stale rule pages {stale}: run python -m ddpfix.docs"
    extra = sorted(p.name for p in folder.iterdir() if p.name not in expected)
    assert not extra, f"pages of no rule: {extra}"


def test_every_rule_url_names_its_page():
    for rule in all_rules():
        assert rule.url().endswith(f"/docs/rules/{rule.code}.md")
        assert (ROOT / "docs" / "rules" / f"{rule.code}.md").exists()


def test_every_fixable_rule_page_says_which_fixes_are_safe():
    """design.md: a rule page says, per fix shape, whether its fix is safe or unsafe, and why."""
    for rule in all_rules():
        if rule.fixable:
            page = rule.page()
            assert "## Fix safety" in page, f"{rule.code}'s page has no Fix safety section"
            section = page.split("## Fix safety", 1)[1].split("\n## ", 1)[0].lower()
            assert "safe" in section and "unsafe" in section, f"{rule.code}: Fix safety names no safe/unsafe shapes"
