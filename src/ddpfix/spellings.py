"""Ruff's spellings, for people who arrive from Ruff: what each means here.

``ddpfix check [PATH...] [--fix] ...`` is ``ddpfix --check`` (findings only), or ``--write`` with
``--fix``; ``--fix`` anywhere is ``--write``; ``--fix-only`` writes the fixes and exits 0 whatever is
left; ``ddpfix rule DDPnnn`` is ``--explain DDPnnn`` (``rule --all``: ``--list-rules``); ``ddpfix
server`` is the language server (``lsp``); ``ddpfix version`` is ``--version``. A word of Ruff's that
names nothing here (``format``, ``clean``, ...) gets one line saying so, not "no such file", unless a
file or folder of that name exists (``./format`` always names the path).

As with ``lsp``, the command word must come first: ``ddpfix src/ check`` checks a path named check.
"""

from __future__ import annotations

import os

# Ruff commands ddpfix does not have, and what to use instead.
NOT_HERE = {
    "format": "ddpfix fixes DDP pitfalls; it does not format code (use `ruff format` or `black`). "
              "To apply ddpfix's fixes: ddpfix check --fix PATH",
    "clean": "ddpfix keeps no cache, so there is nothing to clean",
    "config": "ddpfix's settings are listed by `ddpfix --show-settings PATH` (docs/precommit-and-config.md)",
    "analyze": "ddpfix has no analyze command; `ddpfix --check PATH` lists the findings",
    "linter": "ddpfix has one linter: `ddpfix --list-rules` lists its rules",
}
# What a mode flag already says: with one of them, ``check`` adds no --check.
MODES = {"--write", "--diff", "--check", "-i", "--interactive", "--add-noqa", "--statistics", "--show-settings",
         "--show-files", "--list-rules", "--explain"}


class NotHere(Exception):
    """A Ruff command ddpfix does not have: the message says what to do instead."""


def translate(argv: list[str]) -> list[str]:
    """``argv`` (without the program name) with Ruff's spellings turned into ddpfix's."""
    if not argv:
        return argv
    first, rest = argv[0], argv[1:]
    if first == "server":
        return ["lsp", *rest]
    if first == "version" and not os.path.exists(first):
        return ["--version"]
    if first == "rule" and not os.path.exists(first):
        if rest[:1] == ["--all"]:
            return ["--list-rules", *rest[1:]]
        return ["--explain", *rest] if rest else ["--list-rules"]
    if first in NOT_HERE and not os.path.exists(first):
        raise NotHere(f"ddpfix has no `{first}` command: {NOT_HERE[first]}.")
    if first == "check" and not os.path.exists(first):
        argv = _flags(rest)
        if not MODES & set(argv):
            argv = ["--check", *argv]
        return argv
    return _flags(argv)


def _flags(argv: list[str]) -> list[str]:
    out = []
    for index, arg in enumerate(argv):
        if arg == "--":  # what follows is paths
            out += argv[index:]
            break
        if arg == "--fix":
            out.append("--write")
        elif arg == "--fix-only":
            out += ["--write", "--exit-zero"]
        elif arg == "--no-fix":
            continue
        else:
            out.append(arg)
    return out
