"""Where a Python file's comments are: its code with every comment blanked, one reading for every
question that must not take a comment's words for code (the hazards of the facts pass, the rank's
words of ``model.rank_reads``). Read as Python reads it: a ``#`` in a string starts no comment, and a
lone carriage return ends a line, and a comment, as a newline does (``tokenize`` does not); the file
is decoded by its own encoding (a BOM, a PEP 263 declaration), so that a legacy encoding's columns
are its characters (review helper-56 h2/r2, helper-57 g1/u1)."""

from __future__ import annotations

import re


#: A string literal (any prefix, any quotes; a backslash escapes what follows, a newline too) or a
#: comment (to the end of its line, which a lone carriage return ends as well, as Python reads it).
_STRING_OR_COMMENT = re.compile(
    r'(?P<comment>#[^\r\n]*)'
    r'|[rRbBuUfF]{0,2}(?:"""(?:\\[\s\S]|[^\\])*?"""' r"|'''(?:\\[\s\S]|[^\\])*?'''"
    r'|"(?:\\[\s\S]|[^"\\\r\n])*"' r"|'(?:\\[\s\S]|[^'\\\r\n])*')")
#: PEP 263's coding declaration, on one of the first two lines.
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.M)


def without_comments(data: bytes) -> bytes:
    """The file's code, decoded by its own encoding (a BOM, a ``coding:`` declaration, else UTF-8),
    with every comment's characters blanked, as UTF-8 (a column of a legacy encoding is another
    character count: helper-57, g1). Strings are kept whole: a ``#`` in one starts no comment. Its
    lines are the file's. The text as it stands where it does not decode."""
    encoding = "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8"
    declared = _CODING.search(b"\n".join(data.split(b"\n", 2)[:2]))
    if declared is not None and encoding == "utf-8":
        encoding = declared.group(1).decode("ascii", "replace")
    try:
        text = data.decode(encoding)
    except (LookupError, UnicodeDecodeError):
        return data
    blanked = _STRING_OR_COMMENT.sub(lambda m: " " * len(m.group()) if m.group("comment") else m.group(), text)
    return blanked.encode("utf-8")
