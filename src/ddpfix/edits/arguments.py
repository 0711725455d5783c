"""Dropping a call's argument by its place, and telling from the source text alone whether doing so
keeps every comment of the call (so that a rule's ``check`` can say so before any LibCST parse)."""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field

from ddpfix.edits._base import NodeEdit, Span, cst
from ddpfix.analysis.tree_text import end, start


@dataclass(frozen=True)
class DropArgument(NodeEdit):
    """The argument at ``index`` (counting in source order, positional and keyword alike) removed
    from the call at ``call``.

    Its neighbours keep their layout, except that when it was the last of several the new last
    argument loses its comma, and the whitespace around that comma with it. When it was the only
    argument, the call becomes ``f()``; a comment that stood right after the opening parenthesis,
    or else after the argument's trailing comma, stays after the opening parenthesis (the closing
    one then starts the next line). Any other comment of the argument would be lost: the edit is
    then refused (``drop_keeps_comments`` says so beforehand)."""

    call: Span
    index: int
    kind = "Call"

    @property
    def at(self) -> Span:
        return self.call

    def rewrite(self, node: cst.Call) -> cst.Call:
        args = list(node.args)
        dropped = args.pop(self.index)
        if args:
            if self.index == len(args):  # the last one went: the new last keeps no dangling comma
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return node.with_changes(args=args)
        return node.with_changes(args=(), whitespace_before_args=_space_left(node.whitespace_before_args, dropped.comma))


def _space_left(before: cst.BaseParenthesizableWhitespace, comma) -> cst.BaseParenthesizableWhitespace:
    """What stays inside ``f()`` once its only argument is gone: the whitespace after ``(`` where it
    holds a comment, else the one after the argument's comma where that does
    (``device="cuda",  # why``), else nothing."""
    from ddpfix.edits._args import comments

    if not comments(before) and isinstance(comma, cst.Comma) and comments(comma.whitespace_after):
        before = comma.whitespace_after
    if not comments(before):
        return cst.SimpleWhitespace("")
    if isinstance(before, cst.ParenthesizedWhitespace):
        return before.with_changes(last_line=cst.SimpleWhitespace(""))
    return before


# --- the same question on CPython's tree and the text ----------------------------------------------


@dataclass
class _Segment:
    """The text between two separators of a call's arguments (``(``, commas, ``)``): the tokens of
    its argument, and for each comment how many of those tokens stand before it."""

    tokens: int = 0
    comments: list[int] = field(default_factory=list)

    @property
    def before(self) -> bool:
        """A comment before the argument (LibCST: the whitespace after ``(`` or after the comma before)."""
        return any(at == 0 for at in self.comments) if self.tokens else bool(self.comments)

    @property
    def inside_or_after(self) -> bool:
        """A comment inside the argument, or after it before its comma or ``)``."""
        return self.tokens > 0 and any(at > 0 for at in self.comments)

    @property
    def after(self) -> bool:
        """A comment after the argument, before its comma (LibCST: the comma's whitespace before)."""
        return self.tokens > 0 and any(at == self.tokens for at in self.comments)


def drop_keeps_comments(view, call: ast.Call, index: int) -> bool:
    """Whether ``DropArgument`` of the argument at ``index`` (in source order) keeps every comment
    of ``call`` (``view``: the file's ``TreeView``), read from the text: which comment stands where
    between the call's parentheses and commas is what LibCST's whitespace nodes hold."""
    text = view.text[start(call, view):end(call, view)]
    if "#" not in text:
        return True
    segments = _segments(text, end(call.func, view) - start(call, view))
    if segments is None:
        return False  # text the tokenizer cannot follow: assume a comment would be lost
    count = sum(1 for segment in segments if segment.tokens)
    trailing = segments[count] if len(segments) > count else _Segment()  # after a trailing comma
    dropped = segments[index]
    if count == 1:
        # The comment after ``(`` or the one after the comma moves into ``f()``: not both.
        return not dropped.inside_or_after and not (dropped.before and trailing.comments)
    if index < count - 1:  # its comma, and what follows it up to the next argument, go with it
        return not dropped.inside_or_after and not segments[index + 1].before
    # The last: the comma before it goes too, with the whitespace on both of its sides.
    return not segments[index - 1].after and not dropped.comments and not trailing.comments


def _segments(text: str, func_end: int) -> list[_Segment] | None:
    """The argument segments of the call whose source is ``text`` (its callee ending at offset
    ``func_end``); None where the text does not tokenize."""
    starts = [0]
    for line in io.StringIO(text):
        starts.append(starts[-1] + len(line))
    depth, opened = 0, False
    segments = [_Segment()]
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind, string = token.type, token.string
            if not opened:
                if kind == tokenize.OP and string == "(" and depth == 0 and starts[token.start[0] - 1] + token.start[1] >= func_end:
                    opened, depth = True, 1
                elif kind == tokenize.OP and string in "([{":
                    depth += 1
                elif kind == tokenize.OP and string in ")]}":
                    depth -= 1
                continue
            if kind == tokenize.COMMENT:
                segments[-1].comments.append(segments[-1].tokens)
                continue
            if kind in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                continue
            if kind == tokenize.OP and string in "([{":
                depth += 1
            elif kind == tokenize.OP and string in ")]}":
                depth -= 1
                if depth == 0:
                    return segments
            elif kind == tokenize.OP and string == "," and depth == 1:
                segments.append(_Segment())
                continue
            segments[-1].tokens += 1
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return None
