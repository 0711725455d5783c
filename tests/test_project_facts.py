"""Facts from the whole project whatever paths are named (project.py), and discovery that never
leaves the folder it was given, through the real command line."""

from __future__ import annotations

import hashlib
import os
import re
import shutil

from conftest import FIXTURES
from test_precommit import MODEL, TRAIN

MONITORED_LINE = b"monitored by EarlyStopping"
MOVED = b'        self.log("val_loss", loss, sync_dist=True)\n'
MARKED = b'self.log("val_loss", loss, rank_zero_only=True)'


def project(root, marker="pyproject"):
    root.mkdir(parents=True, exist_ok=True)
    if marker == "pyproject":
        (root / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    elif marker == "git":
        (root / ".git").mkdir()
    (root / "model.py").write_bytes(MODEL)
    (root / "train.py").write_bytes(TRAIN)
    return root


def model_lines(proc) -> list[bytes]:
    return [line for line in proc.stdout.splitlines() if b"model.py:" in line]


def test_one_file_named_decides_as_the_whole_project_does(tmp_path, run_cli):
    for marker in ("pyproject", "git"):
        root = project(tmp_path / marker, marker)
        whole = run_cli("--check", "-v", ".", cwd=root)
        alone = run_cli("--check", "-v", "model.py", cwd=root)
        assert model_lines(alone) == model_lines(whole) and len(model_lines(whole)) == 1, marker
        assert b"DDP003 [*]" in alone.stdout and MONITORED_LINE in alone.stdout, alone.stdout
        # Named from elsewhere, and from inside a subfolder of the project: the same decision.
        deeper = run_cli("--check", "-v", str(root / "model.py"), cwd="/")
        assert b"DDP003 [*]" in deeper.stdout and MONITORED_LINE in deeper.stdout
        written = tmp_path / f"{marker}-written"
        shutil.copytree(root, written)
        assert run_cli("--write", "model.py", cwd=written).returncode == 0
        assert run_cli("--write", ".", cwd=root).returncode == 0
        assert (written / "model.py").read_bytes() == (root / "model.py").read_bytes()
        assert MOVED in (root / "model.py").read_bytes() and MARKED not in (root / "model.py").read_bytes()


def test_a_lone_script_is_a_whole_program(tmp_path, run_cli):
    """No pyproject.toml, setup.cfg, setup.py or .git above: the named file's folder is the program,
    so ``ddpfix model.py`` decides as ``ddpfix .`` does there (the monitor in train.py is read)."""
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "model.py").write_bytes(MODEL)
    (lone / "train.py").write_bytes(TRAIN)
    whole = run_cli("--check", "-v", ".", cwd=lone)
    alone = run_cli("--check", "-v", "model.py", cwd=lone)
    assert model_lines(alone) == model_lines(whole) and b"DDP003 [*]" in alone.stdout, alone.stdout
    assert MONITORED_LINE in alone.stdout and b"part of the project" not in alone.stdout
    assert run_cli("--write", "model.py", cwd=lone).returncode == 0
    assert MOVED in (lone / "model.py").read_bytes()
    # setup.py and setup.cfg mark a project too: a script in a subfolder reads the package beside it.
    for marker in ("setup.py", "setup.cfg"):
        root = tmp_path / marker.replace(".", "-")
        (root / "scripts").mkdir(parents=True)
        (root / marker).write_text("")
        (root / "model.py").write_bytes(MODEL)
        (root / "scripts" / "train.py").write_bytes(TRAIN)
        proc = run_cli("--check", "-v", "model.py", cwd=root)
        assert b"DDP003 [*]" in proc.stdout and MONITORED_LINE in proc.stdout, (marker, proc.stdout)


def test_a_script_above_an_unmarked_package_is_of_its_program(tmp_path, run_cli):
    """No project marker, ``train.py`` beside ``src/`` importing ``src.data`` (``python train.py`` puts
    the top folder first on sys.path): one program, whether the folder or the data file is named. The
    script's switch of the default device to CUDA makes the CUDA-generator fix unsafe (review
    helper-42, g07: each folder was a program of its own, and the fix was safe). A script that does
    not import the package leaves it a program of its own (the fix stays safe)."""
    top = tmp_path / "work"
    (top / "src").mkdir(parents=True)
    (top / "src" / "__init__.py").write_text("")
    (top / "src" / "data.py").write_bytes(
        b"import torch\nfrom torch.utils.data import DataLoader\n\n\ndef make_loader(ds):\n"
        b"    g = torch.Generator(device='cuda')\n    return DataLoader(ds, shuffle=True, generator=g)\n")
    (top / "train.py").write_bytes(b"import torch\nfrom src.data import make_loader\n\n"
                                   b"torch.set_default_device('cuda')\nloader = make_loader(list(range(8)))\n")
    for named in (".", "src/data.py"):
        proc = run_cli("--check", "-v", named, cwd=top)
        assert b"DDP002 [~]" in proc.stdout and b"train.py:4" in proc.stdout, (named, proc.stdout)
    (top / "train.py").write_bytes(b"import torch\n\ntorch.set_default_device('cuda')\n")
    proc = run_cli("--check", "src/data.py", cwd=top)
    assert b"DDP002 [*]" in proc.stdout, proc.stdout


def test_a_package_of_another_program_of_the_run_runs_with_its_importer(tmp_path, run_cli):
    """A monorepo: apps/trainer (its own pyproject.toml) imports datakit, a package of
    packages/datakit (another pyproject.toml, src layout). Named together, the two programs of the
    run are joined by that import: the trainer's switch of the default device to CUDA makes the
    package's CUDA-generator fix unsafe, as the finding's message already said (review helper-42,
    g06: the fix was safe)."""
    root = tmp_path / "mono"
    (root / ".git").mkdir(parents=True)
    package = root / "packages" / "datakit"
    (package / "src" / "datakit").mkdir(parents=True)
    (package / "pyproject.toml").write_text('[project]\nname = "datakit"\n')
    (package / "src" / "datakit" / "__init__.py").write_text("from .loaders import seeded_loader\n")
    (package / "src" / "datakit" / "loaders.py").write_bytes(
        b"import torch\nfrom torch.utils.data import DataLoader\n\n\ndef seeded_loader(ds):\n"
        b"    g = torch.Generator(device='cuda')\n    return DataLoader(ds, shuffle=True, generator=g)\n")
    app = root / "apps" / "trainer"
    app.mkdir(parents=True)
    (app / "pyproject.toml").write_text('[project]\nname = "trainer"\n')
    (app / "train.py").write_bytes(b"import torch\nfrom datakit import seeded_loader\n\n"
                                   b"torch.set_default_device('cuda')\nloader = seeded_loader(list(range(8)))\n")
    proc = run_cli("--check", "-v", ".", cwd=root)
    assert b"DDP002 [~]" in proc.stdout and b"apps/trainer/train.py:4" in proc.stdout, proc.stdout
    (app / "train.py").write_bytes(b"import torch\n\ntorch.set_default_device('cuda')\n")
    proc = run_cli("--check", ".", cwd=root)
    assert b"DDP002 [*]" in proc.stdout, proc.stdout


