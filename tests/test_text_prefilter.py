"""The text prefilters (``rules/_text``) are supersets of ``may_apply``: every spelling that
``may_apply`` takes passes them (whitespace, comments and continuations between tokens, statements
over several lines, aliases), and they rule out the common shapes that only look alike.

Each "kept" source is one ``may_apply`` takes (asserted, so the case shows what it claims); each
"ruled out" source passes the rule's trigger words, is one ``may_apply`` rules out as well, and
must not cost a parse.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from ddpfix.rules import all_rules

RULES = {rule.code: rule for rule in all_rules()}

KEPT = {
    "DDP001": [
        "with trainer.init_module():\n    model = Net()\n",
        "with fabric.init_module( empty_init = True ):\n    model = Net()\n",
        'with (\n    torch.device("cuda"),\n):\n    model = Net()\n',
        'with torch . device ( "cuda" ) :\n    model = Net()\n',
        'with \\\n        torch.device("cuda:0"):\n    model = Net()\n',
        'with torch.device(  # the GPU )\n        "cuda"):\n    model = Net()\n',
        "with th.device(0):\n    model = Net()\n",
        'async def f():\n    async with torch.device(f"cuda:{rank}"):\n        model = Net()\n',
        'with open("log") as log, torch.device(\n        "cuda"):\n    model = Net()\n',
        'torch.set_default_device("cuda")\n',
        'torch.\\\n    set_default_device("cuda")\n',
        'from torch import set_default_device\nset_default_device(device="cuda:1")\n',
        'from torch import set_default_device as use\nuse(torch.device(0))\n',
        'from torch import device as on\nwith on("cuda"):\n    model = Net()\n',
        'from torch import (\n    device as on,\n)\nwith on(0):\n    model = Net()\n',
    ],
    "DDP002": [
        'g = torch.Generator(device="cuda")\nloader = DataLoader(ds, generator=g)\n',
        'g = torch.Generator(\n    device="cuda")\nloader = DataLoader(ds, generator=g)\n',
        'from torch import Generator as G\nloader = DataLoader(ds, generator=G("cuda"))\n',
        'loader = DataLoader(ds, generator=torch.Generator(**options))\n',
    ],
    "DDP005": [
        "import torch.distributed as dist\nif dist.get_rank() == 0:\n    dist.barrier()\n",
        "def f(self):\n    if (\n        self.trainer.is_global_zero\n    ):\n        x = self.all_gather(y)\n",
        "import torch\nif ready and \\\n        self.global_rank == 0:\n    torch.distributed.barrier()\n",
        'import torch\nif x == ")" and (\n        self.local_rank == 0):\n    torch.distributed.barrier()\n',
        "@rank_zero_only\ndef save(self):\n    self.trainer.strategy.barrier()\n",
        "@pl.utilities.rank_zero_only\ndef save(trainer):\n    trainer.save_checkpoint('x.ckpt')\n",
        "from torch.distributed import barrier, get_rank\nif get_rank() == 0:\n    barrier()\n",
        "from torch.distributed import barrier as sync, get_rank\nif get_rank() == 0:\n    sync()\n",
        "from torch.distributed import all_reduce\nfrom torch.distributed import get_rank as where\nif where() == 0:\n    all_reduce(t)\n",
        "import torch.distributed as d\nif d.get_rank() == 0:\n    pass\nelif self.global_rank:\n    d . all_reduce (t)\n",
        "def f(self):\n    if self.trainer.is_global_zero:\n        return\n    fabric.broadcast(x)\n",
        "def f(self):\n    if self.global_rank == 0:\n        value = self.acc.compute()\n",
        # An environment variable may be the file's only rank word.
        'import os, torch\nif int(os.environ["LOCAL_RANK"]) == 0:\n    torch.distributed.barrier()\n',
        'import os\nif os.environ.get("SLURM_PROCID") == "0":\n    self.trainer.strategy.barrier()\n',
        'import os\ndef f(fabric):\n    if os.getenv("NODE_RANK") != "0":\n        return\n    fabric.barrier()\n',
    ],
    "DDP011": [
        'from lightning import Trainer\ntrainer = Trainer(strategy="ddp_spawn")\ntrainer.fit(model)\n',
        'import lightning as L\ntrainer = L.Trainer(\n    strategy \\\n    = "ddp_spawn")\n',
    ],
    "DDP013": [
        "from torch.utils import data\nclass Shard(data.Dataset):\n    def __init__(self):\n        self.rank = 0\n",
        "from torch import utils\nclass Shard(utils.data.IterableDataset):\n    def __iter__(self):\n        return iter(range(self.rank))\n",
        "import torch\nclass Shard(torch . utils.data.Dataset):\n    rank = 0\n",
        "import lightning as L\nclass DM(L.LightningDataModule):\n    def setup(self, stage):\n        self.part = self.trainer.global_rank\n",
        'loader = DataLoader(ds, sampler=sampler)\ntrainer = Trainer(strategy="ddp")\n',
        'loader = DataLoader(ds, batch_sampler = s)\ntrainer = Trainer(\n    strategy="ddp")\n',
    ],
}

RULED_OUT = {
    "DDP001": [
        "with torch.cuda.device(0):\n    x = torch.zeros(1)\n",
        'with torch.device("meta"):\n    model = Net()\n',
        'device = torch.device("cuda")\nmodel = Net().to(device)\n',
        "class Strategy:\n    def init_module(self):\n        return nullcontext()\n",
        'def f():\n    """Example:\n\n    >>> torch.set_default_device("cuda")\n    """\n',
    ],
    "DDP002": [
        "g = torch.Generator()\nloader = DataLoader(ds, generator=g)\n",
        "g = torch.Generator(\n)\nloader = DataLoader(ds, generator=g)\n",
    ],
    "DDP005": [
        "import torch.distributed as dist\nrank = dist.get_rank()\nif ready:\n    dist.barrier()\n",
        "import torch.distributed as dist\nif dist.get_rank() == 0:\n    out = logits.gather(1, index)\n",
        "import functools\nif self.global_rank == 0:\n    total = functools.reduce(add, values)\n",
        'def f():\n    """Example:\n\n    >>> if dist.get_rank() == 0:\n    ...     dist.barrier()\n    """\n    return get_rank\n',
    ],
    "DDP011": [
        'from lightning import Trainer\ntrainer = Trainer(devices=2)\nmp.spawn(run)\n',
    ],
    "DDP013": [
        "from datasets import Dataset\nclass Shard(Dataset):\n    rank = 0\n",
        'loader = DataLoader(ds, sampler=sampler)\nrank = 0\n',
    ],
}


def cases(table):
    return [(code, source) for code, sources in table.items() for source in sources]


@pytest.mark.parametrize(("code", "source"), cases(KEPT))
def test_every_spelling_may_apply_takes_passes_the_text_prefilter(code, source):
    rule, data = RULES[code], source.encode()
    assert rule.has_trigger_words(data), "the case must pass the trigger words"
    assert rule.may_apply(ast.parse(data)), "the case must be one may_apply takes"
    assert rule.triggered_by(data)


@pytest.mark.parametrize(("code", "source"), cases(RULED_OUT))
def test_look_alikes_are_ruled_out_before_parsing(code, source):
    rule, data = RULES[code], source.encode()
    assert rule.has_trigger_words(data), "the case must pass the trigger words"
    assert not rule.may_apply(ast.parse(data)), "the case must be one may_apply rules out too"
    assert not rule.triggered_by(data)


def test_every_rule_with_a_text_prefilter_is_covered():
    """A rule that adds a text test to its words gets cases of both kinds here."""
    refined = {code for code, rule in RULES.items() if rule.has_text_prefilter()}
    assert refined and refined <= KEPT.keys() and refined <= RULED_OUT.keys()


def test_set_default_device_with_a_variable_is_ruled_out_by_may_apply():
    """``apply`` reports only a literal CUDA device there; torch's tests pass variables."""
    for source in ("torch.set_default_device(device)\n", "torch.set_default_device('cpu')\n", "set_default_device()\n"):
        assert not RULES["DDP001"].may_apply(ast.parse(source)), source


