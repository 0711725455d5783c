"""A module class of the program is known only where all the code it may run is read: an imported
function it hands on (to ``checkpoint``, ``map``, as a decorator), hooks and parametrizations it
registers, a method replaced on the instance, torch's operator library, a collective layer, torch
functions patched or intercepted by a mode anywhere in the program, and tensors a distribution or an
unbound ``torch.Tensor`` method puts on the CPU (adversarial review, round 7)."""

from __future__ import annotations

import pytest

TRAIN = '''import math

import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
{imports}


class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)
{init}
    def forward(self, x):
        return {forward}


class LitModel(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = {held}

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.model(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.cross_entropy(self.model(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
{tail}'''
OPS = ("import torch.distributed as dist\nfrom torch import nn\n\n\ndef block(x):\n    dist.all_reduce(x)\n    return x\n\n\n"
       "class Gather(nn.Module):\n    def forward(self, x):\n        dist.all_reduce(x)\n        return x\n")


PE_TABLE = ("        pe = torch.zeros(64, n)\n        position = torch.arange(0, 64, dtype=torch.float).unsqueeze(1)\n"
            "        pe[:, 0::2] = torch.sin(position * math.log(2.0))\n")


def train(imports="", init="", forward="self.fc(x)", held="Net(8)", tail="") -> str:
    return TRAIN.format(imports=imports, init=init, forward=forward, held=held, tail=tail)


