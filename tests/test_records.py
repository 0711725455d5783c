"""``ddpfix.records.record``: a dataclass made on first use behaves as ``@dataclass`` made at once."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys
import textwrap
from dataclasses import field

import pytest

from ddpfix.records import _WAITING, made, record


def test_a_record_waits_until_its_first_instance_and_is_then_the_dataclass():
    @record(frozen=True)
    class Place:
        path: str
        line: int = 0
        notes: tuple = field(default_factory=tuple)

        def where(self) -> str:
            return f"{self.path}:{self.line}"

    assert Place in _WAITING and not dataclasses.is_dataclass(Place)
    first = Place("a.py", 3)
    assert Place not in _WAITING and dataclasses.is_dataclass(Place)
    assert first == Place("a.py", 3) and first != Place("a.py", 4)
    assert hash(first) == hash(Place(path="a.py", line=3))
    assert repr(first).endswith(".Place(path='a.py', line=3, notes=())")
    assert first.where() == "a.py:3" and Place("b.py").notes == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.line = 5
    assert dataclasses.replace(first, line=9) == Place("a.py", 9)
    with pytest.raises(TypeError):
        Place()  # the made __init__'s own error: a field is missing


def test_a_mutable_record_keeps_eq_without_hash_and_post_init():
    @record
    class Counter:
        counts: dict = field(default_factory=dict)
        total: int = 0

        def __post_init__(self):
            self.total = sum(self.counts.values())

    one = Counter({"a": 2, "b": 3})
    assert one.total == 5 and one == Counter({"a": 2, "b": 3})
    one.total = 7
    assert Counter.__hash__ is None
    assert Counter().counts is not Counter().counts


@record(frozen=True)
class Key:  # (at the top of the module: pickle finds a class by its name)
    name: str
    parts: tuple = ()


def test_copies_and_pickles_of_a_record_compare_as_the_dataclass_does():
    key = Key("x", (1, 2))
    assert copy.copy(key) == key and copy.deepcopy(key) == key
    assert pickle.loads(pickle.dumps(key)) == key


def test_unpickling_in_a_process_that_never_made_one_makes_the_class(tmp_path):
    # A worker of ``--jobs`` receives results whose class it never instantiated: unpickling goes
    # through ``__new__`` and ``__setstate__``, not ``__init__``, and must still give the class its
    # equality, hash and repr.
    (tmp_path / "shapes.py").write_text(textwrap.dedent("""
        from dataclasses import field
        from ddpfix.records import record

        @record(frozen=True)
        class Shape:
            name: str
            sides: tuple = field(default_factory=tuple)
    """))
    env_path = [str(tmp_path), *sys.path]
    made_here = subprocess.run(
        [sys.executable, "-c", "import pickle, sys, shapes; sys.stdout.buffer.write(pickle.dumps(shapes.Shape('tri', (3,))))"],
        capture_output=True, check=True, env={"PYTHONPATH": ":".join(env_path)}).stdout
    read_there = subprocess.run(
        [sys.executable, "-c", textwrap.dedent("""
            import pickle, sys, shapes
            from ddpfix.records import _WAITING
            assert shapes.Shape in _WAITING
            shape = pickle.loads(sys.stdin.buffer.read())
            print(repr(shape), shape == shapes.Shape('tri', (3,)), hash(shape) == hash(shapes.Shape('tri', (3,))))
        """)], input=made_here, capture_output=True, check=True, env={"PYTHONPATH": ":".join(env_path)}).stdout
    assert read_there.decode().strip() == "Shape(name='tri', sides=(3,)) True True"


def test_a_subclass_reads_its_record_base_made():
    @record
    class Base:
        x: int

    @dataclasses.dataclass
    class Child(Base):
        y: int = 0

    assert Base not in _WAITING
    assert Child(1, 2) == Child(x=1, y=2) and Base(5).x == 5 and isinstance(Child(1), Base)
    assert [f.name for f in dataclasses.fields(Child)] == ["x", "y"]

    @record
    class Grandchild(Child):
        z: str = ""

    assert Grandchild(1, 2, "z") == Grandchild(x=1, y=2, z="z")


def test_a_record_subclassed_with_keywords_passes_them_up():
    seen = {}

    class Registered:
        def __init_subclass__(cls, tag=None, **kwargs):
            super().__init_subclass__(**kwargs)
            seen[cls.__name__] = tag

    @record
    class Middle(Registered):
        x: int = 0

    class Leaf(Middle, tag="leaf"):
        pass

    assert seen["Leaf"] == "leaf" and Leaf().x == 0


def test_make_all_makes_every_record_of_ddpfix_before_threads_use_them():
    # (a thread that builds an instance while another makes the class may find no __init__: the
    # language server makes them all before its worker threads start; review helper-54, 1)
    code = ("from ddpfix import records\nrecords.make_all()\nimport ddpfix.cli, ddpfix.rules, ddpfix.lsp\n"
            "ddpfix.rules.all_rules()\nprint(len(records._WAITING))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0"


def test_the_language_server_makes_every_record_before_it_serves(monkeypatch):
    from ddpfix import lsp, records

    calls = []
    monkeypatch.setattr(sys, "stdout", sys.stdout)  # (lsp.main points it at stderr)
    monkeypatch.setattr(records, "make_all", lambda: calls.append("made"))
    monkeypatch.setattr(lsp, "build_server", lambda: calls.append("built") or _Server(calls))
    monkeypatch.setattr(lsp.os, "_exit", lambda code: calls.append(code))
    monkeypatch.setattr(lsp.logging, "basicConfig", lambda **kwargs: None)
    lsp.main([])
    assert calls == ["built", "made", "served", 0]


class _Server:
    def __init__(self, calls):
        self.calls = calls

    def serve(self, stdin, stdout):
        self.calls.append("served")
        return 0


def test_a_subclass_runs_each_init_subclass_above_it_once():
    seen = []

    class Mixin:
        def __init_subclass__(cls, **kwargs):
            super().__init_subclass__(**kwargs)
            seen.append(cls.__name__)

    @record
    class Base:
        x: int = 0

    class Leaf(Mixin, Base):
        pass

    assert seen == ["Leaf"] and Leaf().x == 0


def test_a_record_that_cannot_be_made_says_why_at_every_use():
    @record
    class Broken:
        x: int = 0
        y: int  # (a field without a default after one with: dataclass refuses it)

    for _ in range(2):
        with pytest.raises(TypeError, match="non-default argument|could not be made"):
            Broken(1, 2)


@pytest.mark.parametrize("body", ["def __init__(self): pass", "def __setstate__(self, state): pass",
                                  "def __init_subclass__(cls): pass"])
def test_a_class_that_writes_a_stand_in_is_refused(body):
    namespace = {}
    exec(f"class Own:\n    x: int = 0\n    {body}\n", namespace)
    with pytest.raises(TypeError, match="use @dataclass"):
        record(namespace["Own"])


def test_slots_are_refused():
    with pytest.raises(TypeError, match="slots"):
        record(slots=True)


def test_made_is_idempotent():
    @record
    class Once:
        x: int = 1

    assert made(Once) is Once and made(Once) is Once and Once() == Once(1)


def test_the_records_of_a_run_are_made_as_dataclasses_would_be():
    # Every record of the modules a run loads, made: the same fields, in order, as ``@dataclass``.
    import ddpfix.cli  # noqa: F401
    from ddpfix.rules import all_rules

    all_rules()
    waiting = list(_WAITING)
    assert waiting, "a run loads records it has not used yet"
    for cls in waiting:
        made(cls)
        assert dataclasses.is_dataclass(cls)
        assert "__init__" in vars(cls) and "__setstate__" not in vars(cls)
