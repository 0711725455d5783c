"""Run one command and say what it cost: ``python bench/measure.py -- CMD ARGS...``.

Prints one JSON object on stdout: ``wall_s`` (wall-clock seconds), ``rc``, ``maxrss_mb`` (the largest
resident set of any one process of the command, from ``getrusage(RUSAGE_CHILDREN)``: this wrapper is a
fresh process per measurement, so the maximum is this command's alone) and ``tree_rss_mb`` (the largest
sum of the resident sets of the command and its descendants, sampled every 50 ms from /proc: what a
process pool costs in all). The command's stdout and stderr go to /dev/null unless ``--keep-output``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time

PAGE = os.sysconf("SC_PAGE_SIZE")


def _children(pid: int) -> list[int]:
    found = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as handle:
                found.extend(int(c) for c in handle.read().split())
    except OSError:
        pass
    return found


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _tree_rss(root: int) -> int:
    total, todo, seen = 0, [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += _rss(pid)
        todo.extend(_children(pid))
    return total


def main(argv: list[str]) -> int:
    keep = False
    if argv and argv[0] == "--keep-output":
        keep, argv = True, argv[1:]
    if argv and argv[0] == "--":
        argv = argv[1:]
    sink = None if keep else subprocess.DEVNULL
    peak = 0
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=sink, stderr=sink)
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _tree_rss(process.pid))
            stop.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    rc = process.wait()
    wall = time.perf_counter() - start
    stop.set()
    sampler.join()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = {
        "wall_s": wall,
        "rc": rc,
        "maxrss_mb": usage.ru_maxrss / 1024,  # kilobytes on Linux
        "tree_rss_mb": peak / 2**20,
        "cpu_s": usage.ru_utime + usage.ru_stime,
    }
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