def test_a_switch_a_configuration_names_for_a_loader_counts(tmp_path, run_cli):
    """A hydra app calls what its configuration names (``call(cfg.runtime)`` with ``_target_:
    torch.set_default_device``): that is a switch of the default device, and the CUDA-generator fix
    of the data file it runs is unsafe, naming the configuration's line (review helper-42, g02). The
    same app whose configuration names no switch keeps the fix safe."""
    root = tmp_path / "app"
    (root / "conf").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "app"\n')
    (root / "data.py").write_bytes(
        b"import torch\nfrom torch.utils.data import DataLoader\n\n\ndef make_loader(ds):\n"
        b"    g = torch.Generator(device='cuda')\n    return DataLoader(ds, shuffle=True, generator=g)\n")
    (root / "train.py").write_bytes(
        b"import hydra\nfrom hydra.utils import call\n\nfrom data import make_loader\n\n\n"
        b"@hydra.main(config_path='conf', config_name='config', version_base=None)\ndef main(cfg):\n"
        b"    call(cfg.runtime)\n    loader = make_loader(list(range(8)))\n")
    (root / "conf" / "config.yaml").write_text("runtime:\n  _target_: torch.set_default_device\n  device: cuda\n")
    proc = run_cli("--check", "-v", ".", cwd=root)
    assert b"DDP002 [~]" in proc.stdout and b"conf/config.yaml:2" in proc.stdout, proc.stdout
    # Without one in its own folder, a configuration its command line names (``--config-dir``,
    # ``hydra.searchpath``) may still call it (review helper-44, c13/c20).
    (root / "conf" / "config.yaml").write_text("runtime:\n  _target_: torch.manual_seed\n  seed: 0\n")
    proc = run_cli("--check", "-v", ".", cwd=root)
    assert b"DDP002 [~]" in proc.stdout and b"`--config-dir`" in proc.stdout, proc.stdout
    # A hydra app that calls nothing a configuration names keeps the fix safe.
    (root / "train.py").write_bytes(
        b"import hydra\n\nfrom data import make_loader\n\n\n"
        b"@hydra.main(config_path='conf', config_name='config', version_base=None)\ndef main(cfg):\n"
        b"    loader = make_loader(list(range(8)))\n")
    proc = run_cli("--check", ".", cwd=root)
    assert b"DDP002 [*]" in proc.stdout, proc.stdout


