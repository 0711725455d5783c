"""What a run shows on stderr while it works (a terminal only: the CLI decides whether).

A run of many files gets a bar: ``Scanning`` through the facts pass, then ``Fixing`` (``Checking``
for a report-only run), and ``Writing`` for the files ``--write`` could not write as they came, with
the files done and an estimate of the time left. Any run names a file that has kept it waiting for
more than a second (``Fixing big.py (3.9 MiB)...``): a 4 MiB file takes LibCST seconds.

Progress counts bytes, not files. The runner hands the largest files out first, and the time a file
takes grows with its size: counted in files, the first seconds see a few big files done of
thousands, and the estimate was twenty times too long. The files the workers hold count half done
(with several workers, the first to finish is not the only one that progressed).
``bench/progress_eta.py`` measures the estimates against the real time left.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

#: A file that has kept the run waiting this long is named on the line.
STALL_SECONDS = 1.0
#: How often the line is drawn.
TICK_SECONDS = 0.2
#: No estimate before this much of a stage has passed (nor before a file is done): the first results say little.
ESTIMATE_AFTER_SECONDS = 1.0
BAR_WIDTH = 24


def human_size(size: int) -> str:
    if size >= 2**20:
        return f"{size / 2**20:.1f} MiB"
    if size >= 2**10:
        return f"{size / 2**10:.0f} KiB"
    return f"{size} B"


class Progress:
    """Told by the runner what it does (``stage``, ``start``, ``finished``), it draws one line on
    ``stream`` from a thread of its own, so the line moves while a long file holds the main thread.
    ``bar``: draw the bar (a long run); otherwise only name a file the run waits on. ``stream``
    None: draw nothing (``estimate`` still answers: bench/progress_eta.py)."""

    def __init__(self, stream, bar: bool, fix_label: str = "Fixing", jobs: int = 1, clock=time.monotonic):
        self.stream = stream
        self.bar = bar
        self.jobs = max(1, jobs)
        self.clock = clock
        self._labels = {"scan": "Scanning", "fix": fix_label, "write": "Writing"}
        self.label = fix_label
        self._lock = threading.Lock()
        self._drawing = threading.Lock()  # the ticker and the main thread (``start``) both draw
        self._drawn = 0  # the length of the line on the terminal now
        self.start([], [])
        self._stop = threading.Event()
        self._thread = None
        if stream is not None:
            self._thread = threading.Thread(target=self._run, name="ddpfix-progress", daemon=True)
            self._thread.start()

    # --- what the runner says ----------------------------------------------------------------

    def stage(self, kind: str) -> None:
        """``"scan"`` (the facts pass), ``"fix"`` (the pass that fixes, or checks), or ``"write"``
        (the files ``--write`` could only write once the fix pass was over)."""
        self.label = self._labels[kind]
        self.start([], [])

    def start(self, names: Sequence[str], sizes: Sequence[int]) -> None:
        """The items of a stage, in the order they are handed out."""
        with self._lock:
            self._names = list(names)
            self._sizes = list(sizes)
            self._finished = [False] * len(self._names)
            self._total = sum(self._sizes)
            self._done_bytes = 0
            self._done = 0
            self._first_open = 0  # the first position not finished
            self._began = self._last_finish = self.clock()
        if self.bar and self._names and self.stream is not None:
            self._draw(self.line())  # at once: a short stage would otherwise go unseen between two ticks

    def finished(self, position: int) -> None:
        with self._lock:
            if self._finished[position]:
                return
            self._finished[position] = True
            self._done += 1
            self._done_bytes += self._sizes[position]
            self._last_finish = self.clock()
            while self._first_open < len(self._finished) and self._finished[self._first_open]:
                self._first_open += 1

    # --- what it shows -------------------------------------------------------------------------

    def estimate(self) -> float | None:
        """Seconds left in this stage, or None while too little is known."""
        with self._lock:
            elapsed = self.clock() - self._began
            if elapsed < ESTIMATE_AFTER_SECONDS or not self._done or not self._total:
                return None  # before a file is done, the time a file takes is a guess
            held, position = 0, self._first_open
            for _ in range(self.jobs):  # the workers hold (about) the first open files
                while position < len(self._finished) and self._finished[position]:
                    position += 1
                if position == len(self._finished):
                    break
                held += self._sizes[position]
                position += 1
            credited = self._done_bytes + held / 2
            if credited <= 0:
                return None
            return elapsed * max(0, self._total - credited) / credited

    def waiting_on(self) -> str | None:
        """The file the run has waited on for more than ``STALL_SECONDS``, with its size."""
        with self._lock:
            if self._first_open >= len(self._names) or self.clock() - self._last_finish < STALL_SECONDS:
                return None
            return f"{self._names[self._first_open]} ({human_size(self._sizes[self._first_open])})"

    def line(self) -> str:
        """The text to show now ("" for none)."""
        waiting = self.waiting_on()
        if not self.bar:
            return f"{self.label} {waiting}..." if waiting else ""
        with self._lock:
            done, count = self._done, len(self._names)
            fraction = self._done_bytes / self._total if self._total else 0.0
        filled = int(BAR_WIDTH * fraction)
        text = f"{self.label} [{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {fraction:4.0%}  {done}/{count} files"
        left = self.estimate()
        if left is not None:
            text += f"  {int(left) // 60}:{int(left) % 60:02d} left"
        if waiting:
            text += f"  {waiting}"
        return text

    # --- drawing -----------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.wait(TICK_SECONDS):
            self._draw(self.line())

    def _draw(self, text: str) -> None:
        import shutil  # on a terminal only: a run that shows no progress never loads it

        width = shutil.get_terminal_size().columns - 1  # never wrap: "\r" goes back one line only
        if len(text) > width:
            text = text[: max(0, width - 3)] + "..."
        with self._drawing:
            if not text and not self._drawn:
                return
            try:
                self.stream.write("\r" + text + " " * max(0, self._drawn - len(text)) + "\r" * bool(not text))
                self.stream.flush()
            except (OSError, ValueError):
                return
            self._drawn = len(text)

    def close(self) -> None:
        """Stop drawing and clear the line, so what the run prints next starts on a clean line."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        self._draw("")
