"""What reading the whole project's facts costs when one file is named (project.py).

    python bench/project_facts.py [--files 300] [--runs 5] [--baseline-src /path/to/other/src] [--jobs N]

Builds a project (a ``pyproject.toml`` and FILES ``.py`` files: the fixture inputs, which are
Lightning code with findings, then plain modules) in a temporary folder, and a lone copy of one of
its files in a folder that is in no project. Then times, as ``ddpfix --check --quiet`` subprocesses
(start-up included, medians of RUNS, interleaved run by run so that load drifts hit all alike):

- ``outside``: the lone file, named (no project: no project walk, the fast path);
- ``one named``: that file named inside the project (its facts come from every file of the project);
- ``whole``: ``ddpfix --check .`` at the project root (the reference).

``one named - outside`` is the extra cost of the project facts. With ``--baseline-src`` (e.g. the
main checkout's ``src``, from before project facts) every case also runs with that code, side by
side, so the ratio is measured in the same minute.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAIN = '''"""A plain module: no Lightning, no torch."""

import json


def load_{n}(path):
    with open(path) as handle:
        return json.load(handle)


class Config{n}:
    def __init__(self, values):
        self.values = dict(values)

    def get(self, key, default=None):
        return self.values.get(key, default)
'''


def build(folder: Path, files: int) -> tuple[Path, Path]:
    project = folder / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "bench"\n')
    sources = sorted(p for p in (ROOT / "fixtures").rglob("*.py") if not p.stem.endswith((".expected", ".unsafe")))
    for index in range(files):
        text = sources[index].read_text() if index < len(sources) else PLAIN.format(n=index)
        (project / "pkg" / f"m{index:04d}.py").write_text(text)
    named = project / "pkg" / "m0000.py"
    lone = folder / "lone" / "m0000.py"
    lone.parent.mkdir()
    lone.write_bytes(named.read_bytes())
    return project, lone


def timed(src: str, args: list[str], cwd: Path) -> float:
    env = dict(os.environ, PYTHONPATH=src, NO_COLOR="1")
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ddpfix", "--check", "--quiet", *args], cwd=cwd, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=None, help="passed as --jobs (default: ddpfix's own)")
    parser.add_argument("--baseline-src", default=None)
    options = parser.parse_args()
    sources = {"this checkout": str(ROOT / "src")}
    if options.baseline_src:
        sources["baseline"] = options.baseline_src
    jobs = ["--jobs", str(options.jobs)] if options.jobs else []
    with tempfile.TemporaryDirectory() as temporary:
        project, lone = build(Path(temporary), options.files)
        cases = {
            "outside": (jobs + [lone.name], lone.parent),
            "one named": (jobs + ["pkg/m0000.py"], project),
            "whole": (jobs + ["."], project),
        }
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(options.runs):
            for label, src in sources.items():
                for case, (args, cwd) in cases.items():
                    times.setdefault((label, case), []).append(timed(src, args, cwd))
    print(f"{options.files} files in the project, {options.runs} runs, medians (s); jobs: {options.jobs or 'default'}")
    for label in sources:
        medians = {case: statistics.median(times[(label, case)]) for case in cases}
        row = "  ".join(f"{case} {seconds:.3f}" for case, seconds in medians.items())
        print(f"  {label:14} {row}  | one named - outside {medians['one named'] - medians['outside']:+.3f}")


if __name__ == "__main__":
    main()
