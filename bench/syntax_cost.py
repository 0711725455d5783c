"""What a syntax check of every file would cost a folder run (issue 21: Ruff parses every file; the
scan skips files without any rule's trigger words, unparsed).

    python bench/syntax_cost.py PATH [--rounds 3]

On one core, in one process, each phase timed with the files already in the page cache:

- ``check``: the run ``ddpfix --check --jobs 1 PATH`` does (discovery excluded): the scan, then the
  report-only fix pass over the files the scan sends it;
- ``read``: reading every file's bytes (the floor of any pass);
- ``parse all``: ``ast.parse`` of every file (what checking every file's syntax costs);
- ``parse skipped``: ``ast.parse`` of the files the run never parses (the extra cost of checking
  them too, on top of ``check``).

The numbers docs/interrupts.md quotes come from this script.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ddpfix.engine import set_up_for_trees  # noqa: E402
from ddpfix.rules import all_rules  # noqa: E402
from ddpfix.runner import _scan, check_files, discover, read_source  # noqa: E402


def parse_each(datas: list[bytes]) -> int:
    failures = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for data in datas:
            try:
                ast.parse(data)
            except (SyntaxError, ValueError, MemoryError, RecursionError):
                failures += 1
    return failures


def best(function, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        function()
        times.append(time.perf_counter() - began)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    set_up_for_trees()
    files, _, _ = discover([args.path], respect_gitignore=False)
    rules = list(all_rules())
    options = {"log_mode": "auto", "show_suppressed": False, "unsafe_fixes": False}
    _, to_fix, done = _scan(files, rules, 1, options, fix=False)
    parsed = set(to_fix) | set(done)
    skipped = [path for path in files if path not in parsed]
    datas = {path: read_source(path) for path in files}
    datas = {path: data for path, data in datas.items() if isinstance(data, bytes)}
    size = sum(map(len, datas.values()))
    skipped_datas = [datas[path] for path in skipped if path in datas]

    check = best(lambda: check_files(files, rules, 1, options, fix=False), args.rounds)
    read = best(lambda: [read_source(path) for path in files], args.rounds)
    parse_all = best(lambda: parse_each(list(datas.values())), args.rounds)
    parse_skipped = best(lambda: parse_each(skipped_datas), args.rounds)
    failures = parse_each(list(datas.values()))

    print(f"{len(files):,} files, {size / 2**20:.1f} MiB; the run parses {len(parsed):,}, skips {len(skipped):,} "
          f"({sum(map(len, skipped_datas)) / 2**20:.1f} MiB); {failures} do not parse")
    print(f"best of {args.rounds}, one core:")
    for label, seconds in [("check (--check -j1, no discovery)", check), ("read every file", read),
                           ("ast.parse every file", parse_all), ("ast.parse the skipped files", parse_skipped)]:
        print(f"  {label:<36} {seconds:7.2f} s  {seconds / check:6.2f}x check")
    print(f"  checking the skipped files too: check + {parse_skipped / check:.0%}")


if __name__ == "__main__":
    main()
