"""The run configuration as the project model reads it: settings made in another file or folder of
the project count (``use_distributed_sampler=False`` in ``scripts/train.py`` for a data module in
``data/``), through the real command line."""

from __future__ import annotations

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
