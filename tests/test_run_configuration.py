"""The run configuration as the project model reads it: settings made in another file or folder of
the project count (``use_distributed_sampler=False`` in ``scripts/train.py`` for a data module in
``data/``), through the real command line."""

from __future__ import annotations

import pytest

SHARDS = b'''import lightning as L
from torch.utils.data import DataLoader


class ShardedData(L.LightningDataModule):
    def setup(self, stage):
        self.files = sorted(self.all_files)[self.trainer.global_rank :: self.trainer.world_size]

    def train_dataloader(self):
        return DataLoader(self.files, batch_size=4)
'''
TRAIN = b'''import lightning as L

from data.shards import ShardedData
from project import Model

trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp"%s)
trainer.fit(Model(), ShardedData())
'''


def test_sampler_turned_off_in_another_folder_is_seen(tmp_path, run_cli):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "data").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "data" / "shards.py").write_bytes(SHARDS)
    for setting, reported in ((b"", True), (b", use_distributed_sampler=False", False),
                              (b", replace_sampler_ddp=False", False), (b", **{'use_distributed_sampler': False}", False)):
        (tmp_path / "scripts" / "train.py").write_bytes(TRAIN % setting)
        for named in (".", "data/shards.py"):
            proc = run_cli("--check", named, cwd=tmp_path)
            assert (b"DDP013" in proc.stdout) is reported, (setting, named, proc.stdout)


def test_a_yaml_configuration_that_turns_the_sampler_off_is_read(tmp_path, run_cli):
    """hydra's ``configs/trainer/ddp.yaml`` or a LightningCLI config: settings outside Python count."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "shards.py").write_bytes(SHARDS)
    (tmp_path / "train.py").write_bytes(b"import hydra\n\n\n@hydra.main(config_path='configs')\ndef main(cfg):\n"
                                        b"    trainer = hydra.utils.instantiate(cfg.trainer)\n")
    config = tmp_path / "configs" / "trainer"
    config.mkdir(parents=True)
    (config / "ddp.yaml").write_text("_target_: lightning.pytorch.Trainer\nstrategy: ddp\ndevices: 4\n")
    assert b"DDP013" in run_cli("--check", ".", cwd=tmp_path).stdout
    (config / "ddp.yaml").write_text("_target_: lightning.pytorch.Trainer\nstrategy: ddp\nuse_distributed_sampler: false\n")
    assert b"DDP013" not in run_cli("--check", ".", cwd=tmp_path).stdout


@pytest.mark.parametrize(("call", "ddp"), [
    ("L.Trainer(devices=4)", True),  # no strategy, several devices: Lightning 2.x chooses DDP
    ("L.Trainer()", True),  # every GPU of the machine
    ("L.Trainer(strategy=cfg.strategy, devices=4)", False),  # a strategy held in a name: not followed
    ("L.Trainer(strategy='ddp')", True),
    ("L.Trainer(devices=1)", False),
    ("L.Trainer(accelerator='cpu')", False),
    ("L.Trainer(strategy='fsdp', devices=4)", False),
    ("L.Trainer(strategy='auto', devices=[0])", False),
])
def test_a_trainer_lightning_makes_ddp_by_default(call, ddp):
    import ast

    from ddpfix.analysis.lightning import builds_ddp_trainer
    from ddpfix.imports import ImportTable

    source = f"import lightning as L\ntrainer = {call}\n"
    tree = ast.parse(source)
    assert builds_ddp_trainer(tree, ImportTable.from_tree(tree), source.encode()) is ddp
