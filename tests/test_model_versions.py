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