def test_a_with_over_a_call_not_known_to_enter_no_device_is_a_switch(tmp_path, run_cli):
    """``with accelerator_device():`` where a helper of another file returns ``torch.device("cuda")``
    enters that device: the CUDA-generator fix is unsafe, naming the ``with`` (review helper-42, g01).
    ``with torch.no_grad():`` and ``with open(...)`` enter none: the fix stays safe."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (root / "utils.py").write_bytes(b"import torch\n\n\ndef accelerator_device():\n    return torch.device('cuda')\n")
    body = (b"import torch\nfrom torch.utils.data import DataLoader\nfrom utils import accelerator_device\n\n\n"
            b"def main():\n    g = torch.Generator(device='cuda')\n    with %s:\n"
            b"        for batch in DataLoader(list(range(8)), shuffle=True, generator=g):\n            pass\n")
    (root / "train.py").write_bytes(body % b"accelerator_device()")
    proc = run_cli("--check", "-v", "train.py", cwd=root)
    assert b"DDP002 [~]" in proc.stdout and b"with accelerator_device(...) (train.py:8)" in proc.stdout, proc.stdout
    for known in (b"torch.no_grad()", b"open('log.txt', 'w') as log"):
        (root / "train.py").write_bytes(body % known)
        proc = run_cli("--check", "train.py", cwd=root)
        assert b"DDP002 [*]" in proc.stdout, (known, proc.stdout)


def test_files_left_out_of_fixing_are_still_read_for_facts(tmp_path, run_cli):
    """A script the settings exclude or .gitignore leaves out is still code of the program: its
    switch of the default device to CUDA makes the data file's CUDA generator fix unsafe, whether
    the folder or the data file is named (review helper-42, g04/g05: the fix was safe). The same
    tree without the switch keeps its safe fix."""
    data = (b"import torch\nfrom torch.utils.data import DataLoader\n\n\ndef make_loader(ds):\n"
            b"    g = torch.Generator(device='cuda')\n    return DataLoader(ds, shuffle=True, generator=g)\n")
    switch = b"import torch\nimport data\n\ntorch.set_default_device('cuda')\nloader = data.make_loader(list(range(8)))\n"
    for how in ("gitignore", "exclude"):
        root = tmp_path / how
        (root / "experiments").mkdir(parents=True)
        (root / "data.py").write_bytes(data)
        (root / "pyproject.toml").write_text('[project]\nname = "demo"\n' + (
            '[tool.ddpfix]\nextend-exclude = ["experiments"]\n' if how == "exclude" else ""))
        if how == "gitignore":
            (root / ".git").mkdir()
            (root / ".gitignore").write_text("experiments/\n")
        (root / "experiments" / "train_gpu.py").write_bytes(b"import sys\nsys.path.insert(0, '..')\n" + switch)
        for named in (".", "data.py"):
            proc = run_cli("--check", "-v", named, cwd=root)
            assert b"DDP002 [~]" in proc.stdout, (how, named, proc.stdout)
            assert b"train_gpu.py" in proc.stdout, (how, named, proc.stdout)
        (root / "experiments" / "train_gpu.py").write_bytes(b"import data\n")
        proc = run_cli("--check", ".", cwd=root)
        assert b"DDP002 [*]" in proc.stdout, (how, proc.stdout)


def test_stdin_without_a_file_name_is_the_one_partial_view(tmp_path, run_cli):
    (tmp_path / "train.py").write_bytes(TRAIN)
    proc = run_cli("-", cwd=tmp_path, input=MODEL)
    assert proc.returncode == 1 and MOVED not in proc.stdout and proc.stdout.count(b"rank_zero_only") == 0, proc.stdout
    proc = run_cli("--check", "-v", "-", cwd=tmp_path, input=MODEL)
    assert b"DDP003 [~]" in proc.stdout and b"part of the project" in proc.stdout, proc.stdout


def test_stdin_takes_its_projects_facts_with_the_buffer_in_its_files_place(tmp_path, run_cli):
    root = project(tmp_path / "proj")
    proc = run_cli("-", "--stdin-filename", "model.py", cwd=root, input=MODEL)
    assert proc.returncode == 0 and MOVED in proc.stdout, proc.stderr
    # The buffer replaces model.py in the facts: on disk model.py still has a monitor of val_loss,
    # the buffer (what the editor holds) has none, and train.py no longer monitors it. Read from the
    # buffer, nothing monitors val_loss, so rank_zero_only=True is safe; read from disk, it is not.
    (root / "model.py").write_bytes(MODEL + b'\ncallbacks = [EarlyStopping(monitor="val_loss")]\n')
    (root / "train.py").write_bytes(TRAIN.replace(b'callbacks=[EarlyStopping(monitor="val_loss")]', b"callbacks=[]"))
    proc = run_cli("-", "--stdin-filename", "model.py", cwd=root, input=MODEL)
    assert proc.returncode == 0 and MARKED in proc.stdout, proc.stdout + proc.stderr


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_link_out_of_the_folder_is_never_read_or_written(tmp_path, run_cli):
    outside = tmp_path / "outside"
    outside.mkdir()
    # The file out there is buggy (a write would change it) and monitors val_loss (a fact read
    # from it would turn model.py's fix into the sync_dist move).
    victim = outside / "victim.py"
    victim.write_bytes(TRAIN + b'\nimport torch\nfrom torch.utils.data import DataLoader\n'
                       b'DataLoader(range(3), generator=torch.Generator("cuda"))\n')
    before = sha256(victim)
    root = tmp_path / "proj"
    root.mkdir()
    (root / "model.py").write_bytes(MODEL)
    os.symlink("../outside/victim.py", root / "train.py")
    os.symlink("model.py", root / "alias.py")  # a link inside the folder: the same file, checked once
    proc = run_cli("--write", "--unsafe-fixes", ".", cwd=root)
    assert sha256(victim) == before
    err = proc.stderr.decode()
    assert "note: train.py: skipped: a symbolic link to" in err and "victim.py" in err, err
    assert b"train.py" not in proc.stdout
    fixed = (root / "model.py").read_bytes()
    assert MARKED in fixed and MOVED not in fixed  # the victim's monitor was not read
    # A file named explicitly is still taken, link or not (as before).
    named = run_cli("--check", "-v", "train.py", cwd=root)
    assert b"train.py:" in named.stdout and sha256(victim) == before


def test_project_view_names_the_roots_the_files_to_read_and_whether_facts_are_whole(tmp_path, monkeypatch):
    """The one function the CLI (and later the language server) asks."""
    import ddpfix.project as project_module
    from ddpfix.project import project_view
    from ddpfix.settings import Flags, Resolver

    root = project(tmp_path / "proj")
    (root / "pkg").mkdir()
    (root / "pkg" / "util.py").write_text("x = 1\n")
    (root / "build").mkdir()
    (root / "build" / "old.py").write_text("x = 1\n")  # a default exclude: not part of the facts
    monkeypatch.chdir(root)
    view = project_view(["model.py"], ["model.py"], Resolver(Flags()))
    assert view.roots == (str(root.resolve()),) and view.whole and view.partial_because is None
    assert view.others == ("pkg/util.py", "train.py")
    # A named folder that is the project: nothing more to read.
    assert project_view(["."], ["model.py", "pkg/util.py", "train.py"], Resolver(Flags())).others == ()
    monkeypatch.setattr(project_module, "MAX_PROJECT_FILES", 2)
    big = project_view(["model.py"], ["model.py"], Resolver(Flags()))
    assert not big.whole and "over 2 files" in big.partial_because
    monkeypatch.setattr(project_module, "MAX_PROJECT_FILES", 20_000)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lone.py").write_text("x = 1\n")
    alone = project_view(["lone.py"], ["lone.py"], Resolver(Flags()))
    # No marker above: the named file's folder is the program, read whole (the project below it too).
    assert alone.roots == (str(tmp_path.resolve()),) and alone.whole and alone.partial_because is None
    assert "proj/model.py" in alone.others and "lone.py" not in alone.others


def test_a_fifo_in_the_project_blocks_neither_the_facts_nor_the_run(tmp_path, run_cli):
    root = project(tmp_path / "proj")
    os.mkfifo(root / "pipe.py")
    alone = run_cli("--check", "-v", "model.py", cwd=root, timeout=60)  # pipe.py read for facts only: not reported
    assert alone.returncode == 1 and b"pipe.py" not in alone.stdout + alone.stderr and MONITORED_LINE in alone.stdout
    whole = run_cli("--check", "-v", ".", cwd=root, timeout=60)
    assert whole.returncode == 2 and b"pipe.py: E902 cannot read: not a regular file" in whole.stderr


def test_a_tutorials_iterable_dataset_does_not_bear_on_another_tutorial(tmp_path, run_cli):
    """Two unrelated scripts of one collection: one streams an IterableDataset (and mentions the
    LightningCLI and "instantiate" in its prose, which imports nothing); the other's epoch log gets
    its safe fix. A file that really imports at run time joins them again."""
    root = project(tmp_path / "tutorials")
    (root / "train.py").unlink()
    (root / "stream.py").write_text(
        '"""Simply instantiate the class; see also the LightningCLI."""\n'
        "from torch.utils.data import IterableDataset\n\n\n"
        "class Stream(IterableDataset):  # importlib.import_module would load any module\n"
        "    def __iter__(self):\n        yield from range(3)\n")
    (root / "model.py").write_bytes(MODEL.replace(b'        if self.trainer.is_global_zero:\n            self.log(',
                                                  b'        self.log('))
    proc = run_cli("--check", "-v", "--select", "DDP004", ".", cwd=root)
    assert b"DDP004 [*]" in proc.stdout, proc.stdout
    (root / "runner.py").write_text("import importlib, sys\nimportlib.import_module(sys.argv[1])\n")
    proc = run_cli("--check", "-v", "--select", "DDP004", ".", cwd=root)
    assert b"DDP004 [~]" in proc.stdout and b"names iterable data" in proc.stdout, proc.stdout


def test_what_a_cli_config_names_bears_on_the_program(tmp_path, run_cli):
    """LightningCLI loads the classes its YAML names: a WeightAveraging callback named only in a
    config makes a tensor attribute's buffer fix unsafe (weight averaging averages buffers)."""
    root = project(tmp_path / "cli")
    (root / "train.py").unlink()
    (root / "model.py").write_text(
        "import lightning as L\nimport torch\n\n\nclass Model(L.LightningModule):\n"
        "    def __init__(self):\n        super().__init__()\n        self.layer = torch.nn.Linear(4, 1)\n"
        "        self.__mask = torch.zeros(4, dtype=torch.bool)\n\n"
        "    def forward(self, x):\n        return self.layer(x.masked_fill(self.__mask, 0))\n")
    (root / "cli.py").write_text("from lightning.pytorch.cli import LightningCLI\n\nLightningCLI()\n")
    proc = run_cli("--check", "-v", "--select", "DDP007", ".", cwd=root)
    assert b"DDP007 [*]" in proc.stdout, proc.stdout
    (root / "configs").mkdir()
    (root / "configs" / "ema.yaml").write_text(
        "trainer:\n  callbacks:\n    - class_path: lightning.pytorch.callbacks.WeightAveraging\n")
    proc = run_cli("--check", "-v", "--select", "DDP007", ".", cwd=root)
    assert b"DDP007 [~]" in proc.stdout and b"configs/ema.yaml:3 names weight averaging" in proc.stdout, proc.stdout


