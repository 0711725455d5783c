"""Regular expressions compiled on first use.

A module-level ``re.compile`` runs when its module is imported, and every ``ddpfix`` run imports all
the rules (``rules.all_rules``) with their helpers: some fifty patterns, most of which a given
file never reaches (a rule's prefilter turns most files away before its patterns are asked), were
milliseconds of each ``--check`` of a small file. ``lazy_compile`` is the one place that decides
how a module-level pattern is made: compiled when first used, then as fast as a compiled pattern.
"""

from __future__ import annotations

import re
from typing import cast

#: What a compiled pattern offers (``search``, ``finditer``, ``pattern``...): bound onto the stand-in
#: once compiled, so later look-ups find them as plain attributes and never reach ``__getattr__``.
_ATTRIBUTES = tuple(name for name in dir(re.Pattern) if not name.startswith("_"))


class _LazyPattern:
    """Stands in for ``re.compile(pattern, flags)`` until an attribute is first asked for."""

    def __init__(self, pattern: str | bytes, flags: int = 0):
        self._source = (pattern, flags)

    def __getattr__(self, name: str):
        if name.startswith("_"):  # copy and pickle probe for hooks (and ``_source``, before __init__)
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        for attribute in _ATTRIBUTES:
            setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_compile{self._source!r}"


def lazy_compile(pattern: str | bytes, flags: int = 0) -> re.Pattern:
    """``re.compile(pattern, flags)``, compiled when one of its methods or attributes is first used.
    For module-level constants only: a pattern made inside a function is used at once anyway."""
    return cast(re.Pattern, _LazyPattern(pattern, flags))
