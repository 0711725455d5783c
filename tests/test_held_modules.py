"""A module the LightningModule holds stays known only while no code reaches it another way: an
alias or a part kept in another attribute, the module's own walk over every part, a library
registry the program fills, or a plain class of the file that keeps it (read where it is used).
Each case is a script whose DDP004 fix would be safe with the module left alone (adversarial
review, round 5)."""

from __future__ import annotations

import pytest

SCRIPT = '''import lightning as L
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


class LitModel(L.LightningModule):
    def __init__(self, model):
        super().__init__()
        self.model = model
{init}
{setup}
    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.model(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.cross_entropy(self.model(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

{tail}
'''
HOOK = "lambda m, i, o: dist.all_reduce(o)"


def script(init: str = "", setup: str = "", tail: str = "lm = LitModel(nn.Linear(4, 4))\n") -> str:
    return SCRIPT.format(init=init, setup=setup, tail=tail)


@pytest.mark.parametrize(("text", "reason"), [
    (script(init="        self.first = self.model", setup=f"    def setup(self, stage):\n        self.first.register_forward_hook({HOOK})\n"),
     b"`self.model` may be changed after it is built (line 12)"),
    (script(init="        self.first = model[0]", setup=f"    def setup(self, stage):\n        self.first.register_forward_hook({HOOK})\n",
            tail="lm = LitModel(nn.Sequential(nn.Linear(4, 4)))\n"),
     b"`__init__` uses `model` otherwise"),
    (script(init="        self.first = self.model[0]", setup=f"    def setup(self, stage):\n        self.first.register_forward_hook({HOOK})\n",
            tail="lm = LitModel(nn.Sequential(nn.Linear(4, 4)))\n"),
     b"`self.model` may be changed after it is built (line 12)"),
    (script(setup=f"    def setup(self, stage):\n        for m in self.modules():\n            m.register_forward_hook({HOOK})\n"),
     b"may be changed after it is built (line"),
    (script(tail="import timm\nfrom timm.models import register_model\n\n\n@register_model\ndef synced(**kw):\n"
                 "    return nn.Linear(4, 4)\n\n\nlm = LitModel(timm.create_model('synced'))\n"),
     b"may add a model a library builds by name, or hook every module"),
])
def test_a_held_module_reached_another_way_is_unknown(tmp_path, run_cli, text, reason):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(text)
    proc = run_cli("--check", "-v", "train.py", cwd=tmp_path)
    out = proc.stdout.replace(b"\n    ", b" ")
    assert b"DDP004 [~]" in out, out
    if reason is not None:
        assert reason in out, out


SAMPLER = '''
class Sampler:
    def __init__(self, model, steps):
        self.model = model
        self.steps = steps

    def sample(self, x):
        was = self.model.training
        self.model.eval()
        out = self.model(x)
        self.model.train(was)
        return out


backbone = nn.Linear(4, 4)
sampler = Sampler(backbone, 3)
lm = LitModel(backbone)
'''


def test_a_plain_class_that_keeps_the_module_is_read_where_it_uses_it(tmp_path, run_cli):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(script(tail=SAMPLER))
    proc = run_cli("--check", "-v", "train.py", cwd=tmp_path)
    assert b"DDP004 [*]" in proc.stdout, proc.stdout
    changed = SAMPLER.replace("        self.model.train(was)\n", f"        self.model.register_forward_hook({HOOK})\n")
    (tmp_path / "train.py").write_text(script(tail=changed))
    proc = run_cli("--check", "-v", "train.py", cwd=tmp_path)
    assert b"DDP004 [~]" in proc.stdout, proc.stdout
    # the Sampler's module reached from outside it
    (tmp_path / "train.py").write_text(script(tail=SAMPLER + f"sampler.model.register_forward_hook({HOOK})\n"))
    proc = run_cli("--check", "-v", "train.py", cwd=tmp_path)
    assert b"DDP004 [~]" in proc.stdout, proc.stdout


