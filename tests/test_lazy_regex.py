"""``lazy_compile``: a module-level pattern compiled on first use, then a compiled pattern's own methods."""

from __future__ import annotations

import copy
import re

from ddpfix.lazy_regex import _LazyPattern, lazy_compile


def test_a_lazy_pattern_compiles_on_first_use_and_answers_as_the_compiled_one():
    lazy = lazy_compile(rb"(?P<word>\w+)\s*=", re.M)
    assert "search" not in vars(lazy)  # nothing compiled yet
    compiled = re.compile(rb"(?P<word>\w+)\s*=", re.M)
    data = b"a = 1\nbb=2\n"
    assert [m.group("word") for m in lazy.finditer(data)] == [m.group("word") for m in compiled.finditer(data)]
    assert vars(lazy)["search"].__self__ is vars(lazy)["match"].__self__  # bound once, to one pattern
    assert (lazy.pattern, lazy.flags, lazy.groupindex) == (compiled.pattern, compiled.flags, compiled.groupindex)
    assert lazy.sub(b"x=", data) == compiled.sub(b"x=", data)


def test_a_lazy_pattern_copies_and_answers_missing_names_as_a_pattern_does():
    lazy = lazy_compile(r"cuda(:\d+)?")
    assert isinstance(copy.copy(lazy), _LazyPattern)
    try:
        lazy.no_such_method
    except AttributeError:
        pass
    else:
        raise AssertionError("a name a pattern lacks must raise AttributeError")
    assert lazy.fullmatch("cuda:1")
