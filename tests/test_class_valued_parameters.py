"""A module built from a class its constructor is handed (``act_fn=nn.GELU``, ``norm_layer=...``,
``encoder_class=Encoder``) is known where, at every construction, the parameter holds a class that
is read: a ``torch.nn`` layer that is neither a container nor a collective, or a module class of the
program; by what the call passes, or by the parameter's default. Anything else stays unknown."""

from __future__ import annotations

import pytest

TRAIN = '''import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from ops import Gather


class Block(nn.Module):
    def __init__(self, n, act_fn=nn.GELU):
        super().__init__()
{block_init}        self.net = nn.Sequential(nn.Linear(n, n), act_fn())

    def forward(self, x):
        return self.net(x)


class Net(nn.Module):
    def __init__(self, n, block=Block, act_fn={act_default}):
        super().__init__()
        self.body = block(n, act_fn=act_fn)
        self.head = nn.Linear(n, 3)

    def forward(self, x):
        return self.head(self.body(x))


def make_act():
    return nn.ReLU()


class LitModel(L.LightningModule):
    def __init__(self, n=8, net_class=Net):
        super().__init__()
        self.model = net_class(n{net_arguments})

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.model(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.cross_entropy(self.model(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    L.Trainer(strategy="ddp", devices=2).fit({construction})
{tail}'''
OPS = '''import torch.distributed as dist
from torch import nn


class Gather(nn.Module):
    def forward(self, x):
        dist.all_reduce(x)
        return x
'''


def train(block_init="", act_default="nn.Tanh", net_arguments="", construction="LitModel()", tail="") -> str:
    return TRAIN.format(block_init=block_init, act_default=act_default, net_arguments=net_arguments,
                        construction=construction, tail=tail)


CASES = {
    "defaults_of_torch_layers_and_file_classes": (train(), True),
    "a_file_class_handed_at_the_construction": (train(construction="LitModel(net_class=Net)"), True),
    "a_torch_layer_handed_on_through_two_classes": (train(net_arguments=", act_fn=nn.SiLU"), True),
    "a_collective_layer": (train(act_default="nn.SyncBatchNorm"), False),
    "a_container_class": (train(act_default="nn.Sequential"), False),
    "an_imported_class_not_read": (train(act_default="Gather"), False),
    "a_function_of_the_file": (train(act_default="make_act"), False),
    "a_lambda": (train(net_arguments=", act_fn=lambda: Gather()"), False),
    "one_construction_hands_an_unread_class": (train(construction="LitModel(net_class=Gather)"), False),
    "constructions_through_kwargs": (train(construction="LitModel(**{'net_class': Net})"), False),
    "the_parameter_bound_again": (train(block_init="        act_fn = Gather\n"), False),
    "the_class_patched_elsewhere": (train(tail="\nBlock.forward = lambda self, x: x\n"), False),
    # review round 10: the class built again through an object's class, kept first
    "built_again_through_type_of_self": (train(tail="\nmodel = LitModel()\nklass = type(model)\nother = klass(net_class=Gather)\n"),
                                         False),
    "the_class_name_only_read": (train(tail="\nprint(type(LitModel()).__name__)\n"), True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_class_handed_as_a_parameter_is_known_only_where_every_construction_hands_a_read_class(tmp_path, run_cli, case):
    text, safe = CASES[case]
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "ops.py").write_text(OPS)
    (tmp_path / "train.py").write_text(text)
    proc = run_cli("--check", "-v", "train.py", cwd=tmp_path)
    assert (b"DDP004 [*]" if safe else b"DDP004 [~]") in proc.stdout, proc.stdout
