"""Corpus sweep: ddpfix over the installed torch, lightning and transformers sources.

    python bench/sweep.py --packages torch lightning transformers --jobs 2 --sample 20
    python bench/sweep.py --site-python /path/to/bench-venv/bin/python   # packages of another venv

ddpfix runs with the interpreter running this script (the project's dev venv); the packages are
looked up in ``--site-python``'s environment (default: the same interpreter), such as the venv that
``bench/run.py`` makes for corpus A.

1. copies the ``.py`` files of the packages into a temp folder (the corpus);
2. ``ddpfix --diff`` over it: must exit 0 or 1, or 2 only for files that cannot be parsed (never an
   internal error, a traceback or a crashed worker);
3. ``ddpfix --write`` over a second copy; the files it changes must be the files the diff named,
   and each must still compile;
4. ``ddpfix --diff`` over the written copy must print nothing (idempotency, across the whole run);
5. prints the counts (files, changed, findings per rule, fixed or reported) and, for ``--sample``
   changed files chosen at random (``--seed``), their diffs, to be read and judged by a person.

Exit status 1 when a property above failed.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

FINDING = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>DDP\d+) (?P<tag>\[\*\]|\[fixed\])? ?")
PROBLEM = re.compile(r"^(?P<path>.+?)(?::\d+:\d+)?: (?P<code>E\d+|DDP\d+) ")


def ddpfix_command() -> list[str]:
    beside = Path(sys.executable).parent / "ddpfix"
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "ddpfix"]


def check_ddpfix_runs() -> None:
    """Exit with a clear message when ddpfix cannot run: its exit 1 would read as "findings"."""
    done = subprocess.run([*ddpfix_command(), "--version"], capture_output=True)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SystemExit(f"ddpfix does not run with {sys.executable} ({said[-1] if said else 'no message'}): "
                         "run this script with the project's venv (pip install -e .)")


_FIND_PACKAGE = (
    "import importlib.util, sys\n"
    "spec = importlib.util.find_spec(sys.argv[1])\n"
    "print(list(spec.submodule_search_locations)[0] if spec and spec.submodule_search_locations else '')\n"
)


def package_folder(name: str, python: str) -> Path:
    """Where ``python`` finds the package: asked of that interpreter, which may be another venv's."""
    try:
        found = subprocess.run([python, "-c", _FIND_PACKAGE, name], capture_output=True, text=True).stdout.strip()
    except OSError as error:
        raise SystemExit(f"--site-python {python}: {error.strerror}") from None
    if not found:
        raise SystemExit(f"{name} is not installed for {python}")
    return Path(found)


def copy_sources(packages: list[str], corpus: Path, python: str) -> int:
    count = 0
    for name in packages:
        source = package_folder(name, python)
        for path in source.rglob("*.py"):
            if not path.is_file():
                continue
            target = corpus / name / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            count += 1
    return count


def ddpfix(*args: str, cwd: Path, jobs: int) -> tuple[subprocess.CompletedProcess, float]:
    began = time.perf_counter()
    done = subprocess.run([*ddpfix_command(), *args, "--jobs", str(jobs), "."], cwd=cwd, capture_output=True,
                          env=dict(os.environ, NO_COLOR="1"))
    return done, time.perf_counter() - began


def diffed_files(diff: bytes) -> list[str]:
    return sorted({line[6:].decode("utf-8", "surrogateescape") for line in diff.splitlines() if line.startswith(b"+++ b/")})


