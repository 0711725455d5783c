"""Which files make the program, and which of them may run in one process (model/program.py)."""

from __future__ import annotations

import os

from ddpfix.model.program import ANY_MODULE, ProcessGroups, imported_modules, marked_root, program_root


def test_imported_modules_reads_every_import_form_and_no_string_or_comment():
    data = (b"import os, torch.nn as nn\nfrom .data import stream\nfrom pkg.mod import (A,\n  B)\n"
            b"try:\n    import lightning.pytorch as pl\nexcept ImportError:\n    pass\n"
            b"# import hidden\nx = 'import quoted'\nfrom a import b as c, d\n")
    modules, dynamic = imported_modules(data)
    assert set(modules) == {"os", "nn", "data", "stream", "mod", "A", "B", "pytorch", "a", "b", "d"}
    assert not dynamic
    assert imported_modules(b"model = hydra.utils.instantiate(cfg.model)\n")[1] == (ANY_MODULE,)
    assert imported_modules(b"module = importlib.import_module(name)\n")[1] == (ANY_MODULE,)
    # A script run in another process shares nothing with the one that started it.
    assert not imported_modules(b"import subprocess\nsubprocess.run([sys.executable, 'train.py'])\n")[1]


def test_files_run_together_only_where_imports_join_them():
    files = {
        "/p/a/train.py": ("train", ("model", "data"), ()),
        "/p/a/model.py": ("model", (), ()),
        "/p/a/data.py": ("data", (), ()),
        "/p/b/demo.py": ("demo", ("stream",), ()),
        "/p/b/stream.py": ("stream", (), ()),
    }
    groups = ProcessGroups(files)
    assert groups.together("/p/a/model.py", "/p/a/data.py")  # through train.py
    assert groups.together("/p/b/demo.py", "/p/b/stream.py")
    assert not groups.together("/p/a/model.py", "/p/b/stream.py")
    assert groups.together("/p/a/model.py", "/p/elsewhere.py") is None
    # A file that imports at run time (hydra, importlib, LightningCLI) may run any file.
    groups = ProcessGroups({**files, "/p/cli.py": ("cli", (), (ANY_MODULE,))})
    assert groups.together("/p/a/model.py", "/p/b/stream.py")
    # One whose dynamic imports name a package runs that package's modules only.
    groups = ProcessGroups({**files, "/p/run.py": ("run", (), ("a",))})
    assert groups.together("/p/run.py", "/p/a/model.py") and not groups.together("/p/run.py", "/p/b/stream.py")


def test_a_dynamic_import_is_read_as_code_not_as_a_word():
    """Words in comments and docstrings import nothing (a tutorial's "simply instantiate the class"
    or "using the LightningCLI" joined a whole tutorial collection into one process); reading
    versions with importlib.metadata imports no code; a literal import_module is an import."""
    assert imported_modules(b"# see the LightningCLI docs\nx = 1  # importlib.import_module(name)\n")[1] == ()
    assert imported_modules(b'"""To create a model, simply instantiate the class."""\n')[1] == ()
    assert imported_modules(b"from importlib.metadata import version\nv = version('torch')\n")[1] == ()
    assert imported_modules(b"cli = LightningCLI(Model)\n")[1] == (ANY_MODULE,)
    assert imported_modules(b"spec = importlib.util.spec_from_file_location('m', path)\n")[1] == (ANY_MODULE,)
    assert imported_modules(b"exec(code)\n")[1] == (ANY_MODULE,)
    assert imported_modules(b"m = importlib.import_module('pkg.models.resnet')\n") == (("resnet",), ())
    assert imported_modules(b"m = importlib.import_module('pkg.models.' + name)\n")[1] == ("pkg.models",)
    assert imported_modules(b"m = importlib.import_module(f'pkg.models.{name}')\n")[1] == ("pkg.models",)
    assert imported_modules(b"m = importlib.import_module(f'{root}.models')\n")[1] == (ANY_MODULE,)
    assert imported_modules(b"m = importlib.import_module('.models', __package__)\n")[1] == (ANY_MODULE,)


def test_a_lone_script_is_its_folder_and_markers_end_the_search(tmp_path):
    (tmp_path / "proj" / "src").mkdir(parents=True)
    (tmp_path / "proj" / "setup.cfg").write_text("")
    script = tmp_path / "proj" / "src" / "train.py"
    script.write_text("")
    assert marked_root(str(script)) == os.path.realpath(tmp_path / "proj")
    lone = tmp_path / "scratch" / "train.py"
    lone.parent.mkdir()
    lone.write_text("")
    assert marked_root(str(lone)) is None or not str(marked_root(str(lone))).startswith(str(tmp_path))
    assert program_root(str(lone)) == os.path.realpath(lone.parent)
