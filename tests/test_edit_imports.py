"""Fixes that need an import add it once, where the imports are."""

from __future__ import annotations

import libcst as cst

from ddpfix.sources import fix_source
from ddpfix.edits._imports import ensure_import
from ddpfix.rules.device_map_under_ddp import DeviceMapUnderDdp

ALL = {"unsafe_fixes": True}  # the fix machinery is tested with every fix, safe or not


def add(source: str) -> str:
    return ensure_import(cst.parse_module(source), "os").code


def test_after_the_leading_imports():
    assert add('"""Doc."""\nimport sys\nfrom x import y\n\nz = 1\n') == '"""Doc."""\nimport sys\nfrom x import y\nimport os\n\nz = 1\n'


def test_after_a_docstring_when_there_are_no_imports():
    assert add('"""Doc."""\nz = 1\n') == '"""Doc."""\nimport os\nz = 1\n'
    assert add("z = 1\n") == "import os\nz = 1\n"


def test_not_when_present_and_once_for_many_fixes():
    assert add("import os\nz = 1\n") == "import os\nz = 1\n"
    # ``import os.path`` or ``from os import environ`` do not bind ``os``.
    assert add("from os import environ\n").count("import os\n") == 1
    source = b'''import lightning as L
from transformers import AutoModel


class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.a = AutoModel.from_pretrained("a", load_in_8bit=True, device_map="auto")
        self.b = AutoModel.from_pretrained("b", load_in_4bit=True, device_map=0)
'''
    result = fix_source("m.py", source, [DeviceMapUnderDdp], options=ALL)
    assert result.fixed.count(b"import os\n") == 1
    assert result.fixed.count(b'device_map={"": int(os.environ.get("LOCAL_RANK", 0))}') == 2
    again = fix_source("m.py", result.fixed, [DeviceMapUnderDdp], options=ALL)
    assert again.fixed is None
