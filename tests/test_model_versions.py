"""The Lightning in force (model/versions.py): read from the project's pins, per distribution, with
where each was read; what each version has."""

from __future__ import annotations

import pytest

from ddpfix.model import versions
from ddpfix.model.versions import FEATURES, feature_problem, pins_in_text, version_in_force, version_range

RZO = "self.log(rank_zero_only=...)"


@pytest.fixture(autouse=True)
def fresh_caches():
    for cached in (versions._pins_in_folder, versions._project_pins, versions._installed_in_venv):
        cached.cache_clear()
    yield


@pytest.mark.parametrize(("spec", "has"), [
    ("==1.3.5", False), ("==1.4.0", True), (">=1.2", None), (">=1.2,<1.4", False), ("<=1.3.8", False),
    ("~=1.3.1", False), ("~=1.3", None), ("==1.4.*", True), ("==1.3.*", False), (">=2.0", True), ("=1.3", False),
    ("!=1.4.0", None), (">1.3.8", None), (">=1.4.0rc1", True),
])
def test_a_range_has_a_feature_all_through_it_or_not(spec, has):
    low, high, high_open = version_range(spec)
    pin = versions.LightningVersion("pytorch-lightning", spec, "requirements.txt:1", low, high, high_open)
    assert pin.has(RZO) is has


@pytest.mark.parametrize(("name", "text", "package", "spec", "line"), [
    ("requirements.txt", "torch==1.8.1\npytorch-lightning==1.3.5  # pinned\n", "pytorch-lightning", "==1.3.5", 2),
    ("requirements.txt", "lightning[extra]>=2.1,<2.4\n", "lightning", ">=2.1,<2.4", 1),
    ("requirements.txt", "lightning-bolts==0.3.2\nlightning-utilities>=0.8\n", None, None, None),
    ("pyproject.toml", '[project]\ndependencies = [\n  "torch",\n  "lightning>=2.2",\n]\n', "lightning", ">=2.2", 4),
    ("pyproject.toml", '[tool.poetry.dependencies]\npython = "^3.9"\npytorch-lightning = "^1.3.0"\n',
     "pytorch-lightning", ">=1.3.0,<2", 3),
    ("pyproject.toml", '[tool.poetry.dependencies]\npytorch-lightning = {version = "~1.5.2", extras = ["extra"]}\n',
     "pytorch-lightning", ">=1.5.2,<1.6", 2),
    ("setup.py", 'setup(install_requires=["pytorch_lightning>=1.0.0,<1.4", "torch"])\n', "pytorch-lightning", ">=1.0.0,<1.4", 1),
    ("setup.cfg", "[options]\ninstall_requires =\n    lightning==2.0.9\n", "lightning", "==2.0.9", 3),
    ("environment.yml", "dependencies:\n  - pytorch-lightning=1.3\n", "pytorch-lightning", "=1.3", 2),
    ("poetry.lock", '[[package]]\nname = "pytorch-lightning"\nversion = "1.3.5"\ndescription = "x"\n',
     "pytorch-lightning", "==1.3.5", 2),
    ("uv.lock", '[[package]]\nname = "lightning"\nversion = "2.3.3"\nsource = { registry = "x" }\n', "lightning", "==2.3.3", 2),
    ("Pipfile.lock", '{"default": {"pytorch-lightning": {"hashes": [], "version": "==1.2.10"}}}', "pytorch-lightning", "==1.2.10", 1),
])
def test_pins_are_read_per_distribution_with_their_line(name, text, package, spec, line):
    found = pins_in_text(text, name, name)
    if package is None:
        assert found == {}
        return
    pin = found[package]
    assert pin.spec == spec and pin.source == f"{name}:{line}"


