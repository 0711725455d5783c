"""Whether setting or dropping a call's keyword argument keeps its comments: each kept once, none
repeated. DDP003 and DDP004 ask it before offering a fix that rewrites a ``self.log`` call's
keywords (``edits.SetKeyword`` / ``DropKeyword``): the engine refuses an edit that would lose or
repeat a comment, so ``--check`` says up front that such a fix is not offered.

Where LibCST keeps each comment between the parentheses is read off the tokens: before the first
argument (the call's ``whitespace_before_args``), inside an argument, before an argument's comma
and after it (the comma's), and after the last argument when no comma follows it (its
``whitespace_after_arg``); ``edits._args.with_keyword`` and ``without_keyword`` are the rewrites
this predicts.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import field

from ddpfix.analysis.lightning import arguments_in_order, has_comment
from ddpfix.analysis.tree_text import end
from ddpfix.records import record


@record
class _Argument:
    """The comments of one argument's parts, as LibCST's ``Arg`` holds them."""

    inside: list[str]  # its keyword, ``=`` and value
    value: list[str]  # its value (with the value's own parentheses): what replacing the value drops
    before_comma: list[str] = field(default_factory=list)
    after_comma: list[str] = field(default_factory=list)
    after_argument: list[str] = field(default_factory=list)  # the last one's, where no comma follows
    comma: bool = False
    keyword: str | None = None


#: Tokens that are layout, not code.
_LAYOUT = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER})


def keyword_edits_keep_comments(call: ast.Call, view, drop: str | None, name: str) -> bool:
    """Whether dropping the keyword ``drop`` (when given and present) and then setting ``name``
    leaves the call's comments as they were: each kept once, none repeated."""
    if not has_comment(call, view):
        return True
    layout = _comment_layout(call, view)
    if layout is None:
        return False  # text the tokenizer cannot follow: not proven
    opening, arguments = layout
    lost: list[str] = []
    repeated: list[str] = []
    index = next((i for i, a in enumerate(arguments) if drop is not None and a.keyword == drop), None)
    if index is not None:
        removed = arguments.pop(index)
        lost += removed.inside
        if index < len(arguments):  # not the last: it goes with its comma
            lost += removed.before_comma + removed.after_comma
        elif arguments:  # the last: the new last one takes over its comma and what follows it
            previous = arguments[-1]
            lost += previous.before_comma + previous.after_comma + previous.after_argument
            previous.before_comma, previous.after_comma = removed.before_comma, removed.after_comma
            previous.after_argument, previous.comma = removed.after_argument, removed.comma
        else:
            lost += removed.before_comma + removed.after_comma + removed.after_argument
    existing = next((a for a in arguments if a.keyword == name), None)
    if existing is not None:
        lost += existing.value  # the value is replaced
    elif arguments:
        # The new argument follows the call's own separator, copied from the comma before the last
        # argument (or the opening parenthesis); after a trailing comma the last argument's comma
        # and its space are copied too.
        repeated += arguments[-2].after_comma if len(arguments) > 1 else opening
        last = arguments[-1]
        if last.comma:
            repeated += last.before_comma + last.after_argument
    return sorted(lost) == sorted(repeated)


def _comment_layout(call: ast.Call, view) -> tuple[list[str], list[_Argument]] | None:
    """The comments after the call's ``(`` before its first argument, and each argument's; None
    where the tokens cannot be followed."""
    first = view.text.index("(", end(call.func, view))
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(view.text[first:end(call, view)]).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    keywords = [a.arg if isinstance(a, ast.keyword) else None for a in arguments_in_order(call)]
    opening: list[str] = []
    arguments: list[_Argument] = []
    current: _Argument | None = None
    pending: list[str] = []  # comments since the last token
    depth, between, equal_seen, in_value = 0, True, False, False  # between: before an argument's first token
    for token in tokens:
        if token.type == tokenize.COMMENT:
            pending.append(token.string)
            continue
        if token.type in _LAYOUT:
            continue
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
            if depth == 1:
                continue  # the call's own parenthesis
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
            if depth == 0:  # the call's closing parenthesis
                if current is None:
                    opening += pending
                elif between:
                    current.after_comma += pending  # after a trailing comma
                else:
                    current.after_argument = pending
                break
        if depth == 1 and token.type == tokenize.OP and token.string == ",":
            current.before_comma, current.comma, pending, between = pending, True, [], True
            continue
        if between:  # an argument's first token
            if current is None:
                opening = pending
            else:
                current.after_comma = pending
            if len(arguments) == len(keywords):
                return None  # the tokens disagree with the tree
            current = _Argument(inside=[], value=[], keyword=keywords[len(arguments)])
            arguments.append(current)
            pending, between, equal_seen, in_value = [], False, False, False
        else:
            current.inside += pending
            if in_value:
                current.value += pending
            pending = []
        if current.keyword is not None and not equal_seen:
            equal_seen = depth == 1 and token.type == tokenize.OP and token.string == "="
        elif equal_seen:
            in_value = True  # from the value's first token on (a comment before it is the ``=``'s)
    else:
        return None
    return (opening, arguments) if len(arguments) == len(keywords) else None
