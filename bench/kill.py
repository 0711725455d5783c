"""Kill test: ``ddpfix --write`` SIGKILLed at random moments never leaves a torn file.

    python bench/kill.py --files 1000 --trials 20 --seed 0

Each trial copies fixable fixture inputs (cases a fix changes, run with ``--unsafe-fixes``) into a fresh tree of
subfolders, starts ``ddpfix --write`` on it in its own process group, and SIGKILLs the group after a
random delay: half the trials anywhere in the run, half once writing has begun (so the kill lands
among the writes). Then:

1. every file holds either its original bytes or its fixed bytes, never anything else;
2. the temp files the killed run left (``.NAME.XXXXXXXX.ddpfix.tmp``) are counted;
3. ``ddpfix --write`` runs again to completion: every file then holds its fixed bytes, and no temp
   file is left anywhere (the run removes those of the killed one in the folders it writes to).

"Fixed bytes" are what an uninterrupted ``ddpfix --write`` makes of the same tree (the fixtures'
expected files, unless facts from other files of the run change a fix); they are checked against
the expected files too. Exit status 1 when any trial broke a property.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
TEMP_SUFFIX = ".ddpfix.tmp"
sys.path.insert(0, str(ROOT / "src"))

from ddpfix.facts import FACT_LITERALS  # noqa: E402


def ddpfix_command() -> list[str]:
    beside = Path(sys.executable).parent / "ddpfix"
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "ddpfix"]


def fixable_cases() -> list[tuple[bytes, bytes]]:
    """(input, output with every fix) of the one-file fixture cases a fix changes (the runs use
    ``--unsafe-fixes``: what is killed is the writing, whatever the fixes' applicability)."""
    cases = []
    for source in sorted(FIXTURES.glob("*/*.py")):
        if source.stem.endswith((".expected", ".unsafe")):
            continue
        unsafe, expected = (source.with_name(f"{source.stem}.{kind}.py") for kind in ("unsafe", "expected"))
        output = unsafe if unsafe.exists() else expected
        if output.exists() and not any(word in source.read_bytes() for word in FACT_LITERALS):
            # (a case with a seed or a monitor would change the fixes of the other files of the tree)
            cases.append((source.read_bytes(), output.read_bytes()))
    return cases


def make_tree(root: Path, files: int, cases: list[tuple[bytes, bytes]], per_folder: int = 25) -> dict[Path, tuple[bytes, bytes]]:
    """``files`` copies of the fixable ``cases`` under ``root``, ``per_folder`` to a subfolder."""
    tree = {}
    for number in range(files):
        source, expected = cases[number % len(cases)]
        path = root / f"pkg{number // per_folder:03d}" / f"case{number:04d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(source)
        tree[path] = (source, expected)
    return tree


def run(root: Path, jobs: int, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([*ddpfix_command(), "--write", "--unsafe-fixes", "--quiet", "--jobs", str(jobs), str(root)],
                          capture_output=True, timeout=timeout, env=dict(os.environ, NO_COLOR="1"))


def temp_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.name.endswith(TEMP_SUFFIX))


def reference(files: int, cases: list[tuple[bytes, bytes]], jobs: int, workdir: Path) -> tuple[dict[str, bytes], float, float, int, int]:
    """What an uninterrupted run writes: relative path -> fixed bytes; its duration, how long its writes
    took, and its exit code; and
    how many files it fixed otherwise than their fixture's expected output."""
    root = workdir / "reference"
    tree = make_tree(root, files, cases)
    began = time.perf_counter()
    watch = folder_times(root)
    process = subprocess.Popen([*ddpfix_command(), "--write", "--unsafe-fixes", "--quiet", "--jobs", str(jobs), str(root)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ, NO_COLOR="1"))
    wait_for_writes(watch, process, 600)
    writes_began = time.perf_counter()
    stderr = process.communicate()[1]
    writes = time.perf_counter() - writes_began  # each file is written as it is fixed: to the end of the run
    duration = time.perf_counter() - began
    if process.returncode == 2:
        raise SystemExit(f"the reference run failed:\n{stderr.decode(errors='replace')}")
    fixed = {str(p.relative_to(root)): p.read_bytes() for p in tree}
    off_expected = sum(p.read_bytes() != expected for p, (_, expected) in tree.items())
    shutil.rmtree(root)
    return fixed, duration, writes, process.returncode, off_expected


def folder_times(root: Path) -> dict[Path, int]:
    """The mtime of every folder under ``root``: a file replaced changes its folder's."""
    return {folder: folder.stat().st_mtime_ns for folder in [root, *root.rglob("*")] if folder.is_dir()}


def wait_for_writes(before: dict[Path, int], process: subprocess.Popen, limit: float) -> None:
    """Until some file was replaced (writing has begun: ``before`` from ``folder_times``), the run
    ended, or ``limit``."""
    end = time.perf_counter() + limit
    while time.perf_counter() < end and process.poll() is None:
        try:
            if any(folder.stat().st_mtime_ns != mtime for folder, mtime in before.items()):
                return
        except OSError:
            pass
        time.sleep(0.005)


def trial(number: int, rng: random.Random, files: int, cases: list[tuple[bytes, bytes]], jobs: int, fixed: dict[str, bytes], duration: float,
          writes: float, exit_code: int, workdir: Path) -> dict:
    root = workdir / f"trial{number:02d}"
    tree = make_tree(root, files, cases)
    watch = folder_times(root)
    during_writes = number % 2 == 1
    process = subprocess.Popen([*ddpfix_command(), "--write", "--unsafe-fixes", "--quiet", "--jobs", str(jobs), str(root)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                               env=dict(os.environ, NO_COLOR="1"))
    began = time.perf_counter()
    if during_writes:
        wait_for_writes(watch, process, duration * 3)
        delay = rng.uniform(0, writes * 1.2)
    else:
        delay = rng.uniform(0, duration * 1.1)
    time.sleep(delay)
    finished_first = process.poll() is not None
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
    killed_at = time.perf_counter() - began

    torn, written = [], 0
    for path, (source, _) in tree.items():
        data = path.read_bytes()
        want = fixed[str(path.relative_to(root))]
        if data == want and data != source:
            written += 1
        elif data != source:
            torn.append(str(path))
    left = temp_files(root)

    again = run(root, jobs)
    wrong = [str(p) for p in tree if p.read_bytes() != fixed[str(p.relative_to(root))]]
    remaining = temp_files(root)
    outcome = {
        "trial": number,
        "mode": "during writes" if during_writes else "anywhere",
        "killed_after_s": round(killed_at, 3),
        "finished_before_kill": finished_first,
        "files_written_before_kill": written,
        "torn": torn,
        "temp_files_left_by_kill": len(left),
        "rerun_exit": again.returncode,
        "wrong_after_rerun": wrong,
        "temp_files_after_rerun": [str(p) for p in remaining],
    }
    outcome["ok"] = not torn and not wrong and not remaining and again.returncode == exit_code
    shutil.rmtree(root)
    return outcome


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="ddpfix-kill-") as folder:
        workdir = Path(folder)
        cases = fixable_cases()  # read once: the trees of all trials are the same
        fixed, duration, writes, exit_code, off_expected = reference(args.files, cases, args.jobs, workdir)
        print(f"reference run: {args.files} files in {duration:.1f}s (writes {writes:.2f}s), exit {exit_code}; "
              f"{off_expected} files differ from their fixture's expected output")
        results = []
        for number in range(args.trials):
            outcome = trial(number, rng, args.files, cases, args.jobs, fixed, duration, writes, exit_code, workdir)
            results.append(outcome)
            print(f"trial {number:2d} ({outcome['mode']:<13}) killed at {outcome['killed_after_s']:6.2f}s: "
                  f"{outcome['files_written_before_kill']:4d} written, {len(outcome['torn'])} torn, "
                  f"{outcome['temp_files_left_by_kill']} temp left -> rerun exit {outcome['rerun_exit']}, "
                  f"{len(outcome['wrong_after_rerun'])} wrong, {len(outcome['temp_files_after_rerun'])} temp"
                  f"{'' if outcome['ok'] else '  FAILED'}", flush=True)
    failed = [r for r in results if not r["ok"]]
    partial = sum(0 < r["files_written_before_kill"] < args.files for r in results)
    print(f"\n{len(results)} trials, {args.files} files each: {len(failed)} failed; "
          f"{partial} killed part-way through the writes; "
          f"{sum(len(r['torn']) for r in results)} torn files; "
          f"{sum(r['temp_files_left_by_kill'] for r in results)} temp files left by kills, "
          f"{sum(len(r['temp_files_after_rerun']) for r in results)} after the reruns")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
