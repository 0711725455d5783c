"""An unsafe fix's reason names the fact it lacks and where that fact comes from (issue 29, C):
the line of the call that may change a value, of the decorator, of the store, of the call that
reaches a helper from a step. Each case puts that place at a known line of a one-file program."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAD = "import lightning as L\nimport torch\nimport helpers\n\n\n"  # the cases start at line 6

CASES = {
    "a call that may change the logged value": ('''
class M(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        loss = batch.float().mean()
        helpers.rescale(loss)
        self.log("val_loss", loss)
''', "`helpers.rescale(loss)` (line 9) may change `loss` in place"),
    "a helper's call that may change its argument": ('''
class M(L.LightningModule):
    def _loss(self, batch):
        helpers.rescale(batch)
        return batch.float().mean()

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self._loss(batch))
''', "`helpers.rescale(batch)` (line 8) in `_loss` may change its argument `batch` in place"),
    "a class decorator": ('''
@helpers.register
class M(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        self.log("val_loss", batch.float().mean())
''', "the class decorator `helpers.register` (line 6) may replace its methods"),
    "a method name also assigned": ('''
class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self._shared = helpers.make()

    def _shared(self, batch):
        self.log("val_loss", batch.float().mean())

    def validation_step(self, batch, batch_idx):
        self._shared(batch)
''', "`self._shared` is also assigned (stored at line 9)"),
    "a helper a training step reaches": ('''
class M(L.LightningModule):
    def _shared(self, batch):
        loss = batch.float().mean()
        self.log("loss", loss)
        return loss

    def training_step(self, batch, batch_idx):
        return self._shared(batch)

    def validation_step(self, batch, batch_idx):
        self._shared(batch)
''', "reached from training_step -> _shared (line 13)"),
    "a hook the code calls itself": ('''
class M(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        self.log("val_loss", batch.float().mean())

def run(model, batch):
    model.validation_step(batch, 0)
''', "the code calls `validation_step` itself (line 11)"),
    "a name a `with` binds": ('''
class M(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        with helpers.timer() as elapsed:
            pass
        self.log("val_time", elapsed)
''', "`elapsed` is bound at line 8"),
    "a local computed from the module's state": ('''
class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.outputs = []

    def on_validation_epoch_end(self):
        total = 0
        for out in self.outputs:
            total += out["loss"]
        total /= len(self.outputs)
        self.log("val_total", total)
''', "first, at line 13: `self.outputs` is not known to be this rank's own value (it may be global already): "
       "`self.outputs` is the module's state (stored at line 9)"),
    "the module's state": ('''
class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.running = 0.0

    def validation_step(self, batch, batch_idx):
        self.log("val_running", self.running)
''', "`self.running` is the module's state (stored at line 9)"),
    # A method that changes its argument says which of its calls does, and why, down to the fact.
    "a call in forward that changes the helper's argument": ('''
class M(L.LightningModule):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, x):
        return self.encoder(x)

    def _loss(self, batch):
        return self.forward(batch).mean()

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self._loss(batch))
''', "`self.forward(batch)` (line 15) in `_loss` may change its argument `batch` in place: `self.encoder(x)` "
     "(line 12) in `forward` may change its argument `x` in place: `self.encoder` holds `encoder` (line 9), handed "
     "to `M(...)`: no code of the program builds `M`"),
    # The call that first made a value unknown, not a later one that runs its code because of it.
    "the loop's call, not a later known one": ('''
class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.flows = helpers.flows()

    def _encode(self, imgs):
        z, total = imgs, torch.zeros(imgs.shape[0], device=self.device)
        for flow in self.flows:
            z, total = flow(z, total)
        return z.mean() + total.mean()

    def validation_step(self, batch, batch_idx):
        self.log("val_nll", self._encode(batch))
''', "`flow(z, total)` (line 14) in `_encode` may change its argument `imgs` in place"),
    "a batch the class may replace": ('''
class M(L.LightningModule):
    def on_after_batch_transfer(self, batch, dataloader_idx):
        return helpers.augment(batch)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.log("val_loss", loss)
''', "the class may replace each batch before its hooks see it (`on_after_batch_transfer`)"),
}


def reasons(folder, source: str, select: str = "DDP004") -> list[str]:
    (folder / "model.py").write_text(HEAD + source.lstrip("\n"))
    out = subprocess.run([sys.executable, "-m", "ddpfix", "--check", "--no-color", "--select", select,
                          "--output-format", "json", "model.py"], cwd=folder, capture_output=True, text=True).stdout
    return [r["unsafe_reason"] for r in json.loads(out) if r["applicability"] == "unsafe"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_reason_names_the_line_the_unknown_fact_comes_from(tmp_path, case):
    source, expected = CASES[case]
    found = reasons(tmp_path, source)
    assert found and all(expected in reason for reason in found), found


def test_a_seeding_call_is_named_with_its_line(tmp_path):
    source = '''
L.seed_everything(7)
train, val = torch.utils.data.random_split(helpers.dataset, [0.9, 0.1])
trainer = L.Trainer(devices=2, strategy="ddp")
trainer.fit(helpers.Model(), torch.utils.data.DataLoader(train), torch.utils.data.DataLoader(val))
'''
    found = reasons(tmp_path, source, "DDP012")
    assert found and all("`L.seed_everything(7)`, line 6" in reason for reason in found), found


def findings(folder, source: str, select: str = "DDP004") -> list[dict]:
    (folder / "model.py").write_text(HEAD + source.lstrip("\n"))
    out = subprocess.run([sys.executable, "-m", "ddpfix", "--check", "--no-color", "--select", select,
                          "--output-format", "json", "model.py"], cwd=folder, capture_output=True, text=True).stdout
    return json.loads(out)


@pytest.mark.parametrize("op", ["diagonal", "kron", "take_along_dim", "atan2"])
def test_a_torch_function_of_tensors_keeps_their_device(tmp_path, op):
    """``torch.diagonal(c)`` is a view of ``c``, on ``c``'s device: no CPU tensor is made, and the
    fix stays safe. ``torch.arange(n)`` without a device is made on the CPU: unsafe, said so."""
    arguments = {"diagonal": "c", "kron": "c, c", "take_along_dim": "c, c.argmax(dim=0, keepdim=True)",
                 "atan2": "c, c"}[op]
    source = f'''
class M(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        c = batch.float() @ batch.float().T
        self.log("val_loss", torch.{op}({arguments}).sum())
'''
    found = findings(tmp_path, source)
    assert [f["applicability"] for f in found] == ["safe"], found
    cpu = findings(tmp_path, source.replace(f"torch.{op}({arguments})", "torch.arange(len(c)).float()"))
    assert [f["applicability"] for f in cpu] == ["unsafe"] and "CPU tensor" in cpu[0]["unsafe_reason"], cpu


def test_forward_called_as_a_method_runs_as_written(tmp_path):
    """``self.forward(x)`` in a helper runs the class's ``forward`` as written (a direct call: no
    module hooks), so it changes its argument only where that ``forward`` does: the value stays
    this rank's own. A ``forward`` that changes its argument in place keeps the fix unsafe."""
    source = '''
class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def forward(self, x):
        return self.net(x)

    def _loss(self, batch):
        x, y = batch
        return torch.nn.functional.mse_loss(self.forward(x), y)

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self._loss(batch))
'''
    assert [f["applicability"] for f in findings(tmp_path, source)] == ["safe"]
    changing = source.replace("        return self.net(x)\n", "        x.mul_(2)\n        return self.net(x)\n")
    found = findings(tmp_path, changing)
    assert [f["applicability"] for f in found] == ["unsafe"], found


