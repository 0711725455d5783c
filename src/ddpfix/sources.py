"""The front door for one file's bytes: a notebook goes to the notebook front-end, any other file
to the engine. The CLI, the runner's workers, the language server and the tests all call
``fix_source``, so there is exactly one pipeline, and the engine never imports the notebook code.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from ddpfix import budget
from ddpfix.engine import fix_python, internal_error
from ddpfix.facts import ProjectFacts
from ddpfix.findings import FileResult, FixKey
from ddpfix.rules.base import Rule


def fix_source(
    path: str,
    data: bytes,
    rules: Sequence[type[Rule]],
    facts: ProjectFacts | None = None,
    only: Collection[FixKey] | None = None,
    options: Mapping[str, object] | None = None,
    fix: bool = True,
) -> FileResult:
    """Run ``rules`` over one file's bytes (a notebook's code cells for ``*.ipynb``). Never raises.

    ``only``: apply just the fixes with these keys, safe or unsafe (picked by hand); None: the safe
    fixes, and the unsafe ones too with ``options["unsafe_fixes"]``. ``fix=False`` is the
    report-only speed (``--check``, editor diagnostics): no fix is applied, so every rule reads the
    file as it is — one tree, one set of positions — and each finding stands where it is in the
    file, with ``fixable`` and ``applicability`` saying what fix exists."""
    if not fix:
        only = frozenset()
    if is_notebook(path):
        try:
            from ddpfix.notebook import fix_notebook  # loaded for notebooks only

            return fix_notebook(path, data, rules, facts, only, options)
        except Exception as err:
            budget.raise_if_wrapped(err)
            return internal_error(path, data, err)
    return fix_python(path, data, rules, facts, only, options)


NOTEBOOK_SUFFIX = ".ipynb"


def is_notebook(path: str) -> bool:
    """Whether the file goes to the notebook front-end (the one place this is decided)."""
    return path.endswith(NOTEBOOK_SUFFIX)
