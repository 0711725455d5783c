"""DDP003's applicability where it rests on the facts: whether they come from the whole project
(``whole``) and whether every monitor of it is a literal (``unknown_monitors``), and ``--log-mode``."""

from __future__ import annotations

from ddpfix.sources import fix_source
from ddpfix.facts import ProjectFacts, file_facts
from ddpfix.rules.rank_gated_log import RankGatedLog


MODEL = b'''import lightning as L
import torch


class Model(L.LightningModule):
    def on_validation_epoch_end(self):
        loss = torch.stack(self.losses).mean()
        if self.trainer.is_global_zero:
            self.log("val_loss", loss)
        self.losses.clear()
'''
TRAIN = b'''import lightning as L
from lightning.pytorch.callbacks import EarlyStopping

from model import Model

trainer = L.Trainer(callbacks=[EarlyStopping(monitor=%s)])
trainer.fit(Model())
'''


def run(files: dict[str, bytes], whole: bool = True, **options):
    facts = ProjectFacts.merge((file_facts(path, data) for path, data in files.items()), whole=whole)
    result = fix_source("model.py", files["model.py"], [RankGatedLog], facts, options=options)
    return [(f.line, f.applicability if f.fixable else "manual", f.unsafe_reason) for f in result.findings], result


def test_rank_zero_only_is_safe_only_in_a_whole_run_whose_monitors_are_all_literals():
    found, result = run({"model.py": MODEL, "train.py": TRAIN % b'"val_acc"'})
    assert [kind for _, kind, _ in found] == ["safe"]
    assert b'self.log("val_loss", loss, rank_zero_only=True)' in result.output


def test_rank_zero_only_is_unsafe_in_a_partial_run():
    found, result = run({"model.py": MODEL}, whole=False)
    assert [kind for _, kind, _ in found] == ["unsafe"]
    assert "part of the project" in found[0][2]
    assert result.fixed is None
    alone = fix_source("model.py", MODEL, [RankGatedLog], None)  # the file is the whole run: a guess
    assert [f.applicability for f in alone.findings] == ["unsafe"]


def test_rank_zero_only_is_unsafe_when_another_file_has_a_monitor_that_is_not_a_literal():
    for monitor in (b"EarlyStopping(monitor=args.monitor)", b"ModelCheckpoint(**cfg)", b"dict(monitor=name)",
                    b'{"monitor": name}', b"LightningCLI(Model)"):
        train = b"import lightning as L\nfrom lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint\nimport model\n"
        found, _ = run({"model.py": MODEL, "train.py": train + b"x = " + monitor + b"\n"})
        assert [kind for _, kind, _ in found] == ["unsafe"], monitor
        assert "train.py:4" in found[0][2], found


def test_a_monitor_that_is_not_a_literal_makes_rank_zero_only_unsafe():
    model = MODEL + b'\n\nstopper = EarlyStopping(monitor=args.monitor)\n'
    found, _ = run({"model.py": model})
    assert [kind for _, kind, _ in found] == ["unsafe"]
    assert "not a literal" in found[0][2]


def test_an_epoch_form_monitor_makes_rank_zero_only_unsafe():
    found, _ = run({"model.py": MODEL, "train.py": TRAIN % b'"val_loss_epoch"'})
    assert [kind for _, kind, _ in found] == ["unsafe"]
    assert "val_loss_epoch" in found[0][2]


def test_a_monitored_key_moves_out_safely_even_in_a_partial_run():
    found, result = run({"model.py": MODEL, "train.py": TRAIN % b'"val_loss"'}, whole=False)
    assert [kind for _, kind, _ in found] == ["safe"]
    assert b'        self.log("val_loss", loss, sync_dist=True)\n        self.losses.clear()' in result.output


def test_a_monitor_in_a_script_that_does_not_import_the_module_makes_the_move_unsafe():
    """Another script of the program may train another model: moving the log out would turn its
    value from rank 0's into the mean over ranks, with no crash to prevent (a CPU DDP run of the
    reviewer's case: 1.626 became 1.488)."""
    other = TRAIN.replace(b"from model import Model", b"from segmentation import Segmenter").replace(b"Model()", b"Segmenter()")
    # Nothing joins the two scripts: the monitor cannot watch model.py's module; nothing else does.
    found, result = run({"model.py": MODEL, "train_seg.py": other % b'"val_loss"'})
    assert [kind for _, kind, _ in found] == ["safe"] and b"rank_zero_only=True" in result.output
    # A third file joins them (it imports both), but the monitor's own file imports neither the
    # module nor its class: whether that callback watches this module is not known.
    joined = {"model.py": MODEL, "train_seg.py": other % b'"val_loss"', "suite.py": b"import model\nimport train_seg\n"}
    found, _ = run(joined)
    assert [kind for _, kind, _ in found] == ["unsafe"]
    assert "neither is this module's nor imports it" in found[0][2]
    # Importing the class from a package that re-exports it, or the module itself, ties it.
    for line in (b"from model import Model", b"from pkg.model import Model as M", b"from model import *"):
        tied = TRAIN.replace(b"from model import Model", line)
        found, _ = run({"model.py": MODEL, "train.py": tied % b'"val_loss"'})
        assert [kind for _, kind, _ in found] == ["safe"], line


