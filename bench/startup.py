"""Whole-process time of ``ddpfix --check FILE`` on one small file: what a pre-commit hook or an
editor's on-save run pays, almost all of it interpreter start-up and module imports. Target: a
median of at most 80 ms.

    python bench/startup.py                       # the ddpfix on PATH, else this Python's -m ddpfix
    python bench/startup.py --ddpfix /tmp/venv    # a venv's bin/ddpfix (or the path of an executable)
    python bench/startup.py --ddpfix /tmp/a --ddpfix /tmp/b --runs 31 --json

Two files, each alone in a folder of a temporary directory without project markers: ``plain``
(``import torch`` and a tensor: nothing for any rule) and ``lightning`` (a LightningModule logging
in ``validation_step``: the rules run and report). Each run is a fresh process with its output
thrown away, timed from the parent: wall clock, and the CPU time it used (less disturbed by other
load on a shared machine; the target is on the wall clock). With several ``--ddpfix``, runs
alternate between them so that a busy machine slows them alike: compare their medians, not runs of
different moments. One untimed run of each comes first (page cache, ``.pyc`` files).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MS = 80.0

FILES = {
    "plain": "import torch\nx = torch.ones(2)\n",
    "lightning": (
        "import lightning as L\n"
        "import torch\n"
        "\n"
        "\n"
        "class Model(L.LightningModule):\n"
        "    def validation_step(self, batch, batch_idx):\n"
        "        loss = self.layer(batch).sum()\n"
        '        self.log("val_loss", loss)\n'
        "        return loss\n"
    ),
}


def command_of(choice: str | None) -> list[str]:
    if choice is None:
        found = shutil.which("ddpfix")
        return [found] if found else [sys.executable, "-m", "ddpfix"]
    path = Path(choice)
    if path.is_dir():
        path = path / "bin" / "ddpfix"
    if not path.is_file():
        raise SystemExit(f"no ddpfix executable at {path}")
    return [str(path)]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(command: list[str], folder: Path) -> tuple[float, float]:
    cpu_before = children_cpu()
    began = time.perf_counter()
    done = subprocess.run(
        [*command, "--check", "small.py"],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    elapsed = time.perf_counter() - began
    # 0: nothing found, 1: findings; anything else means the timing is of a failure.
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr.decode()}")
    return elapsed * 1000, (children_cpu() - cpu_before) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--ddpfix",
        action="append",
        help="a ddpfix executable or a venv holding one; repeat to compare, runs interleaved",
    )
    parser.add_argument("--runs", type=int, default=21, help="timed runs per file and ddpfix")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    commands = [command_of(choice) for choice in args.ddpfix or [None]]

    times: dict[tuple[int, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="ddpfix-startup-") as temp:
        folders = {}
        for name, text in FILES.items():
            folder = Path(temp) / name
            folder.mkdir()
            (folder / "small.py").write_text(text)
            folders[name] = folder
        for index, command in enumerate(commands):
            for name, folder in folders.items():
                run_once(command, folder)
                times[index, name] = []
        for _ in range(args.runs):
            for name, folder in folders.items():
                for index, command in enumerate(commands):
                    times[index, name].append(run_once(command, folder))

    results = []
    for (index, name), runs in times.items():
        walls = [wall for wall, _ in runs]
        results.append(
            {
                "ddpfix": " ".join(commands[index]),
                "file": name,
                "runs": len(runs),
                "median_ms": round(statistics.median(walls), 1),
                "min_ms": round(min(walls), 1),
                "max_ms": round(max(walls), 1),
                "cpu_median_ms": round(statistics.median(cpu for _, cpu in runs), 1),
                "target_ms": TARGET_MS,
                "met": statistics.median(walls) <= TARGET_MS,
            }
        )
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
        return
    print(f"ddpfix --check small.py, {args.runs} runs each, ms (target: median <= {TARGET_MS:.0f})")
    for result in results:
        print(
            f"{result['file']:<10} median {result['median_ms']:6.1f}  "
            f"min {result['min_ms']:6.1f}  max {result['max_ms']:6.1f}  "
            f"cpu {result['cpu_median_ms']:6.1f}  "
            f"{'met' if result['met'] else 'MISS'}  {result['ddpfix']}"
        )


if __name__ == "__main__":
    main()
