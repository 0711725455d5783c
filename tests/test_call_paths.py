"""``analysis.call_paths``: a call of a helper reaches a statement unless the literals it binds
decide an ``if`` around it the other way; anything not certain reaches."""

from __future__ import annotations

import ast

import pytest

from ddpfix.analysis.call_paths import bound_constants, reaches

HELPER = '''
class M:
    def step(self, batch, stage="train", *, flag=False):
        if stage == "train":
            a = 1
        elif stage in ("val", "test") and not flag:
            b = 2
        else:
            c = 3
        if flag is True:
            d = 4
'''


def parts(source: str = HELPER):
    tree = ast.parse(source)
    function = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    stores = {n.targets[0].id: n for n in ast.walk(function) if isinstance(n, ast.Assign)}
    return function, stores


def call(text: str) -> ast.Call:
    return ast.parse(text, mode="eval").body


@pytest.mark.parametrize(("text", "reached"), [
    ("self.step(b)", {"a"}),  # the defaults: "train", flag False
    ("self.step(b, 'val')", {"b"}),
    ("self.step(b, stage='test')", {"b"}),
    ("self.step(b, 'test', flag=True)", {"c", "d"}),
    ("self.step(b, 'other')", {"c"}),
])
def test_literals_decide_the_branches(text, reached):
    function, stores = parts()
    assert {name for name, node in stores.items() if reaches(function, node, call(text))} == reached


@pytest.mark.parametrize("text", ["self.step(b, mode)", "self.step(*args)", "self.step(b, **options)"])
def test_a_value_not_literal_reaches_every_branch(text):
    function, stores = parts()
    expected = {"a", "b", "c", "d"}
    if text == "self.step(b, mode)":
        expected = {"a", "b", "c"}  # flag keeps its literal default, which skips ``d``
    assert {name for name, node in stores.items() if reaches(function, node, call(text))} == expected


def test_a_parameter_bound_again_is_not_taken_from_the_call():
    function, stores = parts(HELPER.replace('        if stage == "train":', '        stage = stage.lower()\n        if stage == "train":'))
    assert bound_constants(function, call("self.step(b, 'VAL')")) == {"flag": False}
    assert reaches(function, stores["a"], call("self.step(b, 'VAL')"))


def test_strings_compared_by_identity_are_not_decided():
    source = "class M:\n    def step(self, stage):\n        if stage is 'val':\n            a = 1\n"
    function, stores = parts(source)
    assert reaches(function, stores["a"], call("self.step('train')"))


@pytest.mark.parametrize("rebinding", [
    "        match batch:\n            case {'split': stage}:\n                pass\n",
    "        try:\n            pass\n        except ValueError as stage:\n            pass\n",
    "        import stage\n",
    "        for stage in batch:\n            pass\n",
])
def test_a_parameter_bound_by_any_form_is_not_taken_from_the_call(rebinding):
    source = f"class M:\n    def step(self, batch, stage):\n{rebinding}        if stage == 'val':\n            a = 1\n"
    function, stores = parts(source)
    assert bound_constants(function, call("self.step(b, 'train')")) == {}
    assert reaches(function, stores["a"], call("self.step(b, 'train')"))