def test_forced_sync_dist_without_a_monitor():
    found, _ = run({"model.py": MODEL}, log_mode="sync-dist")
    assert [kind for _, kind, _ in found] == ["unsafe"]  # its value becomes the mean over ranks
    synced = MODEL.replace(b'loss)\n', b'loss, sync_dist=True)\n', 1)
    found, _ = run({"model.py": synced}, log_mode="sync-dist")
    assert [kind for _, kind, _ in found] == ["safe"]  # it hung; now it syncs as it asked


def test_a_monitored_log_already_marked_rank_zero_only_is_reported():
    marked = MODEL.replace(b'loss)\n', b'loss, rank_zero_only=True)\n', 1)
    found, _ = run({"model.py": marked, "train.py": TRAIN % b'"val_loss"'}, whole=False)
    assert [kind for _, kind, _ in found] == ["manual"]
    found, _ = run({"model.py": marked, "train.py": TRAIN % b'"val_acc"'}, whole=False)
    assert found == []


SYNCED_MODEL = MODEL.replace(b'"val_loss", loss)', b'"val_loss", loss, sync_dist=True)')
CALLBACKS = b"import lightning as L\nfrom lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint\nfrom model import Model\n"


def monitored_in(train: bytes) -> tuple[list, bytes]:
    """The findings on model.py where train.py is ``CALLBACKS + train``: a monitor of val_loss moves
    the log out of its guard (safe), never marks it rank_zero_only."""
    found, result = run({"model.py": SYNCED_MODEL, "train.py": CALLBACKS + train})
    return found, result.output


def test_a_monitor_set_as_an_attribute_is_a_monitor():
    found, output = monitored_in(b'ckpt = ModelCheckpoint(save_top_k=1)\nckpt.monitor = "val_loss"\n')
    assert [kind for _, kind, _ in found] == ["safe"]
    assert b"rank_zero_only" not in output and b'        self.log("val_loss", loss, sync_dist=True)\n        self.losses' in output
    found, _ = monitored_in(b'ckpt = ModelCheckpoint(save_top_k=1)\nckpt.monitor = "val_acc"\n')
    assert [kind for _, kind, _ in found] == ["safe"]  # another key: rank_zero_only, proven
    found, _ = monitored_in(b'ckpt = ModelCheckpoint(save_top_k=1)\nckpt.monitor = args.metric\n')
    assert [kind for _, kind, _ in found] == ["unsafe"] and "ckpt.monitor" in found[0][2]


def test_a_monitor_keyword_in_any_call_is_a_monitor():
    subclass = b'class Best(ModelCheckpoint):\n    def __init__(self):\n        super().__init__(monitor="val_loss", mode="min")\n'
    found, output = monitored_in(subclass)
    assert [kind for _, kind, _ in found] == ["safe"]
    assert b"rank_zero_only" not in output
    found, _ = monitored_in(subclass.replace(b'monitor="val_loss"', b"monitor=self.metric"))
    assert [kind for _, kind, _ in found] == ["unsafe"]


def test_model_checkpoint_takes_its_monitor_third():
    found, output = monitored_in(b'ckpt = ModelCheckpoint("ckpts", "{epoch}", "val_loss")\n')
    assert [kind for _, kind, _ in found] == ["safe"]
    assert b"rank_zero_only" not in output
    found, _ = monitored_in(b'ckpt = ModelCheckpoint("ckpts", "{epoch}")\n')  # no monitor
    assert [kind for _, kind, _ in found] == ["safe"]
    found, _ = monitored_in(b'ckpt = ModelCheckpoint("ckpts", "{epoch}", metric)\n')
    assert [kind for _, kind, _ in found] == ["unsafe"]


def test_the_same_key_synced_on_the_other_ranks_makes_rank_zero_only_unsafe():
    other = SYNCED_MODEL.replace(b"        self.losses.clear()", b"        else:\n            self.log(\"val_loss\", loss, sync_dist=True)\n        self.losses.clear()")
    found, _ = run({"model.py": other})
    assert [kind for _, kind, _ in found] == ["unsafe"] and "line 11" in found[0][2]
    unsynced = other.replace(b'loss, sync_dist=True)\n        self', b'loss)\n        self')
    found, _ = run({"model.py": unsynced})  # no sync there: no all-reduce to leave
    assert [kind for _, kind, _ in found] == ["safe"]


def test_log_dict_takes_rank_zero_only_from_1_5_on(tmp_path, run_cli):
    """``self.log`` took ``rank_zero_only`` in 1.4.0, ``self.log_dict`` in 1.5.0 (1.4.9's has no such
    parameter: a TypeError at the first epoch end; review round 15): under a 1.4.9 pin the gated
    ``log`` is fixed, the gated ``log_dict`` is reported without a fix."""
    (tmp_path / "requirements.txt").write_text("pytorch-lightning==1.4.9\n")
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text(
        "import pytorch_lightning as pl\nimport torch\n\n\nclass Model(pl.LightningModule):\n"
        "    def validation_epoch_end(self, outputs):\n        loss = torch.stack(outputs).mean()\n"
        "        if self.trainer.is_global_zero:\n            self.log('val_loss', loss)\n"
        "            self.log_dict({'val_mean': loss})\n")
    out = run_cli("--check", "-v", "--output-format", "json", "model.py", cwd=tmp_path).stdout
    import json

    found = {f["line"]: f for f in json.loads(out) if f["code"] == "DDP003"}
    assert found[9]["applicability"] == "safe", found
    assert not found[10]["fixable"] and "self.log_dict(rank_zero_only=...) (it arrived in 1.5.0)" in found[10]["detail"], found