def compiles(data: bytes) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(data, "<sweep>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def split_diff(diff: bytes) -> dict[str, bytes]:
    parts: dict[str, bytes] = {}
    current = None
    for line in diff.splitlines(keepends=True):
        if line.startswith(b"--- a/"):
            current = None
        if line.startswith(b"+++ b/"):
            current = line[6:].rstrip(b"\r\n").decode("utf-8", "surrogateescape")
            parts[current] = b""
            continue
        if current is not None:
            parts[current] += line
    return parts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", nargs="+", default=["torch", "lightning", "transformers"])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", metavar="FOLDER", help="keep the corpus copies here instead of a temp folder")
    parser.add_argument("--site-python", default=sys.executable, metavar="PYTHON",
                        help="the interpreter whose installed packages are swept (default: this one)")
    args = parser.parse_args(argv)
    check_ddpfix_runs()
    failures = []
    with tempfile.TemporaryDirectory(prefix="ddpfix-sweep-") as temp:
        work = Path(args.keep or temp)
        corpus, written = work / "corpus", work / "written"
        for folder in (corpus, written):
            shutil.rmtree(folder, ignore_errors=True)
        files = copy_sources(args.packages, corpus, args.site_python)
        shutil.copytree(corpus, written)
        size = sum(p.stat().st_size for p in corpus.rglob("*.py"))
        print(f"corpus: {files} files, {size / 2**20:.0f} MiB ({', '.join(args.packages)})")

        diff, diff_s = ddpfix("--diff", cwd=corpus, jobs=args.jobs)
        stderr = diff.stderr.decode("utf-8", "replace")
        print(f"--diff summary: {stderr.strip().splitlines()[-1] if stderr.strip() else '(none)'}")
        problems = Counter(m["code"] for line in stderr.splitlines() if (m := PROBLEM.match(line)) and m["code"].startswith("E"))
        internal = [line for line in stderr.splitlines() if "internal error" in line or "Traceback" in line or "worker process died" in line]
        print(f"--diff: exit {diff.returncode} in {diff_s:.0f}s; problems by code: {dict(problems) or 'none'}")
        if internal:
            failures.append(f"{len(internal)} internal errors in --diff")
            print("\n".join(internal[:20]))
        if diff.returncode not in (0, 1) and set(problems) - {"E999", "E902"}:
            failures.append(f"--diff exited {diff.returncode}")
        changed = diffed_files(diff.stdout)

        write, write_s = ddpfix("--write", "--show-fixes", cwd=written, jobs=args.jobs)
        fired: Counter = Counter()
        finding_lines = []
        for line in write.stdout.decode("utf-8", "replace").splitlines():
            if m := FINDING.match(line):
                finding_lines.append(line)
                fired[(m["code"], "fixed" if m["tag"] == "[fixed]" else "fixable, not fixed" if m["tag"] else "reported (no fix)")] += 1
        really_changed = sorted(
            str(p.relative_to(written)) for p in written.rglob("*.py")
            if p.read_bytes() != (corpus / p.relative_to(written)).read_bytes()
        )
        print(f"--write: exit {write.returncode} in {write_s:.0f}s; {len(really_changed)} files changed")
        if really_changed != changed:
            failures.append("--write changed other files than --diff showed")
            print("  only in --diff:", sorted(set(changed) - set(really_changed))[:10])
            print("  only in --write:", sorted(set(really_changed) - set(changed))[:10])
        broken = [p for p in really_changed if compiles((corpus / p).read_bytes()) and not compiles((written / p).read_bytes())]
        if broken:
            failures.append(f"{len(broken)} written files do not compile: {broken[:5]}")
        again, again_s = ddpfix("--diff", cwd=written, jobs=args.jobs)
        if again.stdout.strip():
            failures.append(f"not idempotent: a second run would change {diffed_files(again.stdout)}")
        print(f"second --diff over the written copy: {len(diffed_files(again.stdout))} files would change ({again_s:.0f}s)")

        print("\nfindings by rule (from --write):")
        for (code, how), count in sorted(fired.items()):
            print(f"  {code}  {how:<20} {count}")
        print(f"\nfindings ({len(finding_lines)}, at most 100 shown):")
        for line in finding_lines[:100]:
            print(f"  {line}")
        print(f"\nchanged files ({len(changed)}):")
        for path in changed:
            print(f"  {path}")
        sample = sorted(random.Random(args.seed).sample(changed, min(args.sample, len(changed))))
        parts = split_diff(diff.stdout)
        print(f"\n--- a sample of {len(sample)} changed files, to read ---")
        for path in sample:
            print(f"\n=== {path}")
            sys.stdout.write(parts.get(path, b"").decode("utf-8", "replace"))
    print("\n" + ("FAILED: " + "; ".join(failures) if failures else "all properties held"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