def test_a_notebooks_run_magic_joins_the_script_it_runs(tmp_path, run_cli):
    """IPython's ``%run stream.py`` runs the script in the kernel's process: its IterableDataset
    bears on the model the notebook trains (the magic is not in the code the facts read)."""
    import json

    root = project(tmp_path / "nb")
    (root / "train.py").unlink()
    (root / "model.py").write_bytes(MODEL.replace(b'        if self.trainer.is_global_zero:\n            self.log(',
                                                  b'        self.log('))
    (root / "stream.py").write_text("from torch.utils.data import IterableDataset\n\n\nclass Stream(IterableDataset):\n"
                                    "    def __iter__(self):\n        yield from range(3)\n")

    def notebook(first: str) -> str:
        cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": [text]}
                 for text in (first, "from model import Model\n")]
        return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})

    (root / "explore.ipynb").write_text(notebook("import math\n"))
    proc = run_cli("--check", "--select", "DDP004", ".", cwd=root)
    assert b"DDP004 [*]" in proc.stdout, proc.stdout
    (root / "explore.ipynb").write_text(notebook("%run stream.py\n"))
    proc = run_cli("--check", "-v", "--select", "DDP004", ".", cwd=root)
    assert b"DDP004 [~]" in proc.stdout and b"names iterable data" in proc.stdout, proc.stdout


def test_truncated_back_propagation_named_in_another_file_voids_the_optimizer_index(tmp_path, run_cli):
    """Lightning 1.x passes ``hiddens``, not the optimizer's index, as a step's third argument when
    truncated back-propagation is on, which a Trainer in another file may turn on: a branch on that
    argument is then not proven the same on every rank."""
    root = project(tmp_path / "bptt")
    (root / "train.py").unlink()
    source = (FIXTURES / "epoch-log-sync" / "optimizer_index_branches.py").read_bytes()
    (root / "model.py").write_bytes(source)
    proc = run_cli("--check", "--select", "DDP004", ".", cwd=root)
    assert proc.stdout.count(b"DDP004 [*]") == 2, proc.stdout
    (root / "train.py").write_text("import pytorch_lightning as pl\nfrom model import GAN\n\n"
                                   "pl.Trainer(truncated_bptt_steps=2).fit(GAN())\n")
    proc = run_cli("--check", "-v", "--select", "DDP004", ".", cwd=root)
    assert b"DDP004 [*]" not in proc.stdout and b"it is under a `if`" in proc.stdout, proc.stdout


HELPER_MODEL = b'''import lightning as L
from torch import nn


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self._report(nn.functional.mse_loss(self.net(x), y))

    def _report(self, loss):
        self.log("val_loss", loss)
'''


def test_a_helper_log_is_safe_only_while_no_other_file_of_the_program_names_the_helper(tmp_path, run_cli):
    """A helper's log is proven through its callers: another file that runs with the module and names
    the helper (a callback's ``pl_module._report(...)``, a ``getattr`` string) may call it on some
    ranks only, so the fix turns unsafe and the reason names that file and line; an unrelated script
    of the same project (not importing the module) does not."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (root / "model.py").write_bytes(HELPER_MODEL)
    (root / "other.py").write_text("class Probe:\n    def run(self, module):\n        module._report(0.0)\n")
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"[*]" in proc.stdout, proc.stdout

    (root / "callback.py").write_text(
        "import lightning as L\nfrom model import Model\n\n\nclass Plot(L.Callback):\n"
        "    def on_validation_epoch_end(self, trainer, pl_module):\n"
        "        if trainer.is_global_zero:\n            pl_module._report(0.0)\n")
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"[*]" not in proc.stdout, proc.stdout
    assert b"another file may call `_report`: callback.py:8" in proc.stdout, proc.stdout

    (root / "callback.py").write_text("from model import Model\n\nNAME = '_report'\n")
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"another file may call `_report`: callback.py:3" in proc.stdout, proc.stdout


MODULE_HOLDER = b'''import lightning as L
from torch import nn


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 1)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.head(x), y))
'''


def test_a_store_in_another_file_that_may_rebind_what_the_model_runs_makes_the_fix_unsafe(tmp_path, run_cli):
    """Another file that runs with the model stores on objects and modules: a store that may bind
    the model's layer class, a method or a function its values go through (``setattr(nn, "Linear",
    Mine)``, ``setattr(numpy, name, kind)`` with a name made at run time, ``builtins.setattr``,
    ``object.__setattr__``, ``vars(obj).update(...)``, ``setattr`` handed around) makes the fix
    unsafe, naming the line; another class's stores on its own instance (``self.__dict__ = self``
    in a dict that serves attributes) do not."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (root / "model.py").write_bytes(MODULE_HOLDER)
    (root / "attrs.py").write_text(
        "import model\n\n\nclass AttrDict(dict):\n    def __init__(self, *a):\n"
        "        super().__init__(*a)\n        self.__dict__ = self\n        setattr(self, 'extra', 1)\n")
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"DDP004 [*]" in proc.stdout, proc.stdout

    patch = "import numpy\nimport builtins\nimport model\nfrom torch import nn\nfor name, kind in KINDS.items():\n    {}\n"
    for store in ["setattr(numpy, name, kind)", "setattr(nn, 'Linear', kind)", "builtins.setattr(nn, name, kind)",
                  "object.__setattr__(numpy, name, kind)", "vars(model).update(Model=kind)",
                  "store = setattr; store(numpy, name, kind)", "nn.functional.mse_loss = kind"]:
        (root / "compat.py").write_text(patch.format(store))
        proc = run_cli("--check", "-v", "model.py", cwd=root)
        assert b"DDP004 [*]" not in proc.stdout, (store, proc.stdout)
        assert b"(compat.py:6)" in proc.stdout or b"compat.py:6 " in proc.stdout, (store, proc.stdout)


