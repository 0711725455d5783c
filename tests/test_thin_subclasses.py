"""A subclass that only hands its constructor's arguments on, changed, to ``super().__init__``
(``kwargs["task"] = "multilabel"``) runs its base's hooks with its base's state: every fix of the
base is decided as where no class derives from it. Any other subclass is read whole
(``ClassFacts._fold_subclasses``): a hook that may sync in another order, a store on ``self``, a
second base, or a subclass of its own that does so keeps the fix unsafe."""

from __future__ import annotations

import pytest

TASK = '''import lightning as L
import torch
from torch import nn


class Task(L.LightningModule):
    def __init__(self, width=4, task="binary"):
        super().__init__()
        self.net = nn.Linear(width, 1)
        self.task = task

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("val_loss", loss, sync_dist=True)
        self.log("val_error", (self.net(x) - y).abs().mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
'''
THIN = '''from typing_extensions import deprecated

from task import Task


@deprecated("Use Task(task='multilabel')")
class MultiLabelTask(Task):
    """Multi-label, by its arguments alone."""

    def __init__(self, *args, **kwargs):
        kwargs["task"] = "multilabel"
        if "width" not in kwargs:
            kwargs["width"] = 4
        super().__init__(*args, **kwargs)
{more}'''

CASES = {
    "thin": ("", True),
    "a_method": ("\n    def on_validation_batch_end(self, outputs, batch, batch_idx):\n"
                 "        if batch_idx % 2:\n            self.log('other', 1.0, sync_dist=True)\n", False),
    "a_store_on_self": ("\n\nclass Stored(Task):\n    def __init__(self):\n        super().__init__()\n        self.net = None\n", False),
    # not thin, but read whole where it derives (``ClassFacts._fold_subclasses``): it defines no hook
    "a_call_read_whole": ("\n\nclass Called(Task):\n    def __init__(self, **kwargs):\n        kwargs['width'] = int(kwargs['width'])\n"
               "        super().__init__(**kwargs)\n", True),
    "a_second_base": ("\n\nclass Mixed(Task, dict):\n    pass\n", False),
    "a_subclass_of_the_thin_one": ("\n\nclass Deeper(MultiLabelTask):\n    def on_validation_batch_end(self, outputs, batch, batch_idx):\n"
                                   "        if batch_idx % 2:\n            self.log('x', 1.0, sync_dist=True)\n", False),
    "a_thin_subclass_of_the_thin_one": ("\n\nclass Deeper(MultiLabelTask):\n    pass\n", True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_thin_subclass_keeps_the_fix_safe(tmp_path, run_cli, case):
    more, safe = CASES[case]
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "task.py").write_text(TASK)
    (tmp_path / "multilabel.py").write_text(THIN.format(more=more))
    (tmp_path / "train.py").write_text("import lightning as L\nimport multilabel\n\n"
                                       "L.Trainer(strategy='ddp', devices=2).fit(multilabel.MultiLabelTask(width=4))\n"
                                       + "".join(f"multilabel.{name}()\n" for name in ("Stored", "Called", "Mixed", "Deeper")
                                                 if f"class {name}(" in more))
    proc = run_cli("--check", "-v", "task.py", cwd=tmp_path)
    assert (b"DDP004 [*]" if safe else b"DDP004 [~]") in proc.stdout, proc.stdout


METRICS_TASK = '''import lightning as L
import torch
from torch import nn
from torchmetrics import MetricCollection
from torchmetrics.classification import BinaryAccuracy


class Task(L.LightningModule):
    def __init__(self, width=4, task="binary"):
        super().__init__()
        self.net = nn.Linear(width, 1)
        self.task = task
        self.train_metrics = MetricCollection({"acc": BinaryAccuracy()}, prefix="train_")

    def training_step(self, batch, batch_idx):
        x, y = batch
        y_hat = self.net(x).squeeze(1)
        self.train_metrics(y_hat, y)
        self.log_dict(self.train_metrics, batch_size=x.shape[0])
        loss = nn.functional.binary_cross_entropy_with_logits(y_hat, y.float())
        self.log("train_loss", loss, batch_size=x.shape[0])
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x).squeeze(1), y.float()))
        self.log("val_error", (self.net(x).squeeze(1) - y).abs().mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
'''


@pytest.mark.parametrize("base", [TASK, METRICS_TASK], ids=["plain", "metric_collection"])
def test_a_thin_subclass_changes_no_verdict_and_no_reason(tmp_path, run_cli, base):
    """Each fix of the base is decided, with the same reason, as where no class derives from it
    (the base's own logs were read again as the subclass's, more strictly: a log_dict of a
    MetricCollection made every fix of the base unsafe, with a reason about the subclass)."""
    import json

    def decisions(with_subclass: bool) -> list[tuple]:
        folder = tmp_path / ("with" if with_subclass else "without")
        folder.mkdir()
        (folder / "pyproject.toml").write_text("")
        (folder / "task.py").write_text(base)
        if with_subclass:
            (folder / "multilabel.py").write_text(THIN.format(more=""))
            (folder / "train.py").write_text("import lightning as L\nimport multilabel\n\n"
                                             "L.Trainer(strategy='ddp', devices=2).fit(multilabel.MultiLabelTask(width=4))\n")
        else:
            (folder / "train.py").write_text("import lightning as L\nimport task\n\n"
                                             "L.Trainer(strategy='ddp', devices=2).fit(task.Task(width=4))\n")
        proc = run_cli("--check", "--output-format", "json", "task.py", cwd=folder)
        return [(r["line"], r["applicability"], r.get("unsafe_reason")) for r in json.loads(proc.stdout)]

    assert decisions(True) == decisions(False)
