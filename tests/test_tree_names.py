"""``_tree_names`` answers what ``_names`` answers: for every statement of a file, the names it
reads, binds, assigns and writes, and its first exit, from CPython's tree and from LibCST's.

CI runs it over the fixtures and ``tests/data``; over a bigger tree once by hand:

    python tests/test_tree_names.py /tmp/corpusB path/to/site-packages/lightning
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import libcst as cst
import pytest

from ddpfix.transforms import _names, _tree_names
from ddpfix.transforms.base import TreeView

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*(ROOT / "fixtures").rglob("*.py"), *(ROOT / "tests" / "data").glob("*.py")])


def _libcst_statements(module: cst.Module) -> list[cst.CSTNode]:
    """Every statement, small ones one by one (``a; b`` is two), in LibCST's visiting order."""
    found: list[cst.CSTNode] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                found.append(node)
            return True

    module.visit(Collect())
    return found


def _tree_statements(node: ast.AST) -> list[ast.stmt]:
    """Every statement of CPython's tree, in the same order (depth first, in source order)."""
    found: list[ast.stmt] = []
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.stmt):
            found.append(current)
        pending.extend(reversed(list(ast.iter_child_nodes(current))))
    return found


def differences(data: bytes) -> list[str] | None:
    """What the two trees answer differently, statement by statement; None for a file only one of
    them reads the same way (a parse error, identifiers CPython renames)."""
    try:
        tree = ast.parse(data)
        module = cst.parse_module(data)
    except (SyntaxError, ValueError, cst.ParserSyntaxError):
        return None
    if TreeView(tree, data).renames_identifiers:
        return None
    theirs, ours = _libcst_statements(module), _tree_statements(tree)
    if len(theirs) != len(ours):
        return [f"{len(ours)} statements on CPython's tree, {len(theirs)} on LibCST's"]
    found = []
    for libcst_statement, statement in zip(theirs, ours):
        expected, got = _names.statement_names(libcst_statement), _tree_names.statement_names(statement)
        if expected != got:
            found.append(f"line {statement.lineno}: names {got} != {expected}")
        expected_exit, got_exit = _names.exit_in(libcst_statement), _tree_names.exit_in(statement)
        if expected_exit != got_exit:
            found.append(f"line {statement.lineno}: exit {got_exit} != {expected_exit}")
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_names_agree_with_libcst(path: Path):
    assert differences(path.read_bytes()) in (None, [])


def test_a_line_is_the_union_of_its_statements():
    tree = ast.parse("a = b; c += d; del e.f; f(g)\n")
    line = _tree_names.statement_names(tuple(tree.body))
    expected = _names.statement_names(cst.parse_module("a = b; c += d; del e.f; f(g)\n").body[0])
    assert line == expected


def main(paths: list[str]) -> int:
    files = sorted({p for root in paths for p in ([Path(root)] if Path(root).is_file() else Path(root).rglob("*.py"))})
    compared = skipped = failed = 0
    for path in files:
        try:
            found = differences(path.read_bytes())
        except RecursionError:
            found = None
        if found is None:
            skipped += 1
            continue
        compared += 1
        if found:
            failed += 1
            print(path, *found[:5], sep="\n  ")
    print(f"{compared} files compared, {skipped} skipped (unparsable or renamed identifiers), {failed} with differences")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
