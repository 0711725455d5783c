"""How far the progress bar's estimate of the time left is from the time that was left.

    python bench/progress_eta.py PATH [--jobs 2] [--check] [--every 0.25]

Runs ``runner.check_files`` over PATH in this process (fixing, as ``--diff`` does, unless
``--check``), with a ``progress.Progress`` that draws nothing, and samples its estimate every
``--every`` seconds. Beside it, what a bar counting files would say (the time so far, times the
files left over the files done: click's bar before, which the largest-first order fooled). After
the run each sample is compared with the time the stage really had left: a ratio of 1.0 is exact,
20 is twenty times too long. The numbers docs/interrupts.md quotes come from this script.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ddpfix.engine import set_up_for_trees  # noqa: E402
from ddpfix.progress import Progress  # noqa: E402
from ddpfix.rules import all_rules  # noqa: E402
from ddpfix.runner import check_files, discover  # noqa: E402


class Sampled(Progress):
    """A Progress that also keeps what it said, and what counting files would have said."""

    def __init__(self, jobs: int, every: float):
        super().__init__(None, bar=True, jobs=jobs)
        self.samples: list[tuple[str, float, float | None, float | None]] = []  # stage, time, bytes ETA, files ETA
        self.stage_ends: dict[str, float] = {}
        self.every = every
        self._stop = threading.Event()
        self._current = ""
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def stage(self, kind: str) -> None:
        now = time.monotonic()
        if self._current:
            self.stage_ends[self._current] = now
        self._current = kind
        super().stage(kind)

    def _sample(self) -> None:
        while not self._stop.wait(self.every):
            with self._lock:
                elapsed = self.clock() - self._began
                done, count = self._done, len(self._names)
            by_files = elapsed * (count - done) / done if done and elapsed >= 1.0 else None
            self.samples.append((self._current, time.monotonic(), self.estimate(), by_files))

    def finish(self) -> None:
        self._stop.set()
        self._sampler.join()
        self.stage_ends[self._current] = time.monotonic()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--check", action="store_true", help="report only (as --check), else fix (as --diff)")
    parser.add_argument("--every", type=float, default=0.25)
    args = parser.parse_args()
    set_up_for_trees()
    files, _, _ = discover([args.path], respect_gitignore=False)
    options = {"log_mode": "auto", "show_suppressed": False, "unsafe_fixes": True}
    progress = Sampled(args.jobs, args.every)
    began = time.monotonic()
    check_files(files, list(all_rules()), args.jobs, options, progress=progress, fix=not args.check)
    progress.finish()
    print(f"{len(files)} files, --jobs {args.jobs}, {'check' if args.check else 'fix'}: {time.monotonic() - began:.1f} s")
    for stage in ("scan", "fix"):
        samples = [s for s in progress.samples if s[0] == stage and (s[2] is not None or s[3] is not None)]
        if not samples:
            continue
        end = progress.stage_ends[stage]
        start = min(s[1] for s in progress.samples if s[0] == stage) - args.every
        print(f"  {stage} stage, {end - start:.1f} s: estimate / time really left (1.0 is exact)")
        print(f"  {'at':>6} {'left':>7} {'bytes':>7} {'files':>7}")
        marks = [1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128]
        for _, at, by_bytes, by_files in samples:
            left = end - at
            if not marks or at - start < marks[0] or left <= 0.2:
                continue
            while marks and at - start >= marks[0]:
                marks.pop(0)
            ratio = lambda eta: f"{eta / left:7.2f}" if eta is not None else "      -"  # noqa: E731
            print(f"  {at - start:6.1f} {left:7.1f} {ratio(by_bytes)} {ratio(by_files)}")

if __name__ == "__main__":
    main()