NUMBERS = '''
class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.outputs = []

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.outputs.append(helpers.model(x))

    def on_validation_epoch_end(self):
        preds = helpers.collect(self.outputs)
        scores = []
        for p, t in zip(preds, helpers.targets):
            scores.append(helpers.distance(p, t) / max(len(p), len(t)))
        self.log("val_value", {value})
'''


@pytest.mark.parametrize("value, safe", [
    ("np.mean(scores)", True),
    ("float(helpers.score(preds))", True),
    ("helpers.score(preds).item() * 2", True),
    ("len(scores) / 4", True),
    ("math.sqrt(helpers.score(preds))", True),
    ("math.prod([helpers.score(preds), 1.0])", False),  # the objects' own ``*``: a tensor
    ("sum(scores)", False),  # what is appended is not known to be a number: a sum of tensors is a tensor
    ("helpers.score(preds)", False),
    ("np.mean(helpers.scores)", False),  # not a local list: an object of the program may define `mean`
    ("abs(helpers.score(preds))", False),  # a tensor's own __abs__
])
def test_a_number_logged_once_per_epoch_needs_no_provenance(tmp_path, value, safe):
    """A Python or NumPy number is put on the module's device by Lightning, and a mean of one every
    rank already shares is that number: once per epoch, the fix is safe whatever the number was
    computed from. Not with ``reduce_fx="sum"``, which counts it once per rank."""
    source = "import math\nimport numpy as np\n" + NUMBERS.format(value=value)
    found = findings(tmp_path, source)
    assert [f["applicability"] for f in found] == (["safe"] if safe else ["unsafe"]), found
    if safe:
        summed = findings(tmp_path, source.replace(f'self.log("val_value", {value})',
                                                   f'self.log("val_value", {value}, reduce_fx="sum")'))
        assert [f["applicability"] for f in summed] == ["unsafe"], summed