def test_a_store_whose_names_are_known_or_a_namespace_only_read_rebinds_nothing_else(tmp_path, run_cli):
    """What another file stores is read for what it can bind: a ``setattr`` whose name is a loop's
    over written strings stores those names alone (pl_bolts' ``for tp_name, tp_ins in [("object",
    object), ...]: setattr(numpy, tp_name, tp_ins)``), and a ``vars(args)`` or ``args.__dict__`` that
    is only unpacked, iterated, searched or copied stores nothing, nor does one of a namespace
    argparse made (``parse_known_args``'s too), nor a loop after a star import. The fix stays safe. The same loop
    naming what the model runs (``Linear``), a loop name bound again in its body or over a dict's
    keys, and a namespace updated or stored into, may rebind it: unsafe, naming the line."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (root / "model.py").write_bytes(MODULE_HOLDER)
    head = "import argparse\nimport numpy\nimport model\nfrom torch import nn\nargs = argparse.ArgumentParser().parse_args()\n"
    harmless = ["for tp_name, tp_ins in [('object', object), ('bool', bool)]:\n    setattr(numpy, tp_name, tp_ins)",
                "for name in ('float', 'int'):\n    setattr(numpy, name, float)",
                # a star import runs where it stands: before the loop it cannot rebind the loop's name
                "from os.path import *\nfor name in ('float', 'int'):\n    setattr(numpy, name, float)",
                "model.Model(**vars(args))", "model.Model(**args.__dict__)", "print(sorted(k for k in vars(args)))",
                "print('lr' in vars(args), {**vars(args)}, dict(vars(args)), vars(args)['lr'])",
                "opt, unknown = argparse.ArgumentParser().parse_known_args()\nconf = vars(opt)\nconf['x'] = 1",
                "conf = vars(argparse.ArgumentParser().parse_args())\nconf.update(x=1)",
                "options = argparse.Namespace()\noptions.__dict__.update(**{'model': argparse.Namespace(lr=1)})"]
    for line in harmless:
        (root / "compat.py").write_text(head + line + "\n")
        proc = run_cli("--check", "-v", "model.py", cwd=root)
        assert b"DDP004 [*]" in proc.stdout, (line, proc.stdout)

    harmful = ["for tp_name, tp_ins in [('object', object), ('Linear', object)]:\n    setattr(nn, tp_name, tp_ins)",
               "for name in ('float', 'int'):\n    name = name.title()\n    setattr(nn, name, float)",
               "for name in {'Linear': 1}:\n    setattr(nn, name, float)",
               # review helper-39: every way Python binds the loop's name counts
               "for name in ('float', 'int'):\n    from torch.nn import Linear as name\n    setattr(nn, name, float)",
               "for name in ('float', 'int'):\n    def name():\n        pass\n    setattr(nn, name, float)",
               "for name in ('float', 'int'):\n    try:\n        pass\n    except Exception as name:\n        pass\n"
               "    setattr(nn, 'Linear' if name is None else name, float)",
               "for name in ('float', 'int'):\n    from os.path import *\n    setattr(nn, name, float)",
               "vars(nn).update(x=1)", "vars(nn)['forward'] = 1", "namespace = vars(nn)",
               "nn.__dict__.update(x=1)"]
    for line in harmful:
        (root / "compat.py").write_text(head + line + "\n")
        proc = run_cli("--check", "-v", "model.py", cwd=root)
        assert b"DDP004 [*]" not in proc.stdout, (line, proc.stdout)
        assert re.search(rb"compat\.py:\d+\b", proc.stdout), (line, proc.stdout)


def test_argparses_namespace_in_another_file_reaches_no_method_by_name(tmp_path, run_cli):
    """``vars(args)`` of the namespace ``parser.parse_args()`` made, in the script that builds the
    model, reads no method by a name made at run time: the helper's log stays safe. ``vars`` of a
    class (``vars(Model)``) holds the methods: unsafe, naming the line."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (root / "model.py").write_bytes(HELPER_MODEL)
    script = ("import argparse\nfrom model import Model\n\nparser = argparse.ArgumentParser()\n"
              "args = parser.parse_args()\nmodel = Model(**{})\nprint({})\n")
    (root / "train.py").write_text(script.format("{}", "vars(args)"))
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"DDP004 [*]" in proc.stdout, proc.stdout

    (root / "train.py").write_text(script.format("{}", "vars(Model)"))
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"DDP004 [*]" not in proc.stdout, proc.stdout
    assert b"train.py:7" in proc.stdout, proc.stdout


_CUDA_LOADER = (b"import torch\nfrom torch.utils.data import DataLoader\n\n\ndef make_loader(ds):\n"
                b"    g = torch.Generator(device='cuda')\n    return DataLoader(ds, shuffle=True, generator=g)\n")


def _monorepo(root, package_layout: str) -> None:
    """``packages/datakit`` (its own pyproject.toml) holding ``make_loader`` with a CUDA generator,
    laid out as a regular package, a namespace package (no ``__init__.py``) or a single module."""
    (root / ".git").mkdir(parents=True)
    package = root / "packages" / "datakit"
    package.mkdir(parents=True)
    (package / "pyproject.toml").write_text('[project]\nname = "datakit"\n')
    if package_layout == "module":
        (package / "datakit.py").write_bytes(_CUDA_LOADER)
        return
    (package / "src" / "datakit").mkdir(parents=True)
    if package_layout == "package":
        (package / "src" / "datakit" / "__init__.py").write_text("")
    (package / "src" / "datakit" / "loaders.py").write_bytes(_CUDA_LOADER)


