"""Files named on the command line, and stdin, are always syntax-checked, as Ruff checks them.

The engine parses a file only when some rule's trigger words occur in it, which is what makes a big
tree fast; so ``echo 'x = (' | ddpfix -`` found nothing wrong. A file someone names, or pipes in,
is worth one ``ast.parse`` (about a millisecond for 10 kB): it is reported ``E999``, exit 2. Files
found by walking a folder keep the fast path: checking them all would cost four times a whole
``--check`` of torch (docs/interrupts.md, bench/syntax_cost.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from ddpfix.engine import _check_syntax  # the engine's own check: one place decides what E999 says
from ddpfix.engine import max_file_size
from ddpfix.findings import FileResult, Problem
from ddpfix.sources import is_notebook


def with_syntax_checked(result: FileResult, options: Mapping[str, object] | None) -> FileResult:
    """``result`` of a named file (or stdin), with ``E999`` added where the engine did not parse the
    file and it does not parse. A result with findings, fixes or problems was parsed (or reported)
    already; notebooks are the notebook front-end's to parse, cell by cell; a file over the parse
    limit of its settings (``options``, as the engine had them) is not parsed at all (it has no
    trigger words, or it would be reported already)."""
    if result.problems or result.findings or result.changed or is_notebook(result.path):
        return result
    if len(result.original) > max_file_size(options):
        return result
    checked = _check_syntax(result.path, result.original)
    if isinstance(checked, Problem):
        result.problems.append(checked)
    return result