def test_a_number_logged_per_batch_still_needs_its_provenance(tmp_path):
    """Per batch, Lightning weighs the epoch mean by each rank's summed batch sizes, synced as
    integers: where they differ (a dataset the program shards, drawn at random), a number every
    rank shares comes out scaled (review round 10: 10.0 became 12.5). Its provenance must be known."""
    source = '''
class M(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        self.log("val_scale", float(helpers.shared_scale()))
'''
    assert [f["applicability"] for f in findings(tmp_path, source)] == ["unsafe"]


def test_item_of_a_class_of_the_program_is_not_a_number(tmp_path):
    """``x.item()`` is a number only where no class of the program defines ``item`` (one may return
    a CPU tensor, which NCCL refuses)."""
    source = '''
class Average:
    def item(self):
        return torch.tensor(1.0)


class M(L.LightningModule):
    def on_validation_epoch_end(self):
        self.log("val_avg", helpers.smoothed.item())
'''
    assert [f["applicability"] for f in findings(tmp_path, source)] == ["unsafe"]
    without = source.replace("class Average:\n    def item(self):\n        return torch.tensor(1.0)\n", "")
    assert [f["applicability"] for f in findings(tmp_path, without)] == ["safe"]


SEVERAL_CHANGERS = '''import lightning as L
import torch
import torch.nn.functional as F
from torchmetrics.functional import accuracy


class Model(L.LightningModule):
    def __init__(self, trained_model):
        super().__init__()
        self.model = trained_model

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = F.log_softmax(self.model(x), dim=1)
        loss = F.nll_loss(logits, y)
        preds = torch.argmax(logits, dim=1)
        acc = accuracy(preds, y, task="multiclass", num_classes=10)
        self.log("val_loss", loss, prog_bar=True)
        self.log("val_acc", acc, prog_bar=True)


trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp")
'''


def test_the_reason_is_the_same_whatever_the_hash_seed(tmp_path):
    """Several calls may change the logged values in place: the reason names the first in the code,
    not the one a set of names happened to yield first (it changed with ``PYTHONHASHSEED`` from run to
    run, so a CI log or an editor's message flapped)."""
    (tmp_path / "train.py").write_text(SEVERAL_CHANGERS)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    import os

    outputs = set()
    for seed in range(8):
        run = subprocess.run([sys.executable, "-m", "ddpfix", "--check", "--output-format", "json", "--unsafe-fixes", "."],
                             cwd=tmp_path, capture_output=True, text=True, timeout=120,
                             env=dict(os.environ, PYTHONHASHSEED=str(seed)))
        reasons = [f["unsafe_reason"] for f in json.loads(run.stdout)]
        assert len(reasons) == 2 and all(reasons), run.stdout
        outputs.add(tuple(reasons))
    assert len(outputs) == 1, outputs
