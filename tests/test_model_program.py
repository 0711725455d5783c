"""Which files make the program, and which of them may run in one process (model/program.py)."""

from __future__ import annotations

import os

from ddpfix.model.program import ANY_MODULE, NOTEBOOKS, ProcessGroups, imported_modules, marked_root, program_root


def test_imported_modules_reads_every_import_form_and_no_string_or_comment():
    data = (b"import os, torch.nn as nn\nfrom .data import stream\nfrom pkg.mod import (A,\n  B)\n"
            b"try:\n    import lightning.pytorch as pl\nexcept ImportError:\n    pass\n"
            b"# import hidden\nx = 'import quoted'\nfrom a import b as c, d\n"
            b"from proj import (  # noqa: F401\n    shards,\n)\nif flag: from extra.stream import S\nimport io; import z.y\n")
    modules, dynamic = imported_modules(data)
    assert set(modules) == {"os", "torch.nn", ".data", ".data.stream", "pkg.mod", "pkg.mod.A", "pkg.mod.B",
                            "lightning.pytorch", "a", "a.b", "a.d", "proj", "proj.shards", "extra.stream",
                            "extra.stream.S", "io", "z.y"}
    assert not dynamic
    assert imported_modules(b"model = hydra.utils.instantiate(cfg.model)\n")[1] == (ANY_MODULE,)
    assert imported_modules(b"module = importlib.import_module(name)\n")[1] == (ANY_MODULE,)
    # A script run in another process shares nothing with the one that started it.
    assert not imported_modules(b"import subprocess\nsubprocess.run([sys.executable, 'train.py'])\n")[1]


FILES = ["/p/a/train.py", "/p/a/model.py", "/p/a/data.py", "/p/b/demo.py", "/p/b/stream.py"]


def groups_of(tmp_path, files: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]) -> tuple[ProcessGroups, callable]:
    """ProcessGroups over real files made under ``tmp_path`` (a program root with a pyproject.toml)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text("")
    real = {}
    for name, value in files.items():
        path = tmp_path / name.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        real[os.path.realpath(path)] = value
    return ProcessGroups(real), lambda name: os.path.realpath(tmp_path / name.lstrip("/"))


def test_files_run_together_only_where_imports_join_them(tmp_path):
    files = {
        "p/a/train.py": (("model", "data"), ()),
        "p/a/model.py": (("torch.utils.data",), ()),
        "p/a/data.py": ((), ()),
        "p/b/demo.py": (("stream",), ()),
        "p/b/stream.py": ((), ()),
    }
    groups, at = groups_of(tmp_path, files)
    assert groups.together(at("p/a/model.py"), at("p/a/data.py"))  # through train.py
    assert groups.together(at("p/b/demo.py"), at("p/b/stream.py"))
    assert not groups.together(at("p/a/model.py"), at("p/b/stream.py"))
    assert groups.together(at("p/a/model.py"), "/elsewhere.py") is None
    # A library's module (torch.utils.data) joins no file of the program named like its last part.
    groups, at = groups_of(tmp_path / "lib", {"m.py": (("torch.utils.data",), ()), "data.py": ((), ())})
    assert not groups.together(at("m.py"), at("data.py"))
    # A file that imports at run time (hydra, importlib, LightningCLI) may run any file.
    groups, at = groups_of(tmp_path / "dyn", {**files, "p/cli.py": ((), (ANY_MODULE,))})
    assert groups.together(at("p/a/model.py"), at("p/b/stream.py"))
    # One whose dynamic imports name a package runs that package's modules only.
    groups, at = groups_of(tmp_path / "bound", {**files, "p/run.py": ((), ("p.a",))})
    assert groups.together(at("p/run.py"), at("p/a/model.py")) and not groups.together(at("p/run.py"), at("p/b/stream.py"))


def test_a_notebook_is_no_module_and_joins_only_what_it_runs(tmp_path):
    """No import finds a notebook, and a loader of modules runs none; a notebook that runs others
    (``%run``: a loader itself), or a loader that names notebooks, may run them."""
    files = {
        "p/one.ipynb": (("utils",), ()),
        "p/two.ipynb": ((), ()),
        "p/utils.py": ((), ()),
        "p/one.py": ((), ()),
        "p/cli.py": ((), (ANY_MODULE,)),
    }
    groups, at = groups_of(tmp_path, files)
    assert groups.together(at("p/one.ipynb"), at("p/utils.py"))
    assert not groups.together(at("p/two.ipynb"), at("p/cli.py"))  # the loader runs modules only
    assert not groups.together(at("p/one.ipynb"), at("p/two.ipynb"))
    groups, at = groups_of(tmp_path / "import", {"q/main.py": (("one",), ()), "q/one.ipynb": ((), ())})
    assert not groups.together(at("q/main.py"), at("q/one.ipynb"))  # ``import one`` finds no notebook
    groups, at = groups_of(tmp_path / "run", {**files, "p/three.ipynb": ((), (ANY_MODULE,))})
    assert groups.together(at("p/three.ipynb"), at("p/two.ipynb"))
    groups, at = groups_of(tmp_path / "named", {**files, "p/cli.py": ((), (ANY_MODULE, NOTEBOOKS))})
    assert groups.together(at("p/cli.py"), at("p/two.ipynb"))
    assert imported_modules(b"exec(open('a.ipynb').read())\n")[1] == (ANY_MODULE, NOTEBOOKS)


def test_packages_run_their_init_and_tests_run_in_one_pytest_process(tmp_path):
    """Importing ``proj.data.loaders`` runs ``proj/__init__.py``; the files of a package run its
    ``__init__``; pytest puts every test file and ``conftest.py`` of a program in one process;
    relative imports resolve from the file's folder."""
    groups, at = groups_of(tmp_path, {
        "train.py": (("proj.data.loaders",), ()),
        "proj/__init__.py": ((), ()),
        "proj/data/__init__.py": ((), ()),
        "proj/data/loaders.py": (("..models",), ()),
        "proj/models.py": ((), ()),
        "tools/other.py": ((), ()),
        "tests/conftest.py": ((), ()),
        "tests/test_a.py": (("tools.other",), ()),
        "tests/test_b.py": ((), ()),
    })
    assert groups.together(at("proj/data/loaders.py"), at("proj/__init__.py"))
    assert groups.together(at("proj/data/loaders.py"), at("proj/models.py"))  # from ..models
    assert groups.together(at("tests/conftest.py"), at("tests/test_b.py"))
    assert groups.together(at("tests/test_b.py"), at("tools/other.py"))  # through test_a.py, same process
    assert not groups.together(at("train.py"), at("tools/other.py"))