CASES = {
    "plain": (train(), True),
    "weight_norm_of_a_known_layer": (train(imports="from torch.nn.utils.parametrizations import weight_norm",
                                           held="weight_norm(nn.Linear(8, 8))"), True),
    "ordered_dict_of_known_layers": (train(imports="from collections import OrderedDict",
                                           held="nn.Sequential(OrderedDict([('fc', nn.Linear(8, 8)), ('act', nn.ReLU())]))"), True),
    "ordered_dict_of_an_unread_module": (train(imports="from collections import OrderedDict\nfrom ops import Block",
                                               held="nn.Sequential(OrderedDict([('fc', Block())]))"), False),
    "registry_of_classes": (train(held="MODELS['net'](8)", tail="\n\nMODELS = {}\nMODELS['net'] = Net\n"), True),
    "registry_filled_with_an_unread_class": (train(imports="from ops import Block", held="MODELS['net'](8)",
                                                   tail="\n\nMODELS = {'net': Net}\nMODELS['other'] = Block\n"), False),
    "registry_handed_on": (train(held="MODELS['net'](8)", tail="\n\nMODELS = {'net': Net}\nregister(MODELS)\n"), False),
    "ordered_dict_replaced": (train(imports="import collections\nfrom collections import OrderedDict",
                                    held="nn.Sequential(OrderedDict([('fc', nn.Linear(8, 8))]))",
                                    tail="\n\ncollections.OrderedDict = dict\n"), False),
    "registry_reached_through_globals": (train(held="MODELS['net'](8)", tail="\n\nMODELS = {'net': Net}\nglobals()['MODELS']['x'] = 1\n"),
                                         False),
    "weight_norm_of_an_unread_module": (train(imports="from torch.nn.utils.parametrizations import weight_norm\nfrom ops import Block",
                                              held="weight_norm(Block())"), False),
    "checkpoint_of_an_imported_function": (train(imports="from torch.utils.checkpoint import checkpoint\nfrom ops import block",
                                                 forward="checkpoint(block, self.fc(x))"), False),
    "map_of_an_imported_function": (train(imports="from ops import block", forward="list(map(block, [self.fc(x)]))[0]"), False),
    "module_alias": (train(imports="import ops", init="        self.o = None\n", forward="ops.block(self.fc(x))"), False),
    "hook_on_itself": (train(imports="from ops import block",
                             init="        self.register_forward_hook(lambda m, i, o: block(o))\n"), False),
    "forward_replaced": (train(imports="from ops import block", init="        self.forward = block\n"), False),
    "operator_library": (train(forward="torch.ops._c10d_functional.all_reduce(self.fc(x), 'sum', '0')"), False),
    "collective_layer": (train(held="nn.Sequential(nn.Linear(8, 8), nn.SyncBatchNorm(8))"), False),
    "torch_function_patched": (train(tail="\n\nF.linear = lambda *a: None\n"), False),
    "torch_function_mode": (train(imports="from torch.overrides import TorchFunctionMode"), False),
    "unbound_cpu_method": (train(forward="torch.Tensor.cpu(self.fc(x))"), False),
    "distribution_sample": (train(imports="from torch.distributions import Normal",
                                  forward="self.fc(x) + Normal(0.0, 1.0).sample((8,))"), False),
    # review round 10: code a layer or a builder is handed, a collective base under another name
    "transformer_activation_string": (train(held="nn.TransformerEncoderLayer(8, 2, 16, 0.0, 'gelu')"), True),
    "transformer_activation_function": (train(imports="from ops import block",
                                              held="nn.TransformerEncoderLayer(8, 2, 16, activation=block)"), False),
    "builder_handed_a_class": (train(imports="import torchvision\nfrom ops import Gather",
                                     held="torchvision.models.regnet_y_400mf(num_classes=8, activation=Gather)"), False),
    "builder_sizes": (train(imports="import torchvision", held="torchvision.models.resnet18(num_classes=2 * 4)"), True),
    "syncbn_under_another_name": (train(imports="from torch.nn import SyncBatchNorm as _SBN",
                                        init="        self.bn = GroupBN(n)\n", forward="self.bn(self.fc(x))",
                                        tail="\n\nclass GroupBN(_SBN):\n    pass\n"), False),
    # what __init__ computes only to register as a buffer moves with the module (a positional
    # encoding's table); kept otherwise, or handed on, it may stay on the CPU
    "table_made_to_register": (train(init=PE_TABLE + "        self.register_buffer('pe', pe.unsqueeze(0))\n",
                                     forward="self.fc(x) + self.pe[0, : x.size(0), : x.size(1)]"), True),
    "table_also_kept_plainly": (train(init=PE_TABLE + "        self.register_buffer('pe', pe)\n        self.steps = position\n",
                                      forward="self.fc(x) + self.steps.sum()"), False),
    "table_kept_plainly": (train(init=PE_TABLE + "        self.pe = pe\n", forward="self.fc(x) + self.pe[: x.size(0), : x.size(1)]"),
                           False),
    "table_kept_by_a_lambda": (train(init=PE_TABLE + "        self.register_buffer('pe', pe)\n        self.get = lambda: position\n"),
                               False),
    # review helper-40: a registration moves only the registered entry; what the class made of it
    # before the move (a copy, a container, a global, a walrus), or registering of its own, stays
    "buffer_copied_before_the_move": (train(init="        self.register_buffer('w', torch.zeros(n))\n"
                                               "        self.w0 = self.w.detach().clone()\n",
                                          forward="self.fc(x) + self.w0.sum()"), False),
    "buffers_kept_in_a_tuple": (train(init="        self.register_buffer('mu', torch.zeros(n))\n"
                                           "        self.stats = (self.mu,)\n", forward="self.fc(x) + self.stats[0].sum()"), False),
    "buffer_named_by_a_walrus": (train(init="        self.register_buffer('mu', (mu := torch.zeros(n)))\n        self.start = mu\n",
                                       forward="self.fc(x) + self.start.sum()"), False),
    "table_kept_in_a_global": (train(init="        global TABLE\n" + PE_TABLE.replace("pe", "TABLE") +
                                          "        self.register_buffer('pe', TABLE)\n", forward="self.fc(x) + TABLE.sum()",
                                     tail="\n\nTABLE = None\n"), False),
    "registering_of_its_own": (train(init="        self.kept = {}\n        self.register_buffer('mu', torch.zeros(n), persistent=False)\n",
                                     forward="self.fc(x) + self.kept['mu'].sum()",
                                     tail="\n\ndef _keep(self, name, tensor, persistent=True):\n    self.kept[name] = tensor\n\n\n"
                                          "Net.register_buffer = _keep\n"), False),
    "buffer_filled_in_place_by_init": (train(init="        self.register_buffer('mu', torch.empty(n))\n"
                                                  "        nn.init.zeros_(self.mu)\n        self.width = self.mu.size(0)\n",
                                             forward="self.fc(x) + self.mu.sum() / self.width"), True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_module_class_is_known_only_where_its_code_is_read(tmp_path, run_cli, case):
    text, safe = CASES[case]
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "ops.py").write_text(OPS)
    (tmp_path / "train.py").write_text(text)
    proc = run_cli("--check", "-v", "train.py", cwd=tmp_path)
    assert (b"DDP004 [*]" if safe else b"DDP004 [~]") in proc.stdout, proc.stdout


PRIOR = """import math

import lightning as L
import torch
from torch import nn


class Prior(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("logvar", torch.zeros(dim))

    def forward(self):
        return 0.5 * (self.logvar + math.log(2 * math.pi) + 1).sum()


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(16, 1)
{built}
    def validation_step(self, batch, batch_idx):
        x, y = batch
{step}

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters())
"""


def test_a_forward_run_before_the_move_may_keep_what_it_reads(tmp_path, run_cli):
    """``__init__`` that runs ``forward`` (a probe of the output's shape or a baseline) reads the
    registered buffer before Lightning moves it: what it keeps of it stays on the CPU, so the
    buffer's tensor counts as made on the CPU (``forward`` is then read like any other method)."""
    probe = PRIOR.replace('        self.register_buffer("logvar", torch.zeros(dim))\n',
                          '        self.register_buffer("logvar", torch.zeros(dim))\n        self.baseline = self.forward()\n')
    assert probe != PRIOR
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text(probe.format(built="        self.prior = Prior(16)\n",
                                                    step="        self.log('prior_entropy', self.prior())"))
    proc = run_cli("--check", "-v", "model.py", cwd=tmp_path)
    assert b"DDP004 [~]" in proc.stdout and b"may make a CPU tensor" in proc.stdout, proc.stdout


@pytest.mark.parametrize("built, step, safe", [
    ("        self.prior = Prior(16)\n", "        self.log('prior_entropy', self.prior())", True),
    ("\n    def setup(self, stage):\n        self.prior = Prior(16)\n", "        self.log('prior_entropy', self.prior())", True),
    ("\n    def setup(self, stage):\n        self._build()\n\n    def _build(self):\n        self.prior = Prior(16)\n",
     "        self.log('prior_entropy', self.prior())", True),
    ("\n    def on_validation_start(self):\n        self.prior = Prior(16)\n", "        self.log('prior_entropy', self.prior())", False),
    ("", "        prior = Prior(16)\n        self.log('prior_entropy', prior())", False),
])
def test_a_module_built_after_lightning_moves_the_model_keeps_its_buffers_on_the_cpu(tmp_path, run_cli, built, step, safe):
    """Lightning moves the module in ``strategy.setup``, after ``__init__``, ``setup`` and
    ``configure_model`` (``Trainer._run``): a module class built there (or in a helper only they
    call) moves with it; one built in a later hook or in the step keeps its buffers where it made
    them, the CPU (review helper-40)."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text(PRIOR.format(built=built, step=step))
    proc = run_cli("--check", "-v", "model.py", cwd=tmp_path)
    assert (b"DDP004 [*]" if safe else b"DDP004 [~]") in proc.stdout, proc.stdout
