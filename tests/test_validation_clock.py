"""Whether validation during ``fit`` may run by each rank's clock, as DDP004 asks it: Lightning 2.6
takes a duration as ``val_check_interval`` (a ``timedelta``, ``"DD:HH:MM:SS"``, a dict), and each
rank then validates when its own clock says, at a step of its own. A synced validation log then
waits for a rank still training (review round 15: a run that finished hung after the fix).
Unsynced, no collective runs there. A duration is read wherever the program may write one: a
value that is not a number in the code (a name, an argparse option, a string key), a configuration
or a launch script; and a Trainer whose every argument the command line may set (LightningCLI,
hydra). A Lightning pinned below 2.6 has no durations. Logs of the training loop are not asked."""

from __future__ import annotations

import pytest

MODEL = '''import lightning as L
import torch
from torch import nn


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_step=False, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
'''
HEAD = "import argparse\nimport datetime\nimport json\n\nimport lightning as L\n\nfrom model import Model\n\nL.seed_everything(0)\n"
FIT = "trainer.fit(Model())\n"
#: case -> (the training script's body, other files, whether the validation log's fix is safe)
CASES = {
    "an_int": ("trainer = L.Trainer(strategy='ddp', devices=2, val_check_interval=50)\n", {}, True),
    "a_fraction": ("trainer = L.Trainer(strategy='ddp', devices=2, val_check_interval=0.25)\n", {}, True),
    "a_timedelta": (
        "trainer = L.Trainer(strategy='ddp', devices=2, val_check_interval=datetime.timedelta(minutes=5))\n", {}, False),
    "a_duration_string": ("trainer = L.Trainer(strategy='ddp', devices=2, val_check_interval='00:00:05:00')\n", {}, False),
    "a_dict": ("trainer = L.Trainer(strategy='ddp', devices=2, val_check_interval={'minutes': 5})\n", {}, False),
    "a_name": ("every = 0.5\ntrainer = L.Trainer(strategy='ddp', devices=2, val_check_interval=every)\n", {}, False),
    "an_argparse_option": (
        "parser = argparse.ArgumentParser()\nparser.add_argument('--every', dest='val_check_interval', default=1.0)\n"
        "args = parser.parse_args()\ntrainer = L.Trainer(strategy='ddp', devices=2)\n", {}, False),
    "a_config_field": (
        "import dataclasses\n\n\n@dataclasses.dataclass\nclass TrainerConfig:\n    strategy: str = 'ddp'\n"
        "    val_check_interval: str = '00:00:05:00'\n\n\n"
        "trainer = L.Trainer(**dataclasses.asdict(TrainerConfig()))\n", {}, False),
    "a_config_field_that_is_a_number": (
        "import dataclasses\n\n\n@dataclasses.dataclass\nclass TrainerConfig:\n    strategy: str = 'ddp'\n"
        "    val_check_interval: float = 0.5\n\n\n"
        "trainer = L.Trainer(**dataclasses.asdict(TrainerConfig()))\n", {}, False),  # a Trainer of `**` arguments: its strategy is not read (helper-49)
    "a_string_key_set_at_run_time": (
        "cfg = {'strategy': 'ddp'}\ncfg['val_check_interval'] = '00:00:05:00'\ntrainer = L.Trainer(**cfg)\n", {}, False),
    "a_dict_entry_that_is_a_number": (
        "trainer = L.Trainer(**{'strategy': 'ddp', 'devices': 2, 'val_check_interval': 100})\n", {}, True),
    "a_dict_entry_that_is_a_string": (
        "trainer = L.Trainer(**{'strategy': 'ddp', 'devices': 2, 'val_check_interval': '00:01:00:00'})\n", {}, False),
    "unpacked_from_a_config_that_sets_a_number": (
        "trainer = L.Trainer(**json.load(open('trainer.json')))\n",
        {"trainer.json": '{"strategy": "ddp", "val_check_interval": 0.5}'}, False),  # a Trainer of `**` arguments: its strategy is not read (helper-49)
    "unpacked_from_a_config_that_sets_a_duration": (
        "trainer = L.Trainer(**json.load(open('trainer.json')))\n",
        {"trainer.json": '{"strategy": "ddp", "val_check_interval": "00:00:10:00"}'}, False),
    "a_yaml_duration": (
        "trainer = L.Trainer(strategy='ddp', devices=2)\n", {"configs/trainer.yaml": "trainer:\n  val_check_interval: 00:00:10:00\n"},
        False),
    "a_launch_script": (
        "trainer = L.Trainer(strategy='ddp', devices=2)\n", {"run.sh": "python train.py --trainer.val_check_interval 00:00:10:00\n"},
        False),
    "lightning_default_in_a_launch_script": (
        "trainer = L.Trainer(strategy='ddp', devices=2)\n", {"job.sbatch": "export PL_TRAINER_VAL_CHECK_INTERVAL=00:00:10:00\n"},
        False),
    # a launcher without an extension, a CI workflow in a dot folder (review round 16)
    "an_extensionless_launcher": (
        "trainer = L.Trainer(strategy='ddp', devices=2)\n",
        {"bin/train": '#!/bin/bash\nexport PL_TRAINER_VAL_CHECK_INTERVAL="${VAL_EVERY:-00:00:05:00}"\nexec python train.py\n'},
        False),
    "a_ci_workflow_env_block": (
        "trainer = L.Trainer(strategy='ddp', devices=2)\n",
        {".github/workflows/train.yml": "jobs:\n  train:\n    env:\n      PL_TRAINER_VAL_CHECK_INTERVAL: '00:00:05:00'\n"},
        False),
    "a_launch_script_that_sets_a_number": (
        "trainer = L.Trainer(strategy='ddp', devices=2)\n", {"run.sh": "python train.py --trainer.val_check_interval 0.5\n"},
        True),
    # (a data module class given: without one, the CLI's configuration may name any data module,
    # whose batch hooks are not read, and that would be the reason)
    "lightning_cli": ("from lightning.pytorch.cli import LightningCLI\nLightningCLI(Model, L.LightningDataModule)\n"
                      "trainer = None\n", {}, False),
    "a_timedelta_under_a_pin_before_durations": (
        "trainer = L.Trainer(strategy='ddp', devices=2, val_check_interval=datetime.timedelta(minutes=5))\n",
        {"requirements.txt": "lightning==2.5.5\n"}, True),
    "a_timedelta_under_a_pin_that_allows_durations": (
        "trainer = L.Trainer(strategy='ddp', devices=2, val_check_interval=datetime.timedelta(minutes=5))\n",
        {"requirements.txt": "lightning>=2.4\n"}, False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_validation_log_syncs_only_where_every_rank_validates_at_the_same_step(tmp_path, run_cli, case):
    script, files, safe = CASES[case]
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text(MODEL)
    fit = "" if "LightningCLI" in script else FIT
    (tmp_path / "train.py").write_text(HEAD + script + fit)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    proc = run_cli("--check", "-v", "model.py", cwd=tmp_path)
    out = proc.stdout.decode()
    validation = next(line for line in out.splitlines() if "'val_loss'" in line)
    training = next(line for line in out.splitlines() if "'train_loss'" in line)
    assert ("DDP004 [*]" if safe else "DDP004 [~]") in validation, out
    if "**" not in script or "**{" in script:  # (a Trainer of `**` arguments not read keeps every fix unsafe)
        assert "DDP004 [*]" in training, out  # the training loop runs every step on every rank
    if not safe:
        assert ("val_check_interval" in out and "a step of its own" in out) \
            or "is handed `**` arguments: its callbacks, plugins and strategy are not read" in out, out
