from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The differential cases are scripts that the harness runs (tests/test_differential.py), not tests:
# one named test_*.py would be collected.
collect_ignore_glob = ["differential/cases/*"]
FIXTURES = ROOT / "fixtures"


def fixture_sources() -> list[str]:
    """The text of every Python fixture (inputs and expected outputs): real-looking code for the
    checks that must hold on any source."""
    paths = sorted(FIXTURES.rglob("*.py"))
    assert len(paths) > 100
    return [path.read_text(encoding="utf-8") for path in paths]


def libcst_parses(source: str) -> bool:
    """hypothesmith's grammar admits a little that LibCST does not parse: such programs are skipped."""
    import libcst

    try:
        libcst.parse_module(source)
    except Exception:
        return False
    return True


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


@pytest.fixture
def run_cli_unsafe(run_cli):
    """``run_cli`` with ``--unsafe-fixes``: for the tests of the fix machinery itself (diffs, writes,
    encodings, stdin), which must hold for every fix, whatever its applicability."""
    def run(*args, **kwargs):
        return run_cli(*args, "--unsafe-fixes", **kwargs)

    return run


def default_sigint() -> None:
    """A child's SIGINT as at a terminal (Python's KeyboardInterrupt, or a program's own handler): a
    test that sends Ctrl-C must not depend on how its own runner was started (a shell's background
    job, a CI service, ``nohup``: SIGINT ignored, which children inherit and Python then keeps).
    For ``subprocess.Popen(..., preexec_fn=default_sigint)``."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def pytest_collection_finish(session):
    """Where the selected tests include differential cases of Lightning 1.x, its interpreter
    (``.venv-lightning1``, a minute or two of pip) starts being made now, beside the first tests,
    rather than when the differential module reaches those cases."""
    import importlib.util

    if session.config.option.collectonly or importlib.util.find_spec("torch") is None:
        return
    cases = [item.callspec.params["case"] for item in session.items
             if getattr(item, "originalname", "") == "test_case" and item.module.__name__ == "test_differential"]
    if any(case.options.get("lightning") == "1" for case in cases):
        sys.path.insert(0, str(Path(__file__).resolve().parent / "differential"))
        import harness

        harness.ensure_lightning1_in_background()
