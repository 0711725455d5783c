"""Whether Lightning's distributed sampler may be off, as DDP004 asks it: an evaluation log's sync
hangs where a rank runs no batch. Off where a switch says so (a literal False, a configuration's
falsy spelling: YAML ``off``/``No``, JSON ``false``); maybe off wherever the program names the
switch with what is not a literal True (a name, a config's entry, an argparse option or an
attribute of that name), whatever its data. A Trainer built from outside the text
(``Trainer(**config)``, LightningCLI, ``from_argparse_args``, hydra) with the switch named nowhere
may have it turned off on the command line, which matters where the ranks' data may differ (code
that reads the rank, or no ``seed_everything``). A batch sampler of the program may leave a rank
without batches too (review round 9: each of these hung under gloo). With the sampler on, the
ranks' datasets may differ in length (a shard by rank, a random subset) without a fix changing a
correct value: the unsynced value is this rank's shard, and the synced mean is Lightning's (its
integer sync of the summed sizes rounds it). Code that reads the rank only to decide what to
report shapes no data; any other read, code run on rank 0 alone, a string's salted ``hash`` or a
generator made without a seed does."""

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
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
'''
SEEDED = "L.seed_everything(0)\n"
#: A data module of the program (imported by the training script), its ``prepare_data`` filled in.
DATA_MODULE = '''import os

import lightning as L

SPLIT = 2


class Data(L.LightningDataModule):
    def __init__(self):
        super().__init__()
        self.root, self.n, self.ids = "data", 48, []

    def prepare_data(self):
{prepare}

    def build(self):
        self.ids = list(range(8))
