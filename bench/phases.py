"""Where ddpfix's time goes, phase by phase and rule by rule, on one core (no profiler overhead).

    python bench/phases.py PATH [PATH ...] [--files N] [--fix] [--cprofile N]

Reads the files once, gathers the facts as the CLI does, then runs ``sources.fix_source`` over each
with every rule — report-only (as ``--check``) unless ``--fix`` — and prints milliseconds per file
spent in each phase: the decode check, the trigger-word prefilter, the Lightning checks, CPython's
``ast.parse``, the rules' ``may_apply`` on that tree, LibCST's parse, positions, import tables, each
rule's ``apply``, and the compile check of rewritten code. Phases nest (a rule's ``apply`` includes
the positions it asks for), so the column does not add up to the total. ``--cprofile N`` also prints
cProfile's N most expensive functions (cumulative), for a closer look.

The numbers the closing notes and README quote for "where the time goes" come from this script.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import ddpfix.engine as engine  # noqa: E402
import ddpfix.positions as positions  # noqa: E402
from ddpfix.imports import ImportTable  # noqa: E402
from ddpfix.runner import discover, gather_facts, read_source  # noqa: E402
from ddpfix.sources import fix_source  # noqa: E402
from ddpfix.rules import all_rules  # noqa: E402

SPENT: Counter = Counter()
CALLS: Counter = Counter()


def timed(label: str, owner, attribute: str) -> None:
    """Wrap ``owner.attribute`` (a function, or a class's method of any kind) so that the time spent
    in it adds up under ``label``. Read through ``getattr``, a class method comes bound to its class,
    and the plain function set in its place forwards to it."""
    original = getattr(owner, attribute)

    def wrapper(*args, **kwargs):
        began = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            SPENT[label] += time.perf_counter() - began
            CALLS[label] += 1

    setattr(owner, attribute, wrapper)


def instrument(rules) -> None:
    timed("decode check", engine, "decode_problem")
    timed("lightning checks", engine, "is_lightning_code")
    timed("ast.parse", engine, "_check_syntax")
    timed("LibCST parse", engine, "_parse")
    timed("compile check", engine, "_compile_error")
    timed("positions (LibCST)", positions.Positions, "__init__")
    timed("edits carried out", engine, "apply_edits")
    for rule in rules:
        timed("prefilter (trigger words)", rule, "triggered_by")
        timed("may_apply (ast)", rule, "may_apply")
        timed(f"check {rule.code} {rule.name}", rule, "check")
    timed("tree positions", positions.TreePositions, "__init__")
    timed("import table (ast)", ImportTable, "from_tree")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--files", type=int, default=None, help="only the first N files (sorted)")
    parser.add_argument("--fix", action="store_true", help="apply fixes (as --diff/--write) instead of report-only")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N")
    args = parser.parse_args(argv)
    engine.set_up_for_trees()
    rules = all_rules()
    files, problems, _ = discover(args.paths, [], False)
    files = files[: args.files] if args.files else files
    facts_began = time.perf_counter()
    facts = gather_facts(files, rules, 1)
    facts_s = time.perf_counter() - facts_began
    read_began = time.perf_counter()
    sources = [(path, read_source(path)) for path in files]
    read_s = time.perf_counter() - read_began
    instrument(rules)
    profile = cProfile.Profile() if args.cprofile else None
    began = time.perf_counter()
    if profile:
        profile.enable()
    for path, data in sources:
        if isinstance(data, bytes):
            fix_source(path, data, rules, facts, fix=args.fix)
    if profile:
        profile.disable()
    total = time.perf_counter() - began
    count = len(files)
    size = sum(len(d) for _, d in sources if isinstance(d, bytes)) / 1e6
    print(f"{count} files, {size:.1f} MB, {'fix' if args.fix else 'report-only'} mode, one core")
    print(f"  facts pass (read + scan)        {facts_s:8.2f} s  {facts_s / count * 1000:8.2f} ms/file")
    print(f"  read                            {read_s:8.2f} s  {read_s / count * 1000:8.2f} ms/file")
    print(f"  fix_source, all of it           {total:8.2f} s  {total / count * 1000:8.2f} ms/file")
    for label, seconds in SPENT.most_common():
        print(f"    {label:<36} {seconds:8.2f} s  {seconds / count * 1000:8.2f} ms/file  ({CALLS[label]} calls)")
    if profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(args.cprofile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