def test_a_loader_may_run_a_module_of_another_program_of_the_run(tmp_path, run_cli):
    """A module named at run time may be any importable one, another program's of the run too:
    ``importlib.import_module(name)`` and hydra's ``instantiate`` in apps/trainer may run
    packages/datakit's loader after the trainer made CUDA the default device, so the CUDA-generator
    fix there is unsafe (review helper-43, c19/c01: it was safe; c23: the same hole made a DDP004 fix
    hang). A trainer that loads nothing keeps the package's fix safe."""
    root = tmp_path / "mono"
    _monorepo(root, "package")
    app = root / "apps" / "trainer"
    app.mkdir(parents=True)
    (app / "pyproject.toml").write_text('[project]\nname = "trainer"\n')
    for loading in (b"import importlib\n\nmodule = importlib.import_module(NAME)\n",
                    b"from hydra.utils import instantiate\n\nloader = instantiate(CFG)\n", b"\n"):
        (app / "train.py").write_bytes(b"import torch\n" + loading + b"torch.set_default_device('cuda')\n")
        proc = run_cli("--check", "-v", ".", cwd=root)
        expected = b"DDP002 [*]" if loading == b"\n" else b"DDP002 [~]"
        assert expected in proc.stdout, (loading, proc.stdout)
        if loading != b"\n":
            assert b"apps/trainer/train.py:" in proc.stdout, proc.stdout


def test_a_namespace_package_or_single_module_of_another_program_is_importable(tmp_path, run_cli):
    """``from datakit.loaders import make_loader`` reaches packages/datakit whether ``datakit`` is a
    regular package, a PEP 420 namespace package or ``py-modules = ["datakit"]``: all are importable
    once installed, so the trainer's CUDA default device makes the fix unsafe (review helper-43,
    c10/c10b: safe for the last two)."""
    for layout, module in (("package", b"datakit.loaders"), ("namespace", b"datakit.loaders"), ("module", b"datakit")):
        root = tmp_path / layout
        _monorepo(root, layout)
        app = root / "apps" / "trainer"
        app.mkdir(parents=True)
        (app / "pyproject.toml").write_text('[project]\nname = "trainer"\n')
        (app / "train.py").write_bytes(b"import torch\nfrom " + module + b" import make_loader\n\n"
                                       b"torch.set_default_device('cuda')\nloader = make_loader(list(range(8)))\n")
        proc = run_cli("--check", "-v", ".", cwd=root)
        assert b"DDP002 [~]" in proc.stdout and b"apps/trainer/train.py:4" in proc.stdout, (layout, proc.stdout)


def test_a_script_importing_a_nested_folder_by_a_dotted_path_is_its_program(tmp_path, run_cli):
    """No marker: ``train.py`` imports ``src.data.loaders`` and makes CUDA the default device.
    ``src/data`` is two folders below it, and ``python train.py`` runs it: one program, so the fix of
    the loader is unsafe whichever path is named (review helper-43, c02: safe, the climb stopped at
    ``src/data``). Without the import, ``src/data`` is a program of its own and the fix safe."""
    from ddpfix.model.program import program_root

    top = tmp_path / "proj"
    (top / "src" / "data").mkdir(parents=True)
    (top / "src" / "data" / "loaders.py").write_bytes(_CUDA_LOADER)
    (top / "train.py").write_bytes(b"import torch\nfrom src.data.loaders import make_loader\n\n"
                                   b"torch.set_default_device('cuda')\nloader = make_loader(list(range(8)))\n")
    assert program_root(str(top / "src" / "data" / "loaders.py")) == os.path.realpath(top)
    for named in (".", "src", "src/data/loaders.py"):
        proc = run_cli("--check", "-v", named, cwd=top)
        assert b"DDP002 [~]" in proc.stdout and b"train.py:4" in proc.stdout, (named, proc.stdout)
    alone = tmp_path / "alone"
    (alone / "src" / "data").mkdir(parents=True)
    (alone / "src" / "data" / "loaders.py").write_bytes(_CUDA_LOADER)
    (alone / "train.py").write_bytes(b"import torch\n\ntorch.set_default_device('cuda')\n")
    proc = run_cli("--check", "src/data/loaders.py", cwd=alone)
    assert b"DDP002 [*]" in proc.stdout, proc.stdout


def test_a_loader_reads_the_configurations_its_config_path_names_outside_its_program(tmp_path, run_cli):
    """A hydra app in apps/trainer reads ``config_path="../../configs"``, a shared folder outside its
    program: a ``_target_: torch.set_default_device`` there is a switch for the package the app
    imports (review helper-43, c03: safe, only the app's own folder was read)."""
    root = tmp_path / "mono"
    _monorepo(root, "package")
    (root / "configs").mkdir()
    (root / "configs" / "config.yaml").write_text("setup:\n  _target_: torch.set_default_device\n  device: cuda\n")
    app = root / "apps" / "trainer"
    app.mkdir(parents=True)
    (app / "pyproject.toml").write_text('[project]\nname = "trainer"\n')
    (app / "train.py").write_bytes(
        b"import hydra\nfrom hydra.utils import call\n\nfrom datakit.loaders import make_loader\n\n\n"
        b"@hydra.main(config_path='../../configs', config_name='config', version_base=None)\ndef main(cfg):\n"
        b"    call(cfg.setup)\n    loader = make_loader(list(range(8)))\n")
    proc = run_cli("--check", "-v", ".", cwd=root)
    assert b"DDP002 [~]" in proc.stdout and b"configs/config.yaml:2" in proc.stdout, proc.stdout
    # Without the switch there, what the command line may name still keeps the fix unsafe.
    (root / "configs" / "config.yaml").write_text("setup:\n  _target_: torch.manual_seed\n  seed: 0\n")
    proc = run_cli("--check", "-v", ".", cwd=root)
    assert b"configs/config.yaml" not in proc.stdout and b"`--config-dir`" in proc.stdout, proc.stdout