'''
#: A Trainer built from outside the text: the command line may turn the sampler off.
OUTSIDE = "trainer = L.Trainer(**json.load(open('trainer.json')))\n"
CASES = {
    "literal_on": (SEEDED + "trainer = L.Trainer(strategy='ddp', devices=2, use_distributed_sampler=True)\n", {}, True),
    "literal_off": (SEEDED + "trainer = L.Trainer(strategy='ddp', devices=2, use_distributed_sampler=False)\n", {}, False),
    "a_config_entry_and_rank_sharded_data": (
        SEEDED + "CONFIG = {'sampler': False}\nrank = int(os.environ.get('LOCAL_RANK', 0))\n"
        "trainer = L.Trainer(strategy='ddp', devices=2, use_distributed_sampler=CONFIG['sampler'])\n", {}, False),
    "unpacked_json_and_rank_sharded_data": (
        SEEDED + "files = sorted(os.listdir('.'))[trainer_rank() :: 2]\n"
        "trainer = L.Trainer(**json.load(open('trainer.json')))\n\n\ndef trainer_rank():\n    return torch.distributed.get_rank()\n",
        {}, False),
    # the Trainer bound to another name, subclassed, reached by its name, made by a factory, with a
    # call among its arguments: each takes its arguments from outside the text
    "unpacked_into_a_bound_class_and_rank_sharded_data": (
        SEEDED + "shard = int(os.environ['LOCAL_RANK'])\ntrainer_cls = L.Trainer\n"
        "trainer = trainer_cls(**json.load(open('trainer.json')))\n", {}, False),
    "unpacked_into_a_subclass_and_rank_sharded_data": (
        SEEDED + "shard = int(os.environ['LOCAL_RANK'])\n\n\nclass MyTrainer(L.Trainer):\n    pass\n\n\n"
        "trainer = MyTrainer(**json.load(open('trainer.json')))\n", {}, False),
    "unpacked_into_a_class_got_by_name_and_rank_sharded_data": (
        SEEDED + "shard = int(os.environ['LOCAL_RANK'])\nT = getattr(L, 'Trainer')\n"
        "trainer = T(**json.load(open('trainer.json')))\n", {}, False),
    "unpacked_into_a_factory_and_rank_sharded_data": (
        SEEDED + "from factory import build_trainer\nshard = int(os.environ['LOCAL_RANK'])\n"
        "trainer = build_trainer(**json.load(open('trainer.json')))\n", {"factory.py": "def build_trainer(**kw):\n    ...\n"},
        False),
    "unpacked_after_a_call_in_a_file_of_its_own_and_rank_sharded_data": (
        SEEDED + "from make import make\nshard = int(os.environ['LOCAL_RANK'])\ntrainer = make()\n",
        {"make.py": "import json\n\nimport lightning as L\n\n\ndef make():\n"
                    "    return L.Trainer(logger=L.pytorch.loggers.CSVLogger(str('logs')),\n"
                    "                     **json.load(open('trainer.json')))\n"}, False),
    "instantiated_by_the_cli_helper_and_rank_sharded_data": (
        SEEDED + "from lightning.pytorch.cli import instantiate_class\nshard = int(os.environ['LOCAL_RANK'])\n"
        "trainer = instantiate_class((), json.load(open('trainer.json')))\n", {}, False),
    "a_trainer_with_literal_arguments_and_rank_sharded_data": (
        SEEDED + "shard = int(os.environ['LOCAL_RANK'])\ntrainer_cls = L.Trainer\n"
        "trainer = trainer_cls(strategy='ddp', devices=2)\n", {}, False),  # a Trainer not built by a read Trainer(...) call: its strategy is not read (helper-49)
    "unpacked_without_a_seed": ("trainer = L.Trainer(**json.load(open('trainer.json')))\n", {}, False),
    # the Trainer under another name, or made by ``partial``
    "unpacked_into_an_alias_and_rank_sharded_data": (
        SEEDED + "from lightning.pytorch import Trainer as T\nshard = int(os.environ['LOCAL_RANK'])\n"
        "trainer = T(**json.load(open('trainer.json')))\n", {}, False),
    "unpacked_through_partial_and_rank_sharded_data": (
        SEEDED + "import functools\nshard = int(os.environ['LOCAL_RANK'])\n"
        "trainer = functools.partial(L.Trainer, **json.load(open('trainer.json')))()\n", {}, False),
    "unpacked_seeded_same_data_everywhere": (SEEDED + "trainer = L.Trainer(**json.load(open('trainer.json')))\n", {}, False),  # a Trainer not built by a read Trainer(...) call: its strategy is not read (helper-49)
    "unpacked_beside_a_literal_switch": (
        "trainer = L.Trainer(use_distributed_sampler=True, **json.load(open('trainer.json')))\n", {}, False),  # a Trainer not built by a read Trainer(...) call: its strategy is not read (helper-49)
    "yaml_off": (SEEDED + "trainer = L.Trainer(strategy='ddp', devices=2)\n",
                 {"configs/trainer.yaml": "trainer:\n  use_distributed_sampler: off\n"}, False),
    "json_false": (SEEDED + "trainer = L.Trainer(strategy='ddp', devices=2)\n",
                   {"trainer.json": '{"strategy": "ddp", "use_distributed_sampler": false}'}, False),
    "yaml_true": (SEEDED + "trainer = L.Trainer(strategy='ddp', devices=2)\n",
                  {"configs/trainer.yaml": "trainer:\n  use_distributed_sampler: true\n"}, True),
    # review round 10: set where the code does not show it, with data sharded by rank
    "exported_by_a_launch_script": (SEEDED + "shard = int(os.environ['RANK'])\ntrainer = L.Trainer(strategy='ddp', devices=2)\n",
                                    {"run.sh": "export PL_TRAINER_USE_DISTRIBUTED_SAMPLER=False\npython train.py\n"}, False),
    # Lightning's environment default wherever a run's environment is written
    "set_in_a_dockerfile": (SEEDED + "trainer = L.Trainer(strategy='ddp', devices=2)\n",
                            {"Dockerfile": "FROM python:3.11\nENV PL_TRAINER_USE_DISTRIBUTED_SAMPLER 0\n"}, False),
    "set_in_an_envrc": (SEEDED + "trainer = L.Trainer(strategy='ddp', devices=2)\n",
                        {".envrc": "export PL_TRAINER_USE_DISTRIBUTED_SAMPLER=false\n"}, False),
    "set_in_a_yaml_env_block": (SEEDED + "trainer = L.Trainer(strategy='ddp', devices=2)\n",
                                {"compose.yaml": "services:\n  train:\n    environment:\n      PL_TRAINER_USE_DISTRIBUTED_SAMPLER: '0'\n"},
                                False),
    "set_by_the_script_itself": (SEEDED + "os.environ['PL_TRAINER_USE_DISTRIBUTED_SAMPLER'] = '0'\n"
                                 "trainer = L.Trainer(strategy='ddp', devices=2)\n", {}, False),
    "set_true_in_a_dockerfile": (SEEDED + "trainer = L.Trainer(strategy='ddp', devices=2)\n",
                                 {"Dockerfile": "FROM python:3.11\nENV PL_TRAINER_USE_DISTRIBUTED_SAMPLER=1\n"}, True),
    "lightning_cli_and_rank_sharded_data": (
        SEEDED + "shard = int(os.environ['WORLD_SIZE'])\ncli = L.pytorch.cli.LightningCLI(Model, run=False)\ntrainer = cli.trainer\n",
        {}, False),
    # (pinned before 2.6: its command line could otherwise make validation run by the clock,
    # tests/test_validation_clock.py; a data module class given, as without one the CLI's
    # configuration may name any data module, whose batch hooks are not read)
    "lightning_cli_same_data_everywhere": (SEEDED + "cli = L.pytorch.cli.LightningCLI(Model, L.LightningDataModule, "
                                           "run=False)\ntrainer = cli.trainer\n",
                                           {"requirements.txt": "lightning==2.5.5\n"}, False),  # a Trainer not built by a read Trainer(...) call: its strategy is not read (helper-49)
    # a switch the program names with a value of its own is off for all we know, whatever the data
    "a_name_seeded_same_data_everywhere": (
        SEEDED + "uds = os.environ.get('UDS', '1') == '1'\n"
        "trainer = L.Trainer(strategy='ddp', devices=2, use_distributed_sampler=uds)\n", {}, False),
    "an_argparse_option_of_that_name": (
        SEEDED + "import argparse\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--use_distributed_sampler', type=int, default=1)\n"
        "trainer = L.Trainer(**vars(parser.parse_args()))\n", {}, False),
    "an_attribute_of_that_name_set": (
        SEEDED + "import types\nargs = types.SimpleNamespace()\nargs.replace_sampler_ddp = bool(os.environ.get('R'))\n"
        "trainer = L.Trainer(strategy='ddp', devices=2)\n", {}, False),
    "a_dict_display_entry_literally_true": (
        SEEDED + "trainer = L.Trainer(**{'use_distributed_sampler': True, 'devices': 2})\n", {}, True),
    "from_argparse_args_and_rank_sharded_data": (
        SEEDED + "import argparse\nshard = int(os.environ['LOCAL_RANK'])\n"
        "trainer = L.Trainer.from_argparse_args(argparse.Namespace())\n", {}, False),
    "from_argparse_args_same_data_everywhere": (
        SEEDED + "import argparse\ntrainer = L.Trainer.from_argparse_args(argparse.Namespace())\n", {}, True),
    # the sampler on: each rank's dataset may differ in length (a shard by rank, a random subset);
    # the unsynced value is this rank's shard whatever the lengths, and the synced mean Lightning's
    # (rounded by its integer sync of the summed sizes), so no correct value changes
    "rank_sharded_data_with_the_sampler_on": (
        SEEDED + "shard = int(os.environ['LOCAL_RANK'])\n"
        "trainer = L.Trainer(strategy='ddp', devices=2, use_distributed_sampler=True)\n", {}, True),
    "a_random_subset_with_the_sampler_on": (
        "keep = torch.rand(100) < 0.8\ntrainer = L.Trainer(strategy='ddp', devices=2)\n", {}, True),
    # built from outside the text (the command line may turn the sampler off): whether the ranks'
    # data may differ. A read of the rank that only decides what to report shapes no data.
    "the_rank_read_only_to_decide_what_to_print": (
        SEEDED + OUTSIDE + "if trainer.is_global_zero:\n    print('rank zero')\n", {}, False),  # a Trainer not built by a read Trainer(...) call: its strategy is not read (helper-49)
    "the_rank_read_to_choose_a_shard": (
        SEEDED + OUTSIDE + "if trainer.is_global_zero:\n    files = ['a', 'b']\n", {}, False),
    "the_rank_named_in_a_comment_only": (SEEDED + "# one shard per LOCAL_RANK\n" + OUTSIDE[:-1] + "  # 11 samples per rank\n", {}, False),  # a Trainer not built by a read Trainer(...) call: its strategy is not read (helper-49)
    "the_rank_read_after_a_hash_in_a_string": (SEEDED + "tag = '#' + os.environ['LOCAL_RANK']\n" + OUTSIDE, {}, False),
    "a_rank_logged_as_a_value": (SEEDED + OUTSIDE + "print('rank', int(trainer.global_rank))\n", {}, False),  # a Trainer not built by a read Trainer(...) call: its strategy is not read (helper-49)
    # review rounds 13 and 14: a guarded report that draws or uses up an iterator, a test that
    # changes data, a statement sharing the report's line, the rank by another name
    "a_rank_guarded_print_that_draws": (
        SEEDED + "x = torch.randn(64, 4)\nif int(os.environ.get('LOCAL_RANK', 0)) == 0:\n"
        "    print('an example', x[torch.randint(0, 64, (1,))])\n" + OUTSIDE, {}, False),
    "a_rank_guarded_print_that_uses_up_a_generator": (
        SEEDED + "extra = (i for i in range(9))\nif os.environ.get('LOCAL_RANK') == '0':\n    print(max(extra))\n" + OUTSIDE,
        {}, False),
    "a_rank_test_that_changes_data": (
        SEEDED + "files = ['a', 'b', 'c']\nif files.pop(int(os.environ.get('LOCAL_RANK', 0))):\n    print('dropped')\n"
        + OUTSIDE, {}, False),
    "a_statement_beside_the_report": (
        SEEDED + "n = 8\nprint(os.environ.get('LOCAL_RANK')); n += int(os.environ.get('LOCAL_RANK', 0))\n" + OUTSIDE, {}, False),
    "the_rank_of_rank_zero_only": (
        SEEDED + "from lightning.pytorch.utilities import rank_zero_only\nx = torch.randn(64, 4)[rank_zero_only.rank::2]\n"
        + OUTSIDE, {}, False),
    "code_run_on_rank_zero_only": (
        SEEDED + "from lightning.pytorch.utilities import rank_zero_only\nROWS = []\n\n\n@rank_zero_only\n"
        "def add_rows():\n    ROWS.extend([1, 2])\n\n\n" + OUTSIDE, {}, False),
    # draws that seed_everything does not make alike
    "a_split_by_string_hash": (
        SEEDED + "names = ['a', 'b', 'c', 'd']\nval = [n for n in names if hash(n) % 10 < 3]\n" + OUTSIDE, {}, False),
    "string_hashes_mapped": (SEEDED + "names = ['a', 'b']\nkeys = list(map(hash, names))\n" + OUTSIDE, {}, False),
    "a_generator_made_without_a_seed": (
        SEEDED + "import numpy as np\nkeep = np.random.default_rng().random(64) < 0.3\n" + OUTSIDE, {}, False),
    "an_item_taken_in_a_rank_zero_print": (
        SEEDED + "import queue\nq = queue.Queue()\nfor i in range(4):\n    q.put(i)\n"
        "if os.environ.get('LOCAL_RANK') == '0':\n    print('first', q.get())\n" + OUTSIDE, {}, False),
    "a_list_sorted_in_a_rank_zero_print": (
        SEEDED + "files = ['b', 'a']\nif os.environ.get('LOCAL_RANK') == '0':\n    print('files', files.sort())\n" + OUTSIDE,
        {}, False),
    "the_environment_read_to_decide_a_print": (
        SEEDED + OUTSIDE + "if os.environ.get('LOCAL_RANK', '0') == '0':\n    print('rank zero')\n", {}, False),  # a Trainer not built by a read Trainer(...) call: its strategy is not read (helper-49)
    "random_data_seeded": (SEEDED + "data = torch.randn(100, 4)\n" + OUTSIDE, {}, False),  # a Trainer not built by a read Trainer(...) call: its strategy is not read (helper-49)
    # ``prepare_data`` runs on local rank 0 alone: what it keeps on the instance the others lack
    "a_split_kept_in_prepare_data": (SEEDED + OUTSIDE, {"data.py": DATA_MODULE.format(
        prepare="        self.train_ids = list(range(64))[: self.n]")}, False),
    "a_count_added_in_prepare_data": (SEEDED + OUTSIDE, {"data.py": DATA_MODULE.format(
        prepare="        self.n += 16")}, False),
    "a_list_extended_in_prepare_data": (SEEDED + OUTSIDE, {"data.py": DATA_MODULE.format(
        prepare="        self.ids.extend(range(16))")}, False),
    "a_helper_of_the_instance_called_in_prepare_data": (SEEDED + OUTSIDE, {"data.py": DATA_MODULE.format(
        prepare="        self.build()")}, False),
    "a_global_set_in_prepare_data": (SEEDED + OUTSIDE, {"data.py": DATA_MODULE.format(
        prepare="        global SPLIT\n        SPLIT = 3")}, False),
    "a_download_in_prepare_data": (SEEDED + OUTSIDE, {"data.py": DATA_MODULE.format(
        prepare="        os.makedirs(self.root, exist_ok=True)\n        print('downloaded to', self.root)")}, False),  # a Trainer not built by a read Trainer(...) call: its strategy is not read (helper-49)
    "an_extensionless_launcher_turns_it_off": (
        SEEDED + "trainer = L.Trainer(strategy='ddp', devices=2)\n",
        {"scripts/run": "#!/bin/sh\nPL_TRAINER_USE_DISTRIBUTED_SAMPLER=0 exec python train.py\n"}, False),
    "a_batch_sampler_of_the_program": (
        SEEDED + "class Buckets(torch.utils.data.BatchSampler):\n    pass\n\n\n"
        "trainer = L.Trainer(strategy='ddp', devices=2)\n", {}, False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_evaluation_log_syncs_only_where_every_rank_runs_a_batch(tmp_path, run_cli, case):
    script, files, safe = CASES[case]
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "train.py").write_text("import json\nimport os\n\nimport lightning as L\nimport torch\n\n"
                                       "from model import Model\n\n" + script
                                       + ("import data\n" if "data.py" in files else "") + "trainer.fit(Model())\n")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    proc = run_cli("--check", "-v", "model.py", cwd=tmp_path)
    assert (b"DDP004 [*]" if safe else b"DDP004 [~]") in proc.stdout, proc.stdout
