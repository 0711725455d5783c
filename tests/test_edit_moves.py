"""Moves out of an ``if`` and above one (``ddpfix.edits.moves``): several in one block, carried out
bottom-up as a rule gives them, keep every statement and comment."""

from __future__ import annotations

import ast

import libcst as cst

from ddpfix.edits import apply_edits
from ddpfix.edits._base import Span
from ddpfix.edits.moves import MoveBeforeIf, MoveOutOfIf
from ddpfix.positions import Positions, TreePositions


def moved(source: str, *edits) -> str:
    module = cst.parse_module(source)
    result, refused = apply_edits(module, Positions(module), edits)
    assert not refused
    return result.code


def span(source: str) -> Span:
    """The span of the first function of ``source`` (the owner of the blocks moved within)."""
    function = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef))
    return Span.of(TreePositions(source)[function])


GUARDED = """def f(loss):
    x = 1
    if (rank == 0  # on rank zero
    ):  # report
        # the first
        log("a", loss)
        print(loss)
        log("b", loss)  # the second
        # end of report
    return x
"""


def test_moves_out_of_one_if_bottom_up_keep_the_order_and_the_if():
    owner = span(GUARDED)
    assert moved(GUARDED, MoveOutOfIf(owner, "body", 1, "body", 2), MoveOutOfIf(owner, "body", 1, "body", 0)) == """def f(loss):
    x = 1
    if (rank == 0  # on rank zero
    ):  # report
        print(loss)
        # end of report
    # the first
    log("a", loss)
    log("b", loss)  # the second
    return x
"""


def test_an_if_left_empty_gives_its_place_and_its_comments_to_the_first_moved():
    source = GUARDED.replace("        print(loss)\n", "")
    owner = span(source)
    assert moved(source, MoveOutOfIf(owner, "body", 1, "body", 1), MoveOutOfIf(owner, "body", 1, "body", 0)) == """def f(loss):
    x = 1
    # on rank zero
    # report
    # end of report
    # the first
    log("a", loss)
    log("b", loss)  # the second
    return x
"""


def test_an_else_left_empty_goes_with_its_comments_a_body_left_empty_becomes_pass():
    source = """def f(loss):
    if rank != 0:
        print(loss)
    # rank zero
    else:  # logs
        log("a", loss)
"""
    assert moved(source, MoveOutOfIf(span(source), "body", 0, "orelse", 0)) == """def f(loss):
    if rank != 0:
        print(loss)
    # rank zero
    # logs
    log("a", loss)
"""
    source = "def f(loss):\n    if rank == 0:\n        log('a', loss)\n    else:\n        print(loss)\n"
    assert moved(source, MoveOutOfIf(span(source), "body", 0, "body", 0)) == (
        "def f(loss):\n    if rank == 0:\n        pass\n    else:\n        print(loss)\n    log('a', loss)\n")


def test_moves_above_an_if_bottom_up_keep_their_order():
    source = """def f(loss):
    for step in steps:
        if rank != 0:
            return
        log("a", loss)
        print(loss)
        log("b", loss)
"""
    loop = Span.of(TreePositions(source)[ast.parse(source).body[0].body[0]])
    assert moved(source, MoveBeforeIf(loop, "body", 0, 3), MoveBeforeIf(loop, "body", 0, 1)) == """def f(loss):
    for step in steps:
        log("a", loss)
        log("b", loss)
        if rank != 0:
            return
        print(loss)
"""


def test_blocks_are_named_by_their_field():
    source = """def f(loss):
    try:
        pass
    except ValueError:
        if rank == 0:
            log("a", loss)
    finally:
        if rank == 0:
            log("b", loss)
"""
    statement = Span.of(TreePositions(source)[ast.parse(source).body[0].body[0]])
    assert moved(source, MoveOutOfIf(statement, "finalbody", 0, "body", 0),
                 MoveOutOfIf(statement, "handlers.0", 0, "body", 0)) == """def f(loss):
    try:
        pass
    except ValueError:
        log("a", loss)
    finally:
        log("b", loss)
"""
