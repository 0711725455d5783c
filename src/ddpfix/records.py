"""Dataclasses whose methods are made when the class is first used.

``@dataclass`` compiles its methods (``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and a
frozen class's ``__setattr__``/``__delattr__``) with one ``exec`` each when the class statement
runs: about 0.4 ms a frozen class on the 2-core machine. Every run imports some sixty of them (the
rules with their helpers, the facts, the settings), and a one-file ``--check`` makes instances of
barely half: the rest were a sixth of its start-up (bench/startup.py). ``record`` is the one place
that decides how such a class is made: exactly ``dataclass(**options)``, applied to the class in
place the first time an instance is made (a call runs ``__init__``; ``copy`` and unpickling in a
worker process restore the state through ``__setstate__``) or a subclass is defined.

What differs before that moment: ``dataclasses.is_dataclass(cls)`` and ``dataclasses.fields(cls)``
on the class itself (no code of ddpfix asks them of a record; classes asked so stay ``@dataclass``),
and a ``field(default_factory=...)`` read on the class (a ``Field``, where the made class has no
attribute). A class that writes its own ``__init__``, ``__setstate__`` or ``__init_subclass__``, and
``slots=True`` (which makes a new class), are refused: use ``@dataclass``.

Threads: while one thread makes a class, another that builds an instance of it at that moment may
find no ``__init__`` at all (``dataclass`` keeps an ``__init__`` the class has, so the stand-in goes
first). A program that uses records from several threads calls ``make_all`` before it starts them:
the language server does.
"""

from __future__ import annotations

import dataclasses
import os
import threading

#: Classes declared with ``record`` and not made yet -> their ``dataclass`` options.
_WAITING: dict[type, dict] = {}
#: Stand-ins ``record`` puts on a waiting class; ``made`` takes them away before ``dataclass`` runs
#: (it keeps an ``__init__`` the class already has).
_STAND_INS = ("__init__", "__setstate__", "__init_subclass__")
#: Two threads (the language server's) may make their first instance of one class at once.
_LOCK = threading.RLock()


def record(cls: type | None = None, /, **options):
    """``@dataclass(**options)``, applied when the class is first instantiated or subclassed."""
    if options.get("slots"):
        raise TypeError("record(slots=True) makes a new class: use @dataclass")

    def wait(cls: type) -> type:
        written = [name for name in _STAND_INS if name in vars(cls)]
        if written:
            raise TypeError(f"record {cls.__qualname__} writes {', '.join(written)}: use @dataclass")

        def subclassed(subclass: type, **kwargs) -> None:
            made(subclass)  # its bases (not itself: a class is declared a record after it is created)
            # The stand-in is gone: the ``__init_subclass__`` after this record's place runs.
            super(cls, subclass).__init_subclass__(**kwargs)

        _WAITING[cls] = options
        cls.__init__ = _init_once_made
        cls.__setstate__ = _setstate_once_made
        cls.__init_subclass__ = classmethod(subclassed)
        return cls

    return wait if cls is None else wait(cls)


def made(cls: type) -> type:
    """``cls`` with the dataclass methods of every record it derives from (itself included) made."""
    with _LOCK:
        for klass in reversed(cls.__mro__):
            options = _WAITING.pop(klass, None)
            if options is not None:
                for name in _STAND_INS:
                    delattr(klass, name)
                try:
                    dataclasses.dataclass(klass, **options)
                except Exception as err:
                    # Half made: every later use says why, rather than build an object without fields.
                    klass.__init__ = _unmade(klass, err)
                    raise
    return cls


def make_all() -> None:
    """Load every module of ddpfix that declares a record and make them all: what a program that
    uses records from several threads calls before it starts them."""
    import importlib

    package = os.path.dirname(os.path.abspath(__file__))
    for folder, subfolders, files in os.walk(package):
        subfolders[:] = [name for name in subfolders if name not in ("__pycache__", "inject")]  # (rehearse's
        for name in files:  # ``inject`` is code for the user's processes, never loaded here)
            path = os.path.join(folder, name)
            if not name.endswith(".py") or name == "__main__.py":
                continue
            with open(path, "rb") as handle:
                if b"@record" not in handle.read():
                    continue
            module = os.path.relpath(path[:-3], os.path.dirname(package)).replace(os.sep, ".")
            importlib.import_module(module.removesuffix(".__init__"))
    with _LOCK:
        for klass in list(_WAITING):
            made(klass)


def _unmade(klass: type, err: Exception):
    def __init__(self, *args, **kwargs):
        raise TypeError(f"record {klass.__qualname__} could not be made: {err}")

    return __init__


def _init_once_made(self, *args, **kwargs) -> None:
    made(type(self)).__init__(self, *args, **kwargs)


def _setstate_once_made(self, state) -> None:
    # What pickle and copy do for a class without ``__setstate__`` (a dataclass's, without slots).
    made(type(self))
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
        for name, value in (slots or {}).items():
            object.__setattr__(self, name, value)
    if state:
        self.__dict__.update(state)
