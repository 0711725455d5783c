"""The rule pages under ``docs/rules/``, made from the rules' docstrings.

``python -m ddpfix.docs [FOLDER]`` (re)writes them; ``tests/test_docs.py`` fails when one is stale,
so the page an editor links to (``Rule.url()``) says what ``ddpfix --explain`` says.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ddpfix.rules import all_rules
from ddpfix.rules.base import Rule


def rule_page(rule: type[Rule]) -> str:
    fix = ("yes: safe where the analysis proves it, else unsafe (applied only with --unsafe-fixes); "
           "see *Fix safety*") if rule.fixable else "no (a diagnostic only)"
    preview = ("\n\n**Preview rule**: below its precision target on real code (bench/real), so not in the default "
               f"selection; run it with `--select {rule.code}` or `--preview`.") if rule.preview else ""
    return f"# {rule.code} `{rule.name}`\n\n{rule.summary}{preview}\n\nAutomatic fix: {fix}.\n\n{rule.page()}\n"


def pages() -> dict[str, str]:
    """File name -> content, one page per rule plus an index."""
    out = {f"{rule.code}.md": rule_page(rule) for rule in all_rules()}
    index = ["# ddpfix rules", ""]
    index += [f"- [{rule.code} `{rule.name}`]({rule.code}.md): {'(preview) ' if rule.preview else ''}{rule.summary}"
              for rule in all_rules()]
    out["README.md"] = "\n".join(index) + "\n"
    return out


def main(argv: list[str]) -> None:
    if argv and argv[0].startswith("-"):  # ``--help`` is no folder to write into
        print("usage: python -m ddpfix.docs [FOLDER]   (writes the rule pages; default: docs/rules)")
        raise SystemExit(0 if argv[0] in ("-h", "--help") else 2)
    folder = Path(argv[0] if argv else "docs/rules")
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in pages().items():
        (folder / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