def test_the_file_imports_decide_which_pin_applies_and_a_lock_file_beats_a_declaration(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("lightning>=2.0\npytorch-lightning>=1.0\n")
    sub = tmp_path / "src"
    sub.mkdir()
    script = sub / "train.py"
    assert version_in_force(str(script), "lightning").spec == ">=2.0"
    assert version_in_force(str(script), "pytorch_lightning").spec == ">=1.0"
    (tmp_path / "poetry.lock").write_text('[[package]]\nname = "pytorch-lightning"\nversion = "1.3.5"\n')
    versions._pins_in_folder.cache_clear()
    versions._project_pins.cache_clear()
    pin = version_in_force(str(script), "pytorch_lightning")
    assert pin.spec == "==1.3.5" and pin.source.endswith("poetry.lock:2") and pin.has(RZO) is False
    assert "has no self.log(rank_zero_only=...) (it arrived in 1.4.0)" in feature_problem(pin, RZO)


def test_the_projects_own_virtualenv_is_read_before_the_interpreters(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    site = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages"
    (site / "pytorch_lightning-1.3.8.dist-info").mkdir(parents=True)
    (tmp_path / ".venv" / "pyvenv.cfg").write_text("home = /usr\n")
    monkeypatch.setattr(versions, "_installed", lambda package: None)
    pin = version_in_force(str(tmp_path / "train.py"), "pytorch_lightning")
    assert pin.spec == "==1.3.8" and pin.has(RZO) is False


def test_an_unknown_version_is_unknown_not_new(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    monkeypatch.setattr(versions, "_installed", lambda package: None)
    assert version_in_force(str(tmp_path / "train.py"), "lightning") is None
    assert "could not be found" in feature_problem(None, RZO)
    assert set(FEATURES) >= {RZO, "strategy='ddp_notebook'"}


def _layout(root, files: dict[str, str]):
    (root / ".git").mkdir(parents=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@pytest.mark.parametrize(("files", "script", "has"), [
    # A comment naming a version is prose, not a pin.
    ({"requirements.txt": "# pytorch-lightning>=1.4 renamed the args; we stay on 1.3\npytorch-lightning==1.3.5\n"},
     "train.py", False),
    # ``-r`` includes are followed.
    ({"requirements.txt": "-r requirements/base.txt\n", "requirements/base.txt": "torch\npytorch-lightning==1.3.5\n"},
     "train.py", False),
    # The nearest folder that pins decides: a lock file further up does not override it.
    ({"poetry.lock": '[[package]]\nname = "pytorch-lightning"\nversion = "2.1.3"\n',
      "legacy/requirements.txt": "pytorch-lightning==1.3.5\n"}, "legacy/train.py", False),
    # Environment markers: either entry may be in force.
    ({"requirements.txt": 'pytorch-lightning>=2.0; python_version >= "3.8"\npytorch-lightning==1.3.5; python_version < "3.8"\n'},
     "train.py", None),
    # Two requirement files of one folder: their union.
    ({"requirements-dev.txt": "pytest\npytorch-lightning>=1.5\n", "requirements.txt": "pytorch-lightning==1.3.5\n"},
     "train.py", None),
])
def test_pins_in_real_layouts(tmp_path, monkeypatch, files, script, has):
    monkeypatch.setattr(versions, "_installed", lambda package: None)
    _layout(tmp_path, files)
    pin = version_in_force(str(tmp_path / script), ("pytorch_lightning",))
    assert pin is not None and pin.has(RZO) is has, pin


def test_a_file_that_imports_either_package_runs_with_either(tmp_path, monkeypatch):
    monkeypatch.setattr(versions, "_installed", lambda package: None)
    _layout(tmp_path, {"requirements.txt": "lightning==2.2.0\npytorch-lightning==1.3.5\n"})
    data = b"try:\n    import lightning.pytorch as pl\nexcept ImportError:\n    import pytorch_lightning as pl\n"
    imported = versions.imported_package(data)
    assert imported == ("lightning", "pytorch_lightning")
    pin = version_in_force(str(tmp_path / "train.py"), imported)
    assert pin.has(RZO) is None and "1.3.5" in pin.spec
    # One of the two unknown (neither pinned nor installed): the answer is unknown.
    _layout(tmp_path / "other", {"requirements.txt": "lightning==2.2.0\n"})
    assert version_in_force(str(tmp_path / "other" / "train.py"), imported) is None


def test_a_notebook_that_installs_lightning_runs_with_what_it_installs(tmp_path, monkeypatch):
    """``%pip install "pytorch-lightning==1.6.5"`` in a cell: the notebook runs with 1.6.5 whatever
    the project's requirements say (review round 15); a notebook that installs nothing, or installs
    Lightning unpinned, takes the project's pin."""
    import json

    monkeypatch.setattr(versions, "_installed", lambda package: None)
    _layout(tmp_path, {"requirements.txt": "pytorch-lightning>=1.9\n"})

    def notebook(name: str, first_cell: str) -> str:
        cells = [first_cell, "import pytorch_lightning as pl"]
        (tmp_path / name).write_text(json.dumps({"cells": [
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c.splitlines(True)}
            for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
        return str(tmp_path / name)

    pinned = version_in_force(notebook("a.ipynb", '%pip install -q "pytorch-lightning==1.6.5" torchvision'),
                              "pytorch_lightning")
    where, line = pinned.source.rsplit(":", 1)
    assert pinned.spec == "==1.6.5" and where.endswith("a.ipynb") and line.isdigit(), pinned.source
    assert pinned.has("strategy='ddp_notebook'") is False
    shell = version_in_force(notebook("b.ipynb", "!pip install pytorch-lightning==1.9.5"), "pytorch_lightning")
    assert shell.spec == "==1.9.5"
    unpinned = version_in_force(notebook("c.ipynb", "!pip install pytorch-lightning"), "pytorch_lightning")
    assert unpinned.spec == ">=1.9"


def test_a_folder_of_requirement_files_pins(tmp_path, monkeypatch):
    """``requirements/base.txt`` (read by ``setup.py``, or named by a ``-r``) pins like
    ``requirements.txt`` (review round 15); several files of the folder give their union."""
    monkeypatch.setattr(versions, "_installed", lambda package: None)
    _layout(tmp_path, {"setup.py": "from setuptools import setup\nsetup(install_requires=open('requirements/base.txt').read().split())\n",
                       "requirements/base.txt": "torch\npytorch-lightning==1.4.9\n",
                       "requirements/docs.txt": "sphinx\n"})
    pin = version_in_force(str(tmp_path / "src" / "train.py"), "pytorch_lightning")
    assert pin is not None and pin.spec == "==1.4.9" and pin.has("self.log_dict(rank_zero_only=...)") is False, pin


@pytest.mark.parametrize(("name", "text"), [
    ("dev-requirements.txt", "pytorch-lightning==1.3.8\n"),
    ("environment-gpu.yml", "name: gpu\ndependencies:\n  - pip:\n    - pytorch-lightning==1.3.8\n"),
    ("conda.yaml", "name: mlflow\ndependencies:\n  - python=3.8\n  - pip:\n    - pytorch-lightning==1.3.8\n"),
    ("Dockerfile", "FROM python:3.8\nRUN pip install torch==1.8.1 pytorch-lightning==1.3.8\n"),
    ("tox.ini", "[testenv]\ndeps =\n    torch\n    pytorch-lightning==1.3.8\n"),
    ("MLproject", "name: train\nconda_env: conda.yaml\n# pip install pytorch_lightning==1.3.8\n"),
])
def test_pins_wherever_the_project_installs_lightning(tmp_path, monkeypatch, name, text):
    """A pin in another requirements file's name, a conda environment of another name, a Dockerfile's
    or tox's install is the version the project runs with: a keyword it lacks is never written
    (review helper-45, c03: ddpfix judged by its own installed 2.6.6 and wrote rank_zero_only=True)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / name).write_text(text)
    (tmp_path / "model.py").write_text("import pytorch_lightning as pl\n")
    version = version_in_force(str(tmp_path / "model.py"), "pytorch-lightning")
    assert version is not None and version.has(RZO) is False, (name, version)
    assert name in version.source
