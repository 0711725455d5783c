"""Whether this tree finds what an earlier revision found: ``python bench/parity.py REV PATH...``.

Checks out ``REV`` (a commit, tag or branch of this repository) into a temporary worktree, runs
``ddpfix --check --output-format json`` of that revision and of the working tree over the same
paths, and compares every finding (place, code, message) and every problem. Prints the counts and
each difference; exits 1 when there is one. ``--also-fix`` compares ``--diff`` outputs too (what
each revision would write).

For changes that should not change what ddpfix reports (a rule moved to CPython's tree, a faster
prefilter): run it over the fixtures, the test data and the bench corpora before landing them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(src: Path, paths: list[str], *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(src))
    return subprocess.run([sys.executable, "-m", "ddpfix", *args, "--jobs", "2", *paths],
                          capture_output=True, text=True, env=env, cwd=ROOT)


def _findings(src: Path, paths: list[str]) -> tuple[set, str]:
    done = _run(src, paths, "--check", "--output-format", "json")
    if done.returncode not in (0, 1, 2):
        raise SystemExit(f"ddpfix from {src} failed ({done.returncode}): {done.stderr[-2000:]}")
    keys = ("path", "line", "column", "end_line", "end_column", "code", "message", "fixable", "suppressed")
    found = {tuple(item.get(k) for k in keys) for item in json.loads(done.stdout or "[]")}
    return found, done.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev")
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--also-fix", action="store_true", help="compare the --diff outputs too")
    args = parser.parse_args(argv)
    paths = [os.path.abspath(p) for p in args.paths]
    with tempfile.TemporaryDirectory(prefix="ddpfix-parity-") as folder:
        tree = Path(folder) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), args.rev], cwd=ROOT, check=True)
        try:
            old, old_problems = _findings(tree / "src", paths)
            new, new_problems = _findings(ROOT / "src", paths)
            diffs_differ = False
            if args.also_fix:
                diffs_differ = _run(tree / "src", paths, "--diff").stdout != _run(ROOT / "src", paths, "--diff").stdout
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
    print(f"{args.rev}: {len(old)} findings; working tree: {len(new)} findings")
    for label, items in (("only in " + args.rev, old - new), ("only in the working tree", new - old)):
        for item in sorted(items, key=str):
            print(f"  {label}: {item[0]}:{item[1]}:{item[2]}-{item[3]}:{item[4]} {item[5]} {item[6]}")
    if old_problems != new_problems:
        print("  the problems (stderr) differ:\n--- old\n" + old_problems[-3000:] + "\n--- new\n" + new_problems[-3000:])
    if diffs_differ:
        print("  the --diff outputs differ")
    same = old == new and old_problems == new_problems and not diffs_differ
    print("same" if same else "DIFFERENT")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