def test_a_dynamic_import_is_read_as_code_not_as_a_word():
    """Words in comments, prose and doctests import nothing (a tutorial's "simply instantiate the
    class" or "using the LightningCLI" joined a whole tutorial collection into one process); reading
    versions with importlib.metadata imports no code; a literal import_module is an import. A loader
    referred to in any other way (an alias, an attribute, a subclass's import, entry points,
    unpickling, %run) may run anything."""
    assert imported_modules(b"# see the LightningCLI docs\nx = 1  # importlib.import_module(name)\n")[1] == ()
    assert imported_modules(b'"""To create a model, simply instantiate the class."""\n')[1] == ()
    assert imported_modules(b'"""Example:\n    >>> instantiate(cfg)\n"""\n')[1] == ()
    assert imported_modules(b"from importlib.metadata import version\nv = version('torch')\n")[1] == ()
    for code in (b"cli = LightningCLI(Model)\n", b"spec = importlib.util.spec_from_file_location('m', path)\n",
                 b"exec(code)\n", b"from importlib import import_module as load\n",
                 b"import importlib\nload = importlib.import_module\n", b"from lightning.pytorch import cli\ncli.LightningCLI()\n",
                 b"from lightning.pytorch.cli import LightningCLI\nclass MyCLI(LightningCLI):\n    pass\n",
                 b"from hydra.utils import call\n", b"eps = entry_points(group='x.models')\n",
                 b"model = torch.load(path, weights_only=False)\n", b"obj = pickle.load(handle)\n", b"%run setup.py\n",
                 b"m = importlib.import_module(f'{root}.models')\n", b"m = importlib.import_module('.models', __package__)\n"):
        assert imported_modules(code)[1] == (ANY_MODULE,), code
    assert imported_modules(b"m = importlib.import_module('pkg.models.resnet')\n") == (("pkg.models.resnet",), ())
    assert imported_modules(b"m = importlib.import_module('pkg.models.' + name)\n")[1] == ("pkg.models",)
    assert imported_modules(b"m = importlib.import_module(f'pkg.models.{name}')\n")[1] == ("pkg.models",)


HYDRA_APP = b"""import hydra\n\n\n@hydra.main(config_path="conf", config_name="config")
def objective(cfg):\n    return cfg.x ** 2\n\n\nif __name__ == "__main__":\n    objective()\n"""


def test_a_hydra_app_runs_the_programs_code_only_through_what_it_calls_or_its_configurations_name(tmp_path):
    """``@hydra.main`` alone runs no module of the program (optuna-examples' hydra example joined 70
    unrelated scripts into one process): only ``instantiate``/``call`` in the file, another name
    taken from hydra, or a ``_target_`` one of the program's configurations names (a launcher of
    its own) may."""
    from ddpfix.model.program import HYDRA_CONFIGS

    assert imported_modules(HYDRA_APP)[1] == (HYDRA_CONFIGS,)
    for code in (HYDRA_APP + b"model = hydra.utils.instantiate(cfg.model)\n", HYDRA_APP + b"hydra.utils.call(cfg.fn)\n",
                 b"from hydra.utils import instantiate as build\n" + HYDRA_APP):
        assert imported_modules(code)[1] == (ANY_MODULE,), code
    files = {"hydra/simple.py": imported_modules(HYDRA_APP), "dask/fit.py": ((), ()), "torch/train.py": ((), ())}
    groups, at = groups_of(tmp_path / "app", files)
    assert not groups.together(at("hydra/simple.py"), at("dask/fit.py"))
    assert not groups.together(at("torch/train.py"), at("dask/fit.py"))
    (tmp_path / "targets" / "hydra" / "conf").mkdir(parents=True)
    (tmp_path / "targets" / "hydra" / "conf" / "config.yaml").write_text("hydra:\n  launcher:\n    _target_: dask.fit.Run\n")
    groups, at = groups_of(tmp_path / "targets", files)
    assert groups.together(at("hydra/simple.py"), at("dask/fit.py"))


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