def test_a_context_manager_of_the_program_is_read_by_what_it_is_not_by_its_name(tmp_path, run_cli):
    """``with no_grad():`` where ``no_grad`` is the program's own (``from utils import no_grad``, which
    returns ``torch.device("cuda")``) may enter that device: only a listed library's context manager
    of that name is known to enter none (an open point of the last review: the allowlist was read by
    the last name alone)."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (root / "utils.py").write_bytes(b"import torch\n\n\ndef no_grad():\n    return torch.device('cuda')\n")
    body = (b"import torch\nfrom torch.utils.data import DataLoader\n%s\n\n\n"
            b"def main():\n    g = torch.Generator(device='cuda')\n    with %s:\n"
            b"        for batch in DataLoader(list(range(8)), shuffle=True, generator=g):\n            pass\n")
    for imported, used in ((b"from utils import no_grad", b"no_grad()"), (b"import utils", b"utils.no_grad()")):
        (root / "train.py").write_bytes(body % (imported, used))
        proc = run_cli("--check", "-v", "train.py", cwd=root)
        assert b"DDP002 [~]" in proc.stdout and b"(train.py:8)" in proc.stdout, (used, proc.stdout)
    (root / "train.py").write_bytes(body % (b"", b"torch.no_grad()"))
    proc = run_cli("--check", "train.py", cwd=root)
    assert b"DDP002 [*]" in proc.stdout, proc.stdout


def test_code_brought_in_from_outside_the_program_keeps_absences_unproven(tmp_path, run_cli):
    """A script that adds a folder outside its program to ``sys.path`` (or runs a file there by its
    path, or whose launcher sets ``PYTHONPATH`` there) may run code no fact covers, such as a switch of
    the default device to CUDA: the fix that rests on there being none is unsafe, naming the place
    (review helper-44, c03/c12/c16). A folder inside the program (``os.path.dirname(__file__)``) is
    read like any other."""
    app = tmp_path / "trainer_app"
    app.mkdir()
    (app / "pyproject.toml").write_text('[project]\nname = "app"\n')
    (app / "data.py").write_bytes(_CUDA_LOADER)
    script = (b"import os\nimport sys\nimport runpy\n%s\n\nfrom data import make_loader\n\n"
              b"loader = make_loader(list(range(8)))\n")
    cases = {
        b"sys.path.insert(0, '../shared')": b"`sys.path.insert(...)` of",
        b"runpy.run_path('../shared/gpu_env.py')": b"`run_path(...)` of",
        b"sys.path.append(os.environ['EXTRA'])": b"built at run time",
    }
    for line, said in cases.items():
        (app / "train.py").write_bytes(script % line)
        proc = run_cli("--check", "-v", ".", cwd=app)
        assert b"DDP002 [~]" in proc.stdout and said in proc.stdout, (line, proc.stdout)
    (app / "train.py").write_bytes(script % b"sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'src'))")
    proc = run_cli("--check", ".", cwd=app)
    assert b"DDP002 [*]" in proc.stdout, proc.stdout
    # ``Path(__file__).parents[n]``: the folder n + 1 levels up (litgpt's extensions), inside or not
    (app / "tools" / "xla").mkdir(parents=True)
    (app / "tools" / "xla" / "run.py").write_bytes(
        b"import sys\nfrom pathlib import Path\n\nsys.path.append(str(Path(__file__).parents[2].resolve()))\n")
    proc = run_cli("--check", ".", cwd=app)
    assert b"DDP002 [*]" in proc.stdout, proc.stdout
    (app / "tools" / "xla" / "run.py").write_bytes(
        b"import sys\nfrom pathlib import Path\n\nsys.path.append(str(Path(__file__).parents[3]))\n")
    proc = run_cli("--check", "-v", ".", cwd=app)
    assert b"DDP002 [~]" in proc.stdout and b"outside the program" in proc.stdout, proc.stdout
    (app / "tools" / "xla" / "run.py").unlink()
    (app / "launch.sh").write_bytes(b"#!/bin/sh\nexport PYTHONPATH=../shared:$PYTHONPATH\npython train.py\n")
    proc = run_cli("--check", "-v", ".", cwd=app)
    assert b"DDP002 [~]" in proc.stdout and b"launch.sh:2" in proc.stdout, proc.stdout


def test_a_path_built_from_a_private_functions_arguments_is_each_argument(tmp_path, run_cli):
    """setup.py's ``_load_py_module(fname, pkg="demo")`` joins its parameters onto the program's own
    folder and is called once, with a literal: it loads ``src/demo/__about__.py``, inside the
    program, and brings in nothing from outside (lightning-bolts). A call whose argument climbs out
    of the program, one whose argument is not a literal, a public function, or one another file
    names (and may call with anything), leaves the path unknown or outside: unsafe, naming it."""
    app = tmp_path / "trainer_app"
    app.mkdir()
    (app / "pyproject.toml").write_text('[project]\nname = "app"\n')
    (app / "data.py").write_bytes(_CUDA_LOADER)
    (app / "train.py").write_bytes(b"from data import make_loader\n\nloader = make_loader(list(range(8)))\n")
    setup = ("import os\nfrom importlib.util import module_from_spec, spec_from_file_location\n\n"
             "HERE = os.path.realpath(os.path.dirname(__file__))\n\n\n"
             "def {name}(fname, pkg='demo'):\n"
             "    spec = spec_from_file_location(fname, os.path.join(HERE, 'src', pkg, fname))\n"
             "    module = module_from_spec(spec)\n    spec.loader.exec_module(module)\n    return module\n\n\n"
             "about = {name}({argument})\n")
    cases = {("_load_py_module", "'__about__.py'"): b"DDP002 [*]",
             ("_load_py_module", "'__about__.py', pkg='other'"): b"DDP002 [*]",
             ("_load_py_module", "'../../../shared/gpu.py'"): b"outside the program",
             ("_load_py_module", "os.environ['ABOUT']"): b"built at run time",
             ("load_py_module", "'__about__.py'"): b"built at run time"}
    for (name, argument), said in cases.items():
        (app / "setup.py").write_text(setup.format(name=name, argument=argument))
        proc = run_cli("--check", "-v", ".", cwd=app)
        assert said in proc.stdout, (name, argument, proc.stdout)
    # review helper-47, c05: a call through ``globals()`` may hand it anything
    (app / "setup.py").write_text(setup.format(name="_load_py_module", argument="'__about__.py'")
                                  + "globals()['_load_' + 'py_module'](os.environ['PLUGIN'])\n")
    proc = run_cli("--check", "-v", ".", cwd=app)
    assert b"DDP002 [~]" in proc.stdout and b"built at run time" in proc.stdout, proc.stdout
    (app / "setup.py").write_text(setup.format(name="_load_py_module", argument="'__about__.py'"))
    (app / "tools.py").write_text("from setup import _load_py_module\n\n_load_py_module('/opt/x.py')\n")
    proc = run_cli("--check", "-v", ".", cwd=app)
    assert b"DDP002 [~]" in proc.stdout and b"built at run time" in proc.stdout, proc.stdout


def test_a_spawn_script_another_file_imports_is_not_only_a_script(tmp_path, run_cli):
    """``experiments/exp_small.py`` trains at its top level under ``ddp_spawn``; ``sweep.py`` imports it
    by name (``importlib.import_module``) inside its own main guard and reads ``module.trainer``.
    Moving the run into ``main()`` would leave the sweep with nothing: the fix is unsafe, naming the
    importer (review helper-45, c15; the package folder is imported from the folder above it). Alone,
    the script's fix stays safe."""
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "__init__.py").write_text("")
    (tmp_path / "experiments" / "exp_small.py").write_text(
        "import lightning as L\n\n\nclass Model(L.LightningModule):\n    pass\n\n\n"
        "trainer = L.Trainer(accelerator='cpu', devices=2, strategy='ddp_spawn')\ntrainer.fit(Model())\n")
    proc = run_cli("--check", ".", cwd=tmp_path)
    assert b"DDP011 [*]" in proc.stdout, proc.stdout
    (tmp_path / "sweep.py").write_text(
        "import importlib\n\nif __name__ == '__main__':\n    for name in ['experiments.exp_small']:\n"
        "        module = importlib.import_module(name)\n        print(module.trainer.state.finished)\n")
    proc = run_cli("--check", "-v", ".", cwd=tmp_path)
    assert b"DDP011 [~]" in proc.stdout and b"sweep.py" in proc.stdout, proc.stdout