FACTORY = '''

def create_model(width):
    model = nn.Sequential(nn.Linear(4, width), nn.ReLU(), nn.Linear(width, 4))
    model[1] = nn.Tanh()
    for parameter in model[0].parameters():
        parameter.requires_grad = False
    return model


class Factory(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = create_model(8)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.cross_entropy(self.model(x), y))
'''


def test_a_function_of_the_file_that_builds_the_module_is_read(tmp_path, run_cli):
    """``self.model = create_model(8)``: every ``return`` of the function builds a known module (a
    local built by a known call and left as built); a hook put on it first leaves it unknown."""
    (tmp_path / "pyproject.toml").write_text("")
    head = SCRIPT.split("class LitModel")[0]
    (tmp_path / "train.py").write_text(head + FACTORY)
    proc = run_cli("--check", "-v", "train.py", cwd=tmp_path)
    assert b"DDP004 [*]" in proc.stdout, proc.stdout
    hooked = FACTORY.replace("    return model\n", f"    model.register_forward_hook({HOOK})\n    return model\n")
    (tmp_path / "train.py").write_text(head + hooked)
    proc = run_cli("--check", "-v", "train.py", cwd=tmp_path)
    assert b"DDP004 [~]" in proc.stdout and b"`create_model` returns `model`" in proc.stdout.replace(b"\n    ", b" "), proc.stdout


ROUND_SIX = {
    # torch's process-wide hooks change every module
    "global_registration_hook": script(tail="from torch.nn.modules import module as M\n"
                                            "M.register_module_module_registration_hook(lambda p, n, s: None)\n"
                                            "lm = LitModel(nn.Linear(4, 4))\n"),
    # the class reaches its module by a string, or by a name made at run time
    "getattr_literal": script(setup=f"    def setup(self, stage):\n        getattr(self, 'model').register_forward_hook({HOOK})\n"),
    "getattr_runtime": script(setup="    def setup(self, stage):\n        for name in ('model',):\n"
                                    f"            getattr(self, name).register_forward_hook({HOOK})\n"),
    # a part read by a callback, then hooked
    "callback_part": script(tail="class Hooks(L.Callback):\n    def on_fit_start(self, trainer, pl_module):\n"
                                 f"        head = pl_module.model[0]\n        head.register_forward_hook({HOOK})\n\n\n"
                                 "lm = LitModel(nn.Sequential(nn.Linear(4, 4)))\n"),
    # a top-level function whose parameter is called self
    "free_self": script(tail=f"def attach(self):\n    self.model.register_forward_hook({HOOK})\n\n\n"
                             "lm = LitModel(nn.Linear(4, 4))\nattach(lm)\n"),
    # the object goes where a walrus expression goes
    "walrus_leak": script(tail=f"BUILT = []\nBUILT.append(backbone := nn.Linear(4, 4))\nlm = LitModel(backbone)\n"
                               f"for m in BUILT:\n    m.register_forward_hook({HOOK})\n"),
    # a container of layers handed in, and a module class that hands itself on
    "layers_handed_in": script(tail="def create(layers):\n    return nn.Sequential(*layers)\n\n\n"
                                    "lm = LitModel(create([nn.Linear(4, 4)]))\n"),
    "class_hands_self_on": script(tail="SEEN = []\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                                       "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n        SEEN.append(self)\n\n"
                                       "    def forward(self, x):\n        return self.fc(x)\n\n\nlm = LitModel(Net())\n"),
    # a factory that hands out one global object to every caller
    "factory_returns_a_global": script(tail="BACKBONE = nn.Linear(4, 4)\n\n\ndef create():\n    return BACKBONE\n\n\n"
                                            "lm = LitModel(create())\n"),
}


@pytest.mark.parametrize("case", sorted(ROUND_SIX))
def test_round_six_ways_to_a_held_module_are_unknown(tmp_path, run_cli, case):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(ROUND_SIX[case])
    proc = run_cli("--check", "-v", "train.py", cwd=tmp_path)
    assert b"DDP004 [~]" in proc.stdout, proc.stdout


