"""The floors ddpfix is measured against: ``python bench/baselines.py regex|ast|libcst|read PATH...``.

Each walks the given folders for ``*.py`` files (sorted, as ddpfix does), reads every file and does
one thing with it, in one process, so start-up and walking cost the same as for a tool. Prints the
number of files seen (and, for parsers, of files that failed) as JSON on stdout.
"""

from __future__ import annotations

import json
import os
import re
import sys
import warnings

# What a prefilter looks for: the floor of "read every byte and look for some words".
WORDS = re.compile(rb"lightning|LightningModule|self\.log|Trainer|is_global_zero|random_split|Generator")


def files(paths: list[str]) -> list[str]:
    found = []
    for root in paths:
        if os.path.isfile(root):
            found.append(root)
            continue
        for folder, dirs, names in os.walk(root):
            dirs.sort()
            found.extend(os.path.join(folder, n) for n in names if n.endswith(".py"))
    return sorted(found)


def main(argv: list[str]) -> int:
    kind, paths = argv[0], argv[1:]
    sys.setrecursionlimit(20_000)
    if kind == "libcst":
        import libcst

        parse = libcst.parse_module
    elif kind == "ast":
        import ast

        parse = ast.parse
    seen = failed = hits = 0
    warnings.simplefilter("ignore")
    for path in files(paths):
        with open(path, "rb") as handle:
            data = handle.read()
        seen += 1
        if kind == "read":
            continue
        if kind == "regex":
            hits += len(WORDS.findall(data))
            continue
        try:
            parse(data)
        except Exception:  # noqa: BLE001 - a file the parser rejects still counts as seen
            failed += 1
    print(json.dumps({"files": seen, "failed": failed, "hits": hits}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
