"""A module class handed to a function of its file is left as it is only where that function
builds it or reads its name (``train_model(Model, ...)``); a subclass, a method of it, a store or
handing it on may change what runs (DDP004's ``replaced``)."""

from __future__ import annotations

import ast

import pytest

from ddpfix.rules._epoch_log_sync_safety import _only_built


def function(body: str) -> ast.FunctionDef:
    return ast.parse(f"def train(model_class, data, **kwargs):\n{body}").body[0]


@pytest.mark.parametrize(("body", "built"), [
    ("    name = model_class.__name__\n    return model_class(**kwargs)\n", True),
    ("    return model_class.load_from_checkpoint('best.ckpt')\n", False),  # a classmethod: code not read
    ("    class Traced(model_class):\n        pass\n    return Traced()\n", False),
    ("    registry.append(model_class)\n", False),
    ("    model_class.validation_step = None\n", False),
    ("    model_class = wrap(model_class)\n    return model_class()\n", False),
    ("    match data:\n        case {'cls': model_class}:\n            pass\n    return model_class()\n", False),
    ("    return getattr(model_class, 'fit')\n", False),
])
def test_only_a_function_that_builds_the_class_leaves_it(body, built):
    assert _only_built(function(body), "model_class") is built
