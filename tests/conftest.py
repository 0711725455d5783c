from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def ddpfix_executable() -> str:
    """The installed console script (next to this interpreter), so CLI tests go through the real entry point."""
    beside = Path(sys.executable).parent / "ddpfix"
    found = str(beside) if beside.exists() else shutil.which("ddpfix")
    if not found:
        pytest.fail("the ddpfix console script is not installed: pip install -e '.[test]'")
    return found


@pytest.fixture
def run_cli():
    def run(*args, cwd=None, input: bytes | None = None, timeout=120):
        env = dict(os.environ, NO_COLOR="1")
        return subprocess.run(
            [ddpfix_executable(), *map(str, args)],
            cwd=cwd,
            input=input if input is not None else b"",
            capture_output=True,
            timeout=timeout,
            env=env,
        )

    return run
