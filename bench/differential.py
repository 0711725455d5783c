"""The differential cases from the command line: rewrite each with the real CLI, run original and
rewrite (and reference) on CPU, and print a table.

    python bench/differential.py                          # every case
    python bench/differential.py --rule epoch-log-sync    # one rule's cases
    python bench/differential.py --case rank-gated-log/guarded_sync_dist_log -v
    python bench/differential.py --jobs 2 --unsafe        # also run the unsafe/refused fixes

``--unsafe`` also runs, for every ``unsafe`` case, the ``--unsafe-fixes`` rewrite against the
original (one process and DDP) and says whether the behaviour differs; for ``unchanged`` cases
that the default ``--write`` changes anyway (a rule that is not yet sound), the same for that
rewrite: the evidence of what the fix would break. Needs torch and lightning (see README). Exit
status 1 when a case fails (``needs --unsafe-fixes`` counts as a failure).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "differential"))
import harness  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rule", help="only this rule's cases (a folder name under tests/differential/cases)")
    parser.add_argument("--case", help="only this case (NAME or RULE/NAME)")
    parser.add_argument("--expectation", choices=harness.EXPECTATIONS, help="only the cases with this expectation")
    parser.add_argument("--jobs", type=int, default=1, help="cases checked at once (each DDP run uses 2 processes)")
    parser.add_argument("--unsafe", action="store_true", help="also run unsafe (and wrongly rewritten unchanged) fixes")
    parser.add_argument("--keep", action="store_true", help="keep each case's work folder (printed)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every run and every problem")
    args = parser.parse_args(argv)

    cases = [c for c in harness.discover(args.rule, args.case) if args.expectation in (None, c.expectation)]
    if not cases:
        print("no cases match", file=sys.stderr)
        return 2
    log = (lambda line: print(line, flush=True)) if args.verbose else (lambda line: None)
    started = time.monotonic()

    def one(case: harness.Case) -> tuple[harness.Outcome, str, float]:
        folder = Path(tempfile.mkdtemp(prefix=f"ddpfix-diff-{case.rule}-{case.name}-"))
        try:
            outcome = harness.check_case(case, folder / "check", log)
            verdict, seconds = "", 0.0
            if args.unsafe and case.expectation in ("unsafe", "unchanged"):
                tick = time.monotonic()
                # The default rewrite where it changed the file (a rule not yet sound), else the
                # --unsafe-fixes one (the fix offered for review).
                changed_by_default = bool(outcome.rewrites) and outcome.rewrites[0].changed
                verdict, details = harness.behaviour(case, folder / "behaviour", unsafe=not changed_by_default, log=log)
                if details:
                    outcome.notes.append("behaviour: " + "; ".join(details[:6]))
                seconds = time.monotonic() - tick
            if args.keep:
                outcome.notes.append(f"work folder: {folder}")
            return outcome, verdict, seconds
        finally:
            if not args.keep:
                shutil.rmtree(folder, ignore_errors=True)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(one, cases))

    width = max(len(c.id) for c in cases)
    header = f"{'case':<{width}}  {'expectation':<11}  {'result':<20}  {'seconds':>7}"
    if args.unsafe:
        header += f"  {'behaviour':<34}  {'seconds':>7}"
    print(header)
    print("-" * len(header))
    failed = 0
    for outcome, verdict, seconds in results:
        line = f"{outcome.case.id:<{width}}  {outcome.case.expectation:<11}  {outcome.result:<20}  {outcome.seconds:7.1f}"
        if args.unsafe:
            line += f"  {verdict or '-':<34}  {seconds:7.1f}" if verdict else f"  {'-':<34}  {'':>7}"
        print(line)
        failed += not outcome.passed
    print("-" * len(header))
    total = sum(o.seconds + s for o, _, s in results)
    print(f"{len(results)} cases, {len(results) - failed} passed, {failed} failed; "
          f"{time.monotonic() - started:.1f} s wall, {total:.1f} s summed over cases")
    for outcome, _, _ in results:
        if not outcome.passed or args.verbose:
            print()
            print(outcome.report())
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
