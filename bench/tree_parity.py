"""Proof over whole trees that the rules' tree checks report what their ``apply`` reports.

    python bench/tree_parity.py PATH... [--rule DDP004] [--files N]

For every Python file and notebook under PATH (facts gathered over all of them, as one run), every rule that
has both a ``check`` (CPython's tree) and an ``apply`` (LibCST's) runs report-only twice: as
shipped and with its ``check`` switched off. Prints per rule the files compared, the files where
the tree check answered on its own (no ``NeedsLibCST``) and every difference; exit 1 on one.
``tests/test_tree_checks.py`` does the same over the fixtures in CI.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import ddpfix.engine as engine  # noqa: E402
from ddpfix.sources import fix_source  # noqa: E402
from ddpfix.facts import ProjectFacts, file_facts  # noqa: E402
from ddpfix.transforms import all_rules  # noqa: E402


def _findings(path: str, data: bytes, rule, facts) -> list[tuple]:
    result = fix_source(path, data, [rule], facts, fix=False)
    return sorted((f.line, f.column, f.end_line, f.end_column, f.code, f.message, f.fixable) for f in result.findings) + \
        sorted((p.code, p.message) for p in result.problems)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--rule", action="append", help="only these codes (repeatable)")
    parser.add_argument("--files", type=int, default=None, help="only the first N files (sorted)")
    args = parser.parse_args(argv)
    engine.allow_deep_trees()
    files = sorted({p for root in args.paths for pattern in ("*.py", "*.ipynb")
                    for p in ([Path(root)] if Path(root).is_file() else Path(root).rglob(pattern))})
    files = files[: args.files] if args.files else files
    sources = {str(p): p.read_bytes() for p in files}
    facts = ProjectFacts.merge(file_facts(path, data) for path, data in sources.items())
    rules = [r for r in all_rules() if r.reads_tree and r.edits and (not args.rule or r.code in args.rule)]
    parsed: list[str] = []
    parse = engine._parse
    engine._parse = lambda path, data: parsed.append(path) or parse(path, data)
    differences = 0
    for rule in rules:
        compared = answered = with_findings = 0
        for path, data in sources.items():
            parsed.clear()
            shipped = _findings(path, data, rule, facts)
            deferred = bool(parsed)  # the tree check raised NeedsLibCST: apply answered
            parsed.clear()
            reference = _findings(path, data, rule.without_tree_check(), facts)
            if not parsed:
                continue  # prefiltered out: apply never saw the file
            compared += 1
            answered += not deferred
            with_findings += bool(reference)
            if shipped != reference:
                differences += 1
                print(f"{rule.code} {path}:\n  tree:   {shipped}\n  libcst: {reference}")
        print(f"{rule.code}: {compared} files compared ({with_findings} with findings), "
              f"{answered} answered on CPython's tree alone, {compared - answered} needed LibCST")
    print(f"{differences} difference(s)")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
