"""Editing a call's keyword arguments without disturbing its layout or losing a comment."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import libcst as cst

from ddpfix.positions import Positions
from ddpfix.edits._walk import _FIELD_ORDER, _fields, walk


def comments(node: cst.CSTNode) -> list[str]:
    if _statements_seen is not None:
        return sorted(_comments_below(node, _statements_seen))
    found: list[str] = []

    class Collect(cst.CSTVisitor):
        def visit_Comment(self, comment: cst.Comment) -> None:
            found.append(comment.value)

    walk(node, Collect())
    return sorted(found)


#: While ``remembered_comments`` holds: id -> (statement, the comments below it). An edit of the
#: whole module (an import added, the script wrapped in a main guard) compares the comments of
#: the module before and after: the statements the edit left as they were are the same objects
#: in both, and are not walked twice. Statements only: a table of every node would cost memory.
_statements_seen: dict[int, tuple[cst.CSTNode, tuple[str, ...]]] | None = None
_REMEMBERED = (cst.BaseStatement, cst.BaseSuite)


@contextmanager
def remembered_comments() -> Iterator[None]:
    """Within the block, ``comments`` of a statement already asked about is not walked again."""
    global _statements_seen
    outer = _statements_seen
    if outer is None:
        _statements_seen = {}
    try:
        yield
    finally:
        if outer is None:
            _statements_seen = None


def _comments_below(node: cst.CSTNode, seen: dict) -> tuple[str, ...]:
    """The comments of ``node`` and every node below it (those the ``walk`` of ``comments`` meets)."""
    remember = isinstance(node, _REMEMBERED)
    if remember:
        hit = seen.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
    found: list[str] = [node.value] if isinstance(node, cst.Comment) else []
    for name in _FIELD_ORDER.get(type(node)) or _fields(node):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found += _comments_below(value, seen)
        elif type(value) is tuple or type(value) is list:
            for item in value:
                if isinstance(item, cst.CSTNode):
                    found += _comments_below(item, seen)
    result = tuple(found)
    if remember:
        seen[id(node)] = (node, result)
    return result


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    """The argument ``name=``, spelled as Python reads it: ``ｄevice_map=`` is ``device_map=`` to
    Python (NFKC), and the rules that decide on CPython's tree name it so."""
    return next((a for a in call.args if a.keyword is not None and _as_python_reads(a.keyword.value) == name), None)


def _as_python_reads(identifier: str) -> str:
    return identifier if identifier.isascii() else unicodedata.normalize("NFKC", identifier)


def is_true(arg: cst.Arg | None) -> bool:
    return arg is not None and isinstance(arg.value, cst.Name) and arg.value.value == "True"


def without_keyword(call: cst.Call, name: str) -> cst.Call:
    arg = keyword(call, name)
    if arg is None:
        return call
    args = list(call.args)
    index = args.index(arg)
    del args[index]
    if args and index == len(args):
        # The new last argument takes over the removed one's comma and closing whitespace, so a
        # trailing comma or a ``)`` on its own line stays as it was.
        args[-1] = args[-1].with_changes(comma=arg.comma, whitespace_after_arg=arg.whitespace_after_arg)
    return call.with_changes(args=args)


def with_keyword(call: cst.Call, name: str, value: str) -> cst.Call:
    """``call`` with ``name=value`` set: replaced in place if present, else appended in the call's style."""
    existing = keyword(call, name)
    new_value = cst.parse_expression(value)
    if existing is not None:
        return call.with_changes(args=[a.with_changes(value=new_value) if a is existing else a for a in call.args])
    return with_argument(call, cst.Arg(value=new_value, keyword=cst.Name(name), equal=tight_equal()))


def tight_equal() -> cst.AssignEqual:
    """``=`` with no space around it, as a keyword argument is written."""
    return cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))


def with_argument(call: cst.Call, new: cst.Arg) -> cst.Call:
    """``call`` with ``new`` as its last argument, separated from the one before as the call's
    arguments already are (a newline and indent in a call laid out one argument per line); a
    trailing comma passes to ``new``."""
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    separator = (args[-2].comma.whitespace_after if len(args) > 1 and isinstance(args[-2].comma, cst.Comma)
                 else call.whitespace_before_args)
    if isinstance(separator, cst.SimpleWhitespace) and not separator.value:
        separator = cst.SimpleWhitespace(" ")
    if isinstance(last.comma, cst.Comma):  # trailing comma: the new argument takes it over
        args[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=separator))
        args.append(new.with_changes(comma=last.comma, whitespace_after_arg=last.whitespace_after_arg))
    else:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=separator), whitespace_after_arg=cst.SimpleWhitespace(""))
        args.append(new.with_changes(whitespace_after_arg=last.whitespace_after_arg))
    return call.with_changes(args=args)


def keeps_comments(before: cst.CSTNode, after: cst.CSTNode) -> bool:
    return comments(before) == comments(after)


class TargetedTransformer(cst.CSTTransformer):
    """A transformer that rewrites a few known nodes (``targets``) of the tree it visits.

    Given the tree's positions, it visits only the nodes around the targets: LibCST rebuilds every
    node it visits, and a fix touches a few lines of a file. Without positions (or with a target
    the positions do not know) it visits everything, as any transformer does.
    """

    def __init__(self, targets: Iterable[cst.CSTNode], positions: Positions | None = None):
        super().__init__()
        self._outer = positions.outer if positions is not None else None
        self._targets: list[tuple[int, int]] | None = None
        if positions is not None:
            spans = [positions.outer(node) for node in targets]
            self._targets = None if None in spans else spans

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._targets is not None:
            span = self._outer(node)
            if span is not None and not any(span[0] <= start and end <= span[1] for start, end in self._targets):
                return False  # nothing to rewrite below: LibCST keeps the node as it is
        return super().on_visit(node)


class ReplaceCalls(TargetedTransformer):
    """Swaps calls (found in the tree being visited) for their rewritten versions.

    A replacement may be a function of the updated call: then a rewrite inside it (a fixed factory
    inside a fixed ``.cuda()``) is kept rather than rebuilt from the original children. ``also``:
    other nodes a subclass rewrites.
    """

    def __init__(self, replacements: dict, positions: Positions | None = None, also: Iterable[cst.CSTNode] = ()):
        super().__init__([*replacements, *also], positions)
        self.replacements = replacements

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        replacement = self.replacements.get(original_node)
        if replacement is None:
            return updated_node
        return replacement(updated_node) if callable(replacement) else replacement
