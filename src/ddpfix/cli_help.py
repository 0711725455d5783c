"""The end of ``ddpfix --help``: examples, the review keys, the language server and the exit codes.

click re-wraps an epilog's paragraphs unless a ``\\b`` line comes first, so each block here keeps
its lines as written; every line fits ``HELP_WIDTH`` columns (a test keeps it so).
"""

from __future__ import annotations

#: The widest the help is laid out, on a terminal at least that wide.
HELP_WIDTH = 100

EPILOG = """\
\b
Examples:
  ddpfix                                 preview the fixes under '.'; ask on a terminal
  ddpfix --diff src/ > fix.patch         a patch for git apply; nothing written
  ddpfix --write src/                    apply the safe fixes ([*]) without asking
  ddpfix --write --unsafe-fixes src/     ... and the unsafe ones ([~]), once reviewed
  ddpfix -i src/                         review each fix on its own (keys below)
  ddpfix --check --output-format github  in CI: annotations; exit 1 if any is left
  ddpfix --statistics                    the findings counted per rule
  ddpfix --add-noqa src/                 silence each finding left with '# noqa: CODE'
  ddpfix - --stdin-filename t.py < t.py  an editor's buffer in, the fixed buffer out

\b
Keys of -i (--interactive):
  y  apply this fix     n  skip it     q  stop: skip the rest, keep the fixes accepted so far
  a  apply this one and every safe fix left in this file (an unsafe one is still asked)
  ?  explain the keys

\b
Language server:
  ddpfix lsp                             serve editors over stdio (nothing more to install)

\b
Rehearse (the one command that runs your script, on CPU ranks; docs/rehearse.md):
  ddpfix rehearse -- python train.py     hangs, crashes and ranks that diverge, at your line
  ddpfix rehearse --verify -- python train.py   ... and ddpfix's fixes, rehearsed on a copy

\b
Exit codes:
  0    nothing left to fix (or --exit-zero)
  1    something left: a fix not applied, an unsafe fix left out, a finding without a fix
  2    a usage error, or a file that could not be read, parsed, fixed or written
  130  interrupted (Ctrl-C): files already written are complete; the others are untouched
"""
