"""Which class of another file a name means (model/class_files.py), and DDP004 following a
submodule whose class another file of the program defines, through the real command line."""

from __future__ import annotations

import ast
import os
import re

from ddpfix.model.class_files import ClassFiles


def write(root, files: dict[str, str]) -> list[str]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    paths = []
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(os.path.realpath(path))
    return paths


def resolve(root, files, importer: str, name: str):
    paths = write(root, files)
    found = ClassFiles(paths, lambda one, other: True)
    path = os.path.realpath(root / importer)
    source = found.class_of(path, ast.parse((root / importer).read_text()), name)
    return None if source is None else (os.path.relpath(source[0], os.path.realpath(root)), source[3].name)


def test_relative_absolute_and_reexported_names_resolve_to_their_class(tmp_path):
    files = {
        "pkg/__init__.py": "from .nets import Head as PublicHead\n",
        "pkg/nets.py": "from torch import nn\n\nclass Head(nn.Module):\n    pass\n",
        "pkg/model.py": "from .nets import Head\nfrom pkg import PublicHead as Exported\nfrom pkg.nets import Head as H2\n",
    }
    assert resolve(tmp_path, files, "pkg/model.py", "Head") == ("pkg/nets.py", "Head")
    assert resolve(tmp_path, files, "pkg/model.py", "H2") == ("pkg/nets.py", "Head")
    assert resolve(tmp_path, files, "pkg/model.py", "Exported") == ("pkg/nets.py", "Head")


def test_a_name_bound_twice_or_a_module_of_two_files_is_unknown(tmp_path):
    files = {
        "a/nets.py": "class Head:\n    pass\n",
        "b/nets.py": "class Head:\n    pass\n",
        "model.py": "from nets import Head\nfrom a.nets import Head as One\nfrom a.nets import Head as Two\nTwo = None\n",
        "lib.py": "from torch.nn import Linear\n",
    }
    assert resolve(tmp_path, files, "model.py", "Head") is None  # nets.py: a/ or b/?
    assert resolve(tmp_path, files, "model.py", "One") == ("a/nets.py", "Head")
    assert resolve(tmp_path, files, "model.py", "Two") is None  # rebound in the file
    assert resolve(tmp_path, files, "lib.py", "Linear") is None  # a library's class


GAN = '''import lightning as L
from torch import nn

from .components import Generator


class Gan(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.generator = Generator(4)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.generator(x), y))
'''


def test_a_submodule_whose_class_another_file_defines_is_followed(tmp_path, run_cli):
    """Safe where the class (its bases torch.nn through its own file, no collective, no CPU tensor in
    its forward) is read; unsafe, naming the fact, where its forward gathers or leaves the GPU."""
    components = ("import torch\nfrom torch import nn\n\n\nclass Generator(nn.Module):\n"
                  "    def __init__(self, width):\n        super().__init__()\n        self.net = nn.Linear(width, width)\n\n"
                  "    def forward(self, x):\n        return {body}\n")
    root = tmp_path / "proj"
    write(root, {"gan/__init__.py": "", "gan/model.py": GAN,
                 "gan/components.py": components.format(body="self.net(x)")})
    proc = run_cli("--check", "-v", "gan/model.py", cwd=root)
    assert b"[*]" in proc.stdout, proc.stdout

    (root / "gan/components.py").write_text(components.format(body="torch.distributed.nn.all_reduce(self.net(x))"))
    proc = run_cli("--check", "-v", "gan/model.py", cwd=root)
    assert b"[*]" not in proc.stdout and b"names a collective" in proc.stdout, proc.stdout

    (root / "gan/components.py").write_text(
        components.replace("import torch\n", "from torch import arange\n").format(body="self.net(x) + arange(4)"))
    proc = run_cli("--check", "-v", "gan/model.py", cwd=root)
    assert b"[*]" not in proc.stdout and b"`Generator` may make a CPU tensor (`torch.arange(...)`" in proc.stdout, proc.stdout


BASE = '''from abc import ABC, abstractmethod

import lightning as L
from torch import nn


class BaseTask(L.LightningModule, ABC):
    def __init__(self):
        super().__init__()
        self.configure_models()

    @abstractmethod
    def configure_models(self):
        """Build the model."""

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
{log}
        return loss
{more}'''

TASK = '''from torch import nn

from .base import BaseTask


class Regression(BaseTask):
    def configure_models(self):
        self.net = nn.Linear(4, 1)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y))
'''


