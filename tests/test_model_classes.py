"""Classes across files (model/classes.py): kinds resolved through aliases, relative imports and
package re-exports, through the real command line too."""

from __future__ import annotations

from ddpfix.model.classes import class_bases, from_imports, module_key, resolve_kinds


def test_bases_are_read_by_their_own_names_through_import_aliases():
    data = b"""from lightning import LightningModule as LM
from .base import System as Base, Other
import lightning.pytorch as pl

class A(LM):
    pass
class B(Base, metaclass=Meta):
    pass
class C(pl.LightningModule, Other):
    pass
# class D(LM): a comment
"""
    assert class_bases(data) == [("A", ("LightningModule",)), ("B", ("System",)), ("C", ("LightningModule", "Other"))]


def test_from_imports_read_every_form():
    data = b"""from .system import System
from ..pkg.mod import (
    A as B,
    C,
)
try:
    from x import y as z, w
except ImportError:
    pass
from . import *
"""
    assert from_imports(data) == [(".system", "System", "System"), ("..pkg.mod", "A", "B"), ("..pkg.mod", "C", "C"),
                                  ("x", "y", "z"), ("x", "w", "w"), (".", "*", "*")]


def test_module_keys_follow_package_reexports_and_never_an_unrelated_module():
    files = [
        ("/p/mylib/models/system.py", [("System", ("LightningModule",)), ("Block", ("Module",))], []),
        ("/p/mylib/models/__init__.py", [], [(".system", "System", "System")]),
        ("/p/mylib/__init__.py", [], [("mylib.models", "System", "BaseSystem"), ("timm.layers", "Block", "Block")]),
        ("/p/task.py", [("Task", ("BaseSystem",)), ("Probe", ("Callback",))], [("mylib", "BaseSystem", "BaseSystem")]),
        ("/p/other.py", [], [("elsewhere", "System", "System")]),  # another library's System
    ]
    kinds = resolve_kinds(files)
    modules = kinds["LightningModule"].reach
    assert modules["System"] == {"system", "models"}
    assert modules["BaseSystem"] == {"mylib", "task"}
    assert "Block" not in modules and "other" not in modules["System"]
    assert kinds["Callback"].reach == {"Probe": frozenset({"task"})}


def test_a_class_is_its_file_and_name_where_a_relative_import_says_which():
    """Two folders each define ``System``: a LightningModule in lit/, a plain class in plain/. A
    subclass in plain/ that imports ``.system`` is not a LightningModule (the reviewer's twin2: a
    rank_zero_only= written into a plain class's own ``log`` raised TypeError)."""
    files = [
        ("/p/lit/system.py", [("System", ("LightningModule",))], []),
        ("/p/plain/system.py", [("System", ())], []),
        ("/p/plain/classification.py", [("ClassificationSystem", ("System",))], [(".system", "System", "System")]),
        ("/p/lit/task.py", [("Task", ("System",))], [(".system", "System", "System")]),
    ]
    kinds = resolve_kinds(files)["LightningModule"]
    assert set(kinds.reach) == {"System", "Task"}
    assert kinds.shadowed == {"/p/plain/classification.py": frozenset({"System"})}
    assert module_key("/p/mylib/__init__.py") == "mylib"


def test_a_module_whose_base_a_package_reexports_is_checked(tmp_path, run_cli):
    (tmp_path / "pyproject.toml").write_text("")
    models = tmp_path / "mylib" / "models"
    models.mkdir(parents=True)
    (models / "system.py").write_text("import lightning as L\n\n\nclass System(L.LightningModule):\n    pass\n")
    (models / "__init__.py").write_text("from .system import System\n")
    (tmp_path / "mylib" / "__init__.py").write_text("from mylib.models import System as BaseSystem\n")
    (tmp_path / "task.py").write_text(
        "from mylib import BaseSystem\n\n\nclass Task(BaseSystem):\n"
        "    def validation_step(self, batch, batch_idx):\n"
        "        if self.trainer.is_global_zero:\n"
        "            self.log('val_x', batch.sum())\n")
    for named in (".", "task.py"):
        proc = run_cli("--check", named, cwd=tmp_path)
        assert b"task.py:7:13: DDP003" in proc.stdout, (named, proc.stdout)
    # A plain class of the same name beside the script, imported relatively: not a LightningModule.
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "system.py").write_text("class System:\n    def log(self, name, value):\n        pass\n")
    (tmp_path / "plain" / "task.py").write_text((tmp_path / "task.py").read_text().replace(
        "from mylib import BaseSystem", "from .system import System as BaseSystem"))
    assert b"plain/task.py" not in run_cli("--check", ".", cwd=tmp_path).stdout
    # The same names from an unrelated library are not the project's LightningModule.
    (tmp_path / "task.py").write_text((tmp_path / "task.py").read_text().replace("from mylib import", "from otherlib import"))
    assert b"DDP003" not in run_cli("--check", ".", cwd=tmp_path).stdout


def test_a_base_list_with_comments_and_brackets_is_read_whole():
    """A ``)`` in a comment inside the base list does not end it (review helper-52, f1e2: a callback
    mixing in a plain class behind ``# (Config first)``); commas inside brackets split nothing, and
    a base made by a call is no class name (``?``)."""
    from ddpfix.model.classes import class_bases

    source = (b"class Printer(  # (Config first: its hooks win)\n    Config, L.Callback):\n    pass\n\n\n"
              b"class Table(Base[int, str], Mixin):\n    pass\n\n\nclass Made(make(1, 2), Other):\n    pass\n")
    assert class_bases(source) == [("Printer", ("Config", "Callback")), ("Table", ("Base", "Mixin")),
                                   ("Made", ("?", "Other"))]