def test_a_with_header_over_many_lines_is_followed():
    items = "".join(f"    open('f{i}') as f{i},\n" for i in range(20))
    source = f'with (\n{items}    torch.device("cuda"),\n):\n    model = Net()\n'
    assert RULES["DDP001"].triggered_by(source.encode())


def test_the_device_check_reads_the_whole_call_when_a_string_may_hide_a_bracket():
    source = textwrap.dedent('''\
        with torch.device(")" and
                          "cuda"):
            model = Net()
        ''')
    assert RULES["DDP001"].may_apply(ast.parse(source))
    assert RULES["DDP001"].triggered_by(source.encode())


def test_every_rank_spelling_the_rank_tests_take_is_among_the_rank_rules_words():
    """A rank test may be a file's only rank word: each spelling ``RankTests`` understands (an
    attribute, an environment variable) must pass the trigger words of every rule about rank
    guards (``os.environ["RANK"]`` once did not)."""
    from ddpfix.analysis.ranks import RANK_ATTRIBUTES, RANK_VARIABLES

    spellings = {f"self.{a} == 0" for a in RANK_ATTRIBUTES} | {f'os.environ["{v}"] == "0"' for v in RANK_VARIABLES}
    for code in ("DDP003", "DDP005"):
        for spelling in sorted(spellings):
            data = f"if {spelling}:\n    self.log('x', 1)\n    self.trainer.strategy.barrier()\n".encode()
            assert RULES[code].has_trigger_words(data), (code, spelling)
    for variable in sorted(RANK_VARIABLES):  # DDP013 takes them inside a Dataset
        data = f"class Shard(Dataset):\n    start = os.environ['{variable}']\n".encode()
        assert RULES["DDP013"].has_trigger_words(data), variable


def test_every_hook_that_logs_per_epoch_passes_the_epoch_rules_words():
    """DDP004's words name each hook it reports in (``on_validation_batch_end`` once had none)."""
    from ddpfix.rules.epoch_log_sync import EPOCH_HOOKS

    for hook in sorted(EPOCH_HOOKS | {"training_step"}):
        data = f"class Net(LightningModule):\n    def {hook}(self):\n        self.log('x', 1.0)\n".encode()
        assert RULES["DDP004"].has_trigger_words(data), hook