def test_the_plain_script_of_these_cases_is_fixed(tmp_path, run_cli):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(script())
    assert b"DDP004 [*]" in run_cli("--check", "-v", "train.py", cwd=tmp_path).stdout


INIT = '''def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        if m.bias is not None:
            m.bias.data.zero_()


'''


@pytest.mark.parametrize(("tail", "init", "safe"), [
    ("backbone = nn.Sequential(nn.Linear(4, 4))\nbackbone.apply(init_weights)\nlm = LitModel(backbone)\n", "", True),
    ("lm = LitModel(nn.Linear(4, 4))\nlm.apply(init_weights)\n", "", True),
    ("lm = LitModel(nn.Linear(4, 4))\n", "        self.apply(init_weights)", True),
    # an initialiser that registers a hook, or another function handed every part
    ("lm = LitModel(nn.Linear(4, 4))\nlm.apply(lambda m: m.register_forward_hook(print))\n", "", False),
    ("def hook_all(m):\n    m.register_forward_hook(print)\n\n\nlm = LitModel(nn.Linear(4, 4))\nlm.apply(hook_all)\n", "", False),
    ("def init_weights(m):\n    m.weight = None\n\n\nlm = LitModel(nn.Linear(4, 4))\n", "        self.apply(init_weights)", False),
])
def test_weights_initialised_through_apply_leave_the_module(tmp_path, run_cli, tail, init, safe):
    """``apply(f)`` hands every part to ``f``: it leaves the modules as built only where ``f`` only
    tests them and fills their tensors (``nn.init.*_``, ``.data.zero_()``)."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(script(init=init, tail=INIT + tail))
    proc = run_cli("--check", "-v", "train.py", cwd=tmp_path)
    assert (b"DDP004 [*]" if safe else b"DDP004 [~]") in proc.stdout, proc.stdout


@pytest.mark.parametrize(("body", "safe"), [
    ("        if isinstance(m, nn.Linear):\n            m.weight.data.normal_(0, 0.02)\n", True),
    ("        m.register_forward_hook(print)\n", False),
])
def test_a_method_that_initialises_weights_through_apply(tmp_path, run_cli, body, safe):
    (tmp_path / "pyproject.toml").write_text("")
    method = "    def _init_weights(self, m):\n" + body
    (tmp_path / "train.py").write_text(script(init="        self.apply(self._init_weights)", setup=method))
    proc = run_cli("--check", "-v", "train.py", cwd=tmp_path)
    assert (b"DDP004 [*]" if safe else b"DDP004 [~]") in proc.stdout, proc.stdout


ROUND_EIGHT = {
    # ``self.model.apply(init_weights)`` in the class, and torch's init reached through an alias
    "own_module_applies_an_initialiser": (script(init="        self.model.apply(init_weights)", tail=INIT + "lm = LitModel(nn.Linear(4, 4))\n"), True),
    "init_through_an_alias": (script(tail="import torch.nn.init as I\n\n\ndef init_weights(m):\n    I.zeros_(m.weight)\n\n\n"
                                          "lm = LitModel(nn.Linear(4, 4))\nlm.apply(init_weights)\n"), True),
    # an ``init`` that is not torch's, and torch's init patched
    "init_of_the_program": (script(tail="from helpers import init\n\n\ndef init_weights(m):\n    init.zeros_(m.weight)\n\n\n"
                                        "lm = LitModel(nn.Linear(4, 4))\nlm.apply(init_weights)\n"), False),
    "init_patched": (script(tail=INIT + "nn.init.xavier_uniform_ = print\nlm = LitModel(nn.Linear(4, 4))\nlm.apply(init_weights)\n"), False),
    # deepcopy replaced, OrderedDict replaced
    "deepcopy_patched": (script(tail="import copy\n\ncopy.deepcopy = print\nbackbone = nn.Linear(4, 4)\nema = copy.deepcopy(backbone)\n"
                                     "lm = LitModel(backbone)\n"), False),
    "deepcopy_for_an_ema": (script(tail="import copy\n\nbackbone = nn.Linear(4, 4)\nema = copy.deepcopy(backbone)\nlm = LitModel(backbone)\n"),
                            True),
}


def _fix_is(tmp_path, run_cli, text: str, safe: bool, more_helpers: str = "") -> None:
    """``train.py`` (with ``helpers.py`` beside it: an ``init``, a function of the program, and
    ``more_helpers``) gets DDP004's fix as safe or as unsafe."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text("def zeros_(t):\n    pass\n\n\ndef wrap(m):\n    pass\n\n\n" + more_helpers)
    (tmp_path / "train.py").write_text(text)
    proc = run_cli("--check", "-v", "train.py", cwd=tmp_path)
    assert (b"DDP004 [*]" if safe else b"DDP004 [~]") in proc.stdout, proc.stdout