def test_a_base_class_another_file_defines_is_read_there(tmp_path, run_cli):
    """The base (abc.ABC beside LightningModule) is read in its own file: safe while its logs sync
    in one order on every rank and it calls none of the subclass's hooks; unsafe, naming its file,
    where it syncs under a data-dependent `if` or calls the hook on some ranks only."""
    root = tmp_path / "proj"
    write(root, {"pkg/__init__.py": "", "pkg/task.py": TASK,
                 "pkg/base.py": BASE.format(log='        self.log("train_loss", loss, sync_dist=True)', more="")})
    proc = run_cli("--check", "-v", ".", cwd=root)
    assert b"task.py:12:9: DDP004 [*]" in proc.stdout, proc.stdout

    (root / "pkg/base.py").write_text(BASE.format(
        log='        if loss > 1:\n            self.log("train_loss", loss, sync_dist=True)', more=""))
    proc = run_cli("--check", "-v", ".", cwd=root)
    assert b"the log at base.py:20 may sync where ranks may not reach it in the same order" in proc.stdout, proc.stdout

    (root / "pkg/base.py").write_text(BASE.format(
        log='        self.log("train_loss", loss)',
        more="\n    def test_step(self, batch, batch_idx):\n        if batch_idx % 2:\n"
             "            self.validation_step(batch, batch_idx)\n"))
    proc = run_cli("--check", "-v", ".", cwd=root)
    assert b"the file of a base class calls `validation_step` itself" in proc.stdout, proc.stdout

    (root / "pkg/base.py").write_text(BASE.format(log='        self.log("train_loss", loss)', more="").replace(
        "(L.LightningModule, ABC)", "(L.LightningModule, Unknown)"))
    proc = run_cli("--check", "-v", ".", cwd=root)
    assert re.search(rb"the base class `Unknown` \(line \d+\) is not seen \(in base.py, through the base class `BaseTask`\)",
                     proc.stdout), proc.stdout


MODULE = '''import lightning as L
from torch import nn


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)

    def _loss(self, batch):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self._loss(batch))
'''