def test_a_device_fix_rests_on_what_the_rest_of_the_program_does_with_devices(tmp_path, run_cli):
    """DDP006's rewrite to ``self.device`` is safe in this file alone; the program may still decide
    otherwise (review helper-45): a DataModule's ``transfer_batch_to_device`` keeps the batch on the
    CPU (c07), a script compiles the module with TorchScript (c11), another file puts a teacher on
    cuda:0 that this tensor is meant to meet (c13). Each makes the fix unsafe, naming the place."""
    model = (b"import lightning as L\nimport torch\n\n\nclass Tagger(L.LightningModule):\n"
             b"    def __init__(self):\n        super().__init__()\n        self.net = torch.nn.Linear(4, 1)\n\n"
             b"    def training_step(self, batch, batch_idx):\n        x, y = batch\n"
             b"        shift = torch.ones(4).to('cuda:0')\n        return self.net(x + shift).sum()\n\n\n"
             b"if __name__ == '__main__':\n"
             b"    L.Trainer(accelerator='gpu', devices=2, strategy='ddp').fit(Tagger())\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (tmp_path / "model.py").write_bytes(model)
    proc = run_cli("--check", ".", cwd=tmp_path)
    assert b"DDP006 [*]" in proc.stdout, proc.stdout
    others = {
        "data.py": (b"import lightning as L\n\nfrom model import Tagger\n\n\nclass Features(L.LightningDataModule):\n"
                    b"    def transfer_batch_to_device(self, batch, device, dataloader_idx):\n"
                    b"        x, y = batch\n        return x, y.to(device)\n", b"defines a batch hook"),
        "export.py": (b"from model import Tagger\n\nTagger().to_torchscript()\n", b"TorchScript"),
        "teacher.py": (b"import torch\n\nfrom model import Tagger\n\nteacher = torch.load('teacher.pt', map_location='cuda:0')\n",
                       b"also puts something on cuda:0"),
    }
    for name, (code, said) in others.items():
        (tmp_path / name).write_bytes(code)
        proc = run_cli("--check", "-v", ".", cwd=tmp_path)
        assert b"DDP006 [~]" in proc.stdout and said in proc.stdout, (name, proc.stdout)
        (tmp_path / name).unlink()


def test_more_ways_in_from_outside_the_program(tmp_path, run_cli):
    """Spellings of bringing in code from outside that the first reader missed (review helper-46,
    c03): read through the imports, in a launcher written in Python, in editor settings."""
    base = tmp_path / "app"
    base.mkdir()
    (base / "pyproject.toml").write_text('[project]\nname = "app"\n')
    (base / "data.py").write_bytes(_CUDA_LOADER)
    train = "import os\nimport subprocess\nimport sys\n{line}\n\nfrom data import make_loader\n\nloader = make_loader(list(range(8)))\n"
    for line in ("sys.path[0:0] = ['../shared']", "from sys import path as p; p.insert(0, '../shared')",
                 "exec(compile(open('../shared/env.py').read(), 'env.py', 'exec'))",
                 "import torch; torch.hub.load('facebookresearch/dino:main', 'dino_vits16')",
                 "import torch; torch.hub.load('pytorch/fairseq', 'transformer.wmt16.en-de')",
                 "import torch; torch.hub.load('../vision', 'resnet18', source='local')"):
        (base / "train.py").write_text(train.format(line=line))
        proc = run_cli("--check", ".", cwd=base)
        assert b"DDP002 [~]" in proc.stdout, (line, proc.stdout)
    # PyTorch's own hub repositories are its packages' code; a checkpoint downloaded is no code of a folder
    for line in ("pass", "import torch; torch.hub.load('pytorch/vision:v0.9.0', 'resnet18', pretrained=True)",
                 "import torch; torch.hub.load_state_dict_from_url(os.environ['URL'])"):
        (base / "train.py").write_text(train.format(line=line))
        proc = run_cli("--check", ".", cwd=base)
        assert b"DDP002 [*]" in proc.stdout, (line, proc.stdout)
    (base / "launch.py").write_text("import os, subprocess, sys\n"
                                    "subprocess.run([sys.executable, 'train.py'], env=dict(os.environ, PYTHONPATH='../shared'))\n")
    proc = run_cli("--check", "-v", ".", cwd=base)
    assert b"DDP002 [~]" in proc.stdout and b"launch.py:2" in proc.stdout, proc.stdout


def test_a_conftest_makes_its_folder_importable_to_the_tests_below(tmp_path, run_cli):
    """``tests/test_smoke.py`` may ``import train_spawn`` where ``conftest.py`` sits beside the script:
    pytest puts that folder on ``sys.path`` (review helper-46, c06)."""
    (tmp_path / "train_spawn.py").write_text(
        "import lightning as L\n\n\nclass Model(L.LightningModule):\n    pass\n\n\n"
        "trainer = L.Trainer(accelerator='cpu', devices=2, strategy='ddp_spawn')\ntrainer.fit(Model())\n")
    (tmp_path / "conftest.py").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_smoke.py").write_text("import train_spawn\n\n\ndef test_it():\n"
                                                      "    assert train_spawn.trainer.state.finished\n")
    proc = run_cli("--check", "-v", ".", cwd=tmp_path)
    assert b"DDP011 [~]" in proc.stdout and b"test_smoke.py" in proc.stdout, proc.stdout
