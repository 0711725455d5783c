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
    # The language server's transport and document store know nothing of the engine.
    ("ddpfix.lsp_rpc", {"ddpfix.lsp", "ddpfix.lsp_workspace", "ddpfix.lsp_document", "ddpfix.engine", "ddpfix.sources"}),
    ("ddpfix.lsp_workspace", {"ddpfix.lsp", "ddpfix.lsp_document", "ddpfix.engine", "ddpfix.sources"}),
    ("ddpfix.rules", {"ddpfix.engine", "ddpfix.cli", "ddpfix.runner"}),
])
def test_no_floor_imports_one_above_it(module, above):
    assert not imported_by(module) & above


ANALYSIS = ["ast_shapes", "attribute_access", "call_paths", "effects", "keyword_comments", "lightning", "names", "ranks", "text", "tree_text", "values"]


@pytest.mark.parametrize("module", [f"ddpfix.analysis.{name}" for name in ANALYSIS])
def test_the_shared_analysis_imports_no_rule(module):
    loaded = imported_by(module)
    assert not {m for m in loaded if m.startswith("ddpfix.rules")}
    assert not loaded & {"ddpfix.engine", "ddpfix.edits"}


@pytest.mark.parametrize("module", ["ddpfix.edits", "ddpfix.edits._splice", "ddpfix.edits._call_text"])
def test_edits_know_nothing_of_rules_or_lightning(module):
    loaded = imported_by(module)
    assert not {m for m in loaded if m.startswith(("ddpfix.rules", "ddpfix.analysis"))}