def test_a_class_deriving_from_the_module_is_read(tmp_path, run_cli):
    """The module that runs may be a subclass in another file: safe while it logs its synced keys in
    one order on every rank and defines again nothing the proof read; unsafe, naming it, where it
    defines the helper again, syncs under a data-dependent `if`, or cannot be read (a notebook with a
    cell that is not Python the kernel runs)."""
    root = tmp_path / "proj"
    subclass = "from model import Classifier\n\n\nclass Wider(Classifier):\n{body}"
    write(root, {"model.py": MODULE, "wider.py": subclass.format(
        body="    def on_validation_epoch_end(self):\n        self.log(\"epochs\", float(self.current_epoch), sync_dist=True)\n")})
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"model.py:15:9: DDP004 [*]" in proc.stdout, proc.stdout

    (root / "wider.py").write_text(subclass.format(body="    def _loss(self, batch):\n        return batch[0].sum()\n"))
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"[*]" not in proc.stdout and b"the class `Wider` (wider.py:4), which derives from `Classifier` defines `_loss`" \
        in proc.stdout, proc.stdout

    (root / "wider.py").write_text(subclass.format(
        body="    def validation_step(self, batch, batch_idx):\n        super().validation_step(batch, batch_idx)\n"
             "        if batch[0].sum() > 0:\n            self.log(\"big\", batch[0].sum(), sync_dist=True)\n"))
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"[*]" not in proc.stdout and b"the class `Wider` (wider.py:4) derives from `Classifier`" in proc.stdout, proc.stdout

    (root / "wider.py").unlink()
    (root / "notebook.ipynb").write_text('{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], '
                                         '"source": ["from model import Classifier\\n", "class Wider(Classifier):\\n", '
                                         '"    pass\\n"]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"DDP004 [*]" in proc.stdout, proc.stdout  # a notebook's classes are read too (IPython lines masked)

    (root / "notebook.ipynb").write_text('{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], '
                                         '"source": ["%%writefile extra.py\\n", "x = 1\\n"]}, '
                                         '{"cell_type": "code", "metadata": {}, "outputs": [], '
                                         '"source": ["from model import Classifier\\n", "class Wider(Classifier):\\n", '
                                         '"    pass\\n"]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"[*]" not in proc.stdout and b"notebook.ipynb (not read) may derive from `Classifier`" in proc.stdout, proc.stdout


HANDED_IN = '''import lightning as L
from torch import nn


class Backbone(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.layer = nn.Linear(4, width)

    def forward(self, x):
        return self.layer(x)


class Classifier(L.LightningModule):
    def __init__(self, backbone, head_class=nn.Identity):
        super().__init__()
        self.backbone = backbone
        self.head = head_class()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.cross_entropy(self.head(self.backbone(x)), y))
'''


def test_a_module_handed_to_the_constructor_is_known_where_every_construction_is_read(tmp_path, run_cli):
    """What the constructor is handed is followed to every call of the program that builds the
    class: known where each hands a module built by a known call. An instance that may come from
    elsewhere keeps it unknown, and the reason says where: a checkpoint's pickle (a loader of the
    program), `type(m)(...)`, the class handed around, a backbone changed after it is built."""
    root = tmp_path / "proj"
    train = ("from model import Backbone, Classifier\n\n"
             "model = Classifier(Backbone(3))\n")
    write(root, {"model.py": HANDED_IN, "train.py": train})
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"[*]" in proc.stdout, proc.stdout  # ``head_class`` keeps its default, a torch layer
    (root / "train.py").write_text("from model import Backbone, Classifier\nfrom extras import Head\n\n"
                                   "model = Classifier(Backbone(3), head_class=Head)\n")
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"[*]" not in proc.stdout, proc.stdout
    assert b"`head_class` is not a module class that is read" in proc.stdout, proc.stdout
    (root / "model.py").write_text(HANDED_IN.replace("self.head(self.backbone(x))", "self.backbone(x)"))
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"[*]" in proc.stdout, proc.stdout
    unknown = {
        "import pickle\nfrom model import Backbone, Classifier\n\nmodel = Classifier(Backbone(3))\n"
        "other = pickle.load(open('m.pkl', 'rb'))\n": b"train.py may build classes named at run time (or unpickle objects)",
        "from model import Backbone, Classifier\n\nmodel = Classifier(Backbone(3))\nagain = type(model)(object())\n":
            b"train.py:4 builds an object's own class",
        "from model import Backbone, Classifier\n\nmodel = Classifier(Backbone(3))\nmodels = [Classifier]\n":
            b"train.py:4 names `Classifier` otherwise than to build it",
        "from model import Backbone, Classifier\n\nmodel = Classifier(Backbone(3))\n"
        "model.backbone.register_forward_hook(print)\n": b"`self.backbone` may be changed after it is built (train.py:4)",
        "from model import Backbone, Classifier\n\nb = Backbone(3)\nb.layer.register_forward_hook(print)\n"
        "model = Classifier(b)\n": b"may change what `b` runs",
    }
    for text, reason in unknown.items():
        (root / "train.py").write_text(text)
        proc = run_cli("--check", "-v", "model.py", cwd=root)
        assert b"[*]" not in proc.stdout, (text, proc.stdout)
        assert reason in proc.stdout.replace(b"\n    ", b" "), (text, proc.stdout)


def test_a_module_changed_after_it_is_built_is_unknown(tmp_path, run_cli):
    """A module built by a known call stays known only while nothing changes it: not the class
    (`self.net.append(...)`), not another file (`model.net = Other()`)."""
    root = tmp_path / "proj"
    model = HANDED_IN.replace("self.backbone = backbone", "self.backbone = Backbone(3)").replace(
        "self.head(self.backbone(x))", "self.backbone(x)")
    write(root, {"model.py": model, "train.py": "from model import Classifier\n\nmodel = Classifier(None)\n"})
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"model.py:22:9: DDP004 [*]" in proc.stdout, proc.stdout

    (root / "train.py").write_text("from torch import nn\nfrom model import Classifier\n\n"
                                   "model = Classifier(None)\nmodel.backbone = nn.Sequential()\n")
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"[*]" not in proc.stdout and b"`self.backbone` may be changed after it is built (train.py:5)" \
        in proc.stdout, proc.stdout

    (root / "train.py").write_text("from model import Classifier\n\nmodel = Classifier(None)\n")
    # A part replaced in ``__init__`` by a known module leaves it known; anywhere else, not.
    (root / "model.py").write_text(model.replace(
        "        self.head = head_class()\n", "        self.head = head_class()\n        self.backbone.layer = nn.Identity()\n"))
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"DDP004 [*]" in proc.stdout, proc.stdout
    (root / "model.py").write_text(model.replace(
        "        self.head = head_class()\n",
        "        self.head = head_class()\n\n    def setup(self, stage):\n        self.backbone.layer = nn.Identity()\n"))
    proc = run_cli("--check", "-v", "model.py", cwd=root)
    assert b"[*]" not in proc.stdout and b"`self.backbone` may be changed after it is built (line 21)" \
        in proc.stdout, proc.stdout
