"""The house has one way down (../shared/design.md): a floor imports only floors below it."""

from __future__ import annotations

import subprocess
import sys

import pytest


def imported_by(module: str) -> set[str]:
    """The ddpfix modules that importing ``module`` loads, in a fresh interpreter."""
    code = f"import sys, {module}; print(' '.join(m for m in sys.modules if m.startswith('ddpfix')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


@pytest.mark.parametrize(("module", "above"), [
    ("ddpfix.engine", {"ddpfix.notebook", "ddpfix.sources", "ddpfix.runner", "ddpfix.cli", "ddpfix.lsp_document"}),
    ("ddpfix.notebook", {"ddpfix.sources", "ddpfix.runner", "ddpfix.cli"}),
    ("ddpfix.sources", {"ddpfix.runner", "ddpfix.cli", "ddpfix.lsp_document"}),
    ("ddpfix.lsp_document", {"ddpfix.cli", "ddpfix.runner"}),
    ("ddpfix.transforms", {"ddpfix.engine", "ddpfix.cli", "ddpfix.runner"}),
])
def test_no_floor_imports_one_above_it(module, above):
    assert not imported_by(module) & above