@pytest.mark.parametrize("case", sorted(ROUND_EIGHT))
def test_round_eight_copies_and_initialisers(tmp_path, run_cli, case):
    _fix_is(tmp_path, run_cli, *ROUND_EIGHT[case])


FILLED_IN_THE_CLASS = {
    # a tensor of the held module filled in place: its values change, none of its code
    "init_function_on_a_weight": (script(init="        nn.init.zeros_(self.model.weight)"), True),
    "a_bias_told_to_fill_itself": (script(init="        self.model.bias.data.zero_()"), True),
    "a_part_of_a_sequential": (script(init="        torch.nn.init.normal_(self.model[0].weight, 0, 0.02)",
                                      tail="lm = LitModel(nn.Sequential(nn.Linear(4, 4)))\n"), True),
    # an ``init`` of the program, its code replaced, the module handed to an unknown function
    "init_of_the_program": (script(init="        init.zeros_(self.model.weight)", tail="from helpers import init\n\n\n"
                                        "lm = LitModel(nn.Linear(4, 4))\n"), False),
    "its_forward_replaced": (script(init="        nn.init.zeros_(self.model.weight)\n        self.model.forward = torch.sigmoid"),
                             False),
    # review round 13: the fill's result used (``requires_grad_`` returns the module itself)
    "a_hook_on_what_requires_grad_returns": (
        script(init="        self.model.requires_grad_(True).register_forward_hook(lambda m, i, o: o.cpu())"), False),
    "what_requires_grad_returns_kept": (
        script(init="        self.head = self.model.requires_grad_(True)\n"
                    "        self.head.register_forward_hook(lambda m, i, o: o.cpu())"), False),
    # a fill by a name the program defines may run its code, not torch's (in the file, or in a file
    # of its process: an initialiser handed to ``apply`` included)
    "a_fill_name_defined_in_the_file": (
        script(init="        self.model.bias.data.zero_()",
               tail="class Offload(nn.Module):\n    def zero_(self):\n        self.register_forward_hook(print)\n\n\n"
                    "lm = LitModel(nn.Linear(4, 4))\n"), False),
    "a_fill_name_defined_in_an_imported_file": (
        script(init="        nn.init.zeros_(self.model.weight)", tail="import helpers\n\n\nlm = LitModel(nn.Linear(4, 4))\n"),
        False, "class Head:\n    def uniform_(self):\n        pass\n"),
    "an_initialiser_applied_with_a_fill_name_defined": (
        script(init="        self.apply(init_weights)", tail=INIT + "import helpers\n\n\nlm = LitModel(nn.Linear(4, 4))\n"),
        False, "class Head:\n    def normal_(self):\n        pass\n"),
    "handed_to_an_unknown_function": (script(init="        nn.init.zeros_(self.model.weight)\n        helpers.wrap(self.model)",
                                             tail="import helpers\n\n\nlm = LitModel(nn.Linear(4, 4))\n"), False),
}


@pytest.mark.parametrize("case", sorted(FILLED_IN_THE_CLASS))
def test_a_tensor_of_the_held_module_filled_in_the_class(tmp_path, run_cli, case):
    """``nn.init.zeros_(self.net.weight)`` in ``__init__`` fills values: the module stays known."""
    _fix_is(tmp_path, run_cli, *FILLED_IN_THE_CLASS[case])
