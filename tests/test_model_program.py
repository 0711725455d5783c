"""Which files make the program, and which of them may run in one process (model/program.py)."""

from __future__ import annotations

import os

from ddpfix.model.program import ProcessGroups, imported_modules, marked_root, program_root


def test_imported_modules_reads_every_import_form_and_no_string_or_comment():
    data = (b"import os, torch.nn as nn\nfrom .data import stream\nfrom pkg.mod import (A,\n  B)\n"
            b"try:\n    import lightning.pytorch as pl\nexcept ImportError:\n    pass\n"
            b"# import hidden\nx = 'import quoted'\nfrom a import b as c, d\n")
    modules, dynamic = imported_modules(data)
    assert set(modules) == {"os", "nn", "data", "stream", "mod", "A", "B", "pytorch", "a", "b", "d"}
    assert not dynamic
    assert imported_modules(b"model = hydra.utils.instantiate(cfg.model)\n")[1]
    assert imported_modules(b"module = importlib.import_module(name)\n")[1]
    # A script run in another process shares nothing with the one that started it.
    assert not imported_modules(b"import subprocess\nsubprocess.run([sys.executable, 'train.py'])\n")[1]


def test_files_run_together_only_where_imports_join_them():
    files = {
        "/p/a/train.py": ("train", ("model", "data"), False),
        "/p/a/model.py": ("model", (), False),
        "/p/a/data.py": ("data", (), False),
        "/p/b/demo.py": ("demo", ("stream",), False),
        "/p/b/stream.py": ("stream", (), False),
    }
    groups = ProcessGroups(files)
    assert groups.together("/p/a/model.py", "/p/a/data.py")  # through train.py
    assert groups.together("/p/b/demo.py", "/p/b/stream.py")
    assert not groups.together("/p/a/model.py", "/p/b/stream.py")
    assert groups.together("/p/a/model.py", "/p/elsewhere.py") is None
    # A file that imports at run time (hydra, importlib, LightningCLI) may run any file.
    groups = ProcessGroups({**files, "/p/cli.py": ("cli", (), True)})
    assert groups.together("/p/a/model.py", "/p/b/stream.py")


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
