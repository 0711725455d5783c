"""DDP007's reasons name what the file holds, in full."""

from __future__ import annotations

import pytest

from ddpfix.rules._tensor_attribute_safety import _averaging


@pytest.mark.parametrize(("text", "named"), [
    ("cb = WeightAveraging()\n", "WeightAveraging"),
    ("from lightning.pytorch.callbacks import EMAWeightAveraging\n", "EMAWeightAveraging"),
    ("from torch.optim import swa_utils\n", "swa_utils"),
    ("ema = ModelEma(model)\n", "ModelEma"),
])
def test_the_averaging_named_is_the_whole_word(text, named):
    assert _averaging(text).startswith(f"the file names {named}: weight averaging")


def test_no_averaging_no_reason():
    assert _averaging("model = Net()\n") is None
