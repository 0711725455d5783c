"""The hostile-input campaign: ddpfix on files and trees a stranger chose, each run under a hard
outer timeout. ``python bench/hostile.py`` (add ``--scale ci`` for the small slice CI runs,
``--only NAME`` for some cases, ``--json FILE`` to keep the figures).

A pull request from anyone decides a file's content and a tree's shape. For every case the campaign
builds the input in a fresh folder, runs the real ``ddpfix`` console script on it and checks what
must hold whatever the input:

- it ends before the outer timeout (a hang is a CI job that never ends);
- it prints no Python traceback (every failure is a problem line with a code);
- it writes nothing outside the root it was given (files reached through symlinks included): every
  file of the case's ``outside`` folder keeps its bytes, and no file appears there;
- the files the case marks as "left alone" keep their bytes;
- the largest process stays under the memory budget (``--budget-mb``, ddpfix's default
  per-file memory budget).

The cases: deep nesting, one huge expression, 10^4-10^5 findings in one function, huge string
literals and comments, NUL bytes, invalid UTF-8 after a valid prefix, encoding cookies, a 50 MB
notebook, notebooks of unexpected JSON types; symlinks out of the root and in loops, FIFOs,
sockets, unreadable folders, 10^5 empty files, a slow-to-match ``.gitignore``, very long paths,
names with newlines.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # the other bench scripts (measure.py), when loaded by a test
from measure import _children  # noqa: E402 - a process's children, from /proc
#: Scale of each case: ``full`` is the issue's sizes, ``ci`` a slice that runs in a couple of minutes.
SCALES = ("full", "ci")

LIGHTNING_HEAD = '''import lightning as L
import torch


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

'''
# A step with one finding of each of two rules with safe fixes in a DDP script.
FIXABLE = LIGHTNING_HEAD + '''    def training_step(self, batch, batch_idx):
        loss = self.layer(batch.to("cuda")).sum()
        self.log("train_loss", loss, on_epoch=True)
        return loss


trainer = L.Trainer(devices=2, strategy="ddp")
'''


@dataclass
class Setup:
    """What a built case runs and what it promises: ``args`` after ``ddpfix``, run in ``cwd``."""

    args: list[str]
    cwd: Path
    outside: Path | None = None  # nothing here may change
    left_alone: list[Path] = field(default_factory=list)  # these files keep their bytes
    # The work must end inside the per-file time budget (no E903): a file of many findings is
    # analysed in time linear in its size (once it took a minute for 3,000 logs in one method).
    within_budget: bool = False


@dataclass
class Case:
    name: str
    kind: str  # "file" or "tree"
    build: Callable[[Path, str], Setup]
    why: str


CASES: list[Case] = []


def case(kind: str, why: str):
    def register(build: Callable[[Path, str], Setup]) -> Callable[[Path, str], Setup]:
        CASES.append(Case(build.__name__, kind, build, why))
        return build

    return register


def _big(scale: str, full: int, ci: int) -> int:
    return full if scale == "full" else ci


def _project(base: Path) -> Path:
    root = base / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'victim'\n")
    return root


def _one_file(base: Path, name: str, data: bytes, left_alone: bool = False, args=("--write", "--jobs", "1"),
              within_budget: bool = False) -> Setup:
    root = _project(base)
    path = root / name
    path.write_bytes(data)
    return Setup([*args, "."], root, left_alone=[path] if left_alone else [], within_budget=within_budget)


# --- files ----------------------------------------------------------------------------------------


@case("file", "parentheses nested past CPython's limit: a syntax error, reported, never parsed by LibCST")
def deep_parentheses(base: Path, scale: str) -> Setup:
    depth = _big(scale, 100_000, 5_000)
    body = FIXABLE + "\nx = " + "(" * depth + "1" + ")" * depth + "\n"
    return _one_file(base, "deep.py", body.encode(), left_alone=True)


@case("file", "99 nested blocks (CPython's limit is 100) around a self.log: deep but valid")
def deep_blocks(base: Path, scale: str) -> Setup:
    lines = [LIGHTNING_HEAD + "    def training_step(self, batch, batch_idx):"]
    depth = 97
    for level in range(depth):
        lines.append("    " * (level + 2) + f"if batch_idx > {level}:")
    lines.append("    " * (depth + 2) + 'self.log("deep", batch.sum(), on_epoch=True)')
    lines.append("        return batch.sum()\n\n\ntrainer = L.Trainer(devices=2, strategy='ddp')\n")
    return _one_file(base, "blocks.py", "\n".join(lines).encode())


@case("file", "one self.log whose value is a sum of 30,000 terms: LibCST's parser alone never ends on it")
def huge_expression(base: Path, scale: str) -> Setup:
    terms = _big(scale, 30_000, 30_000)
    value = " + ".join(["b.sum()"] * terms)
    body = LIGHTNING_HEAD + f'''    def training_step(self, b, batch_idx):
        self.log("x", {value}, on_epoch=True)
        return b.sum()


trainer = L.Trainer(devices=2, strategy="ddp")
'''
    return _one_file(base, "expression.py", body.encode(), args=("--diff", "--jobs", "1"))


@case("file", "a unary minus chain of 100,000: recursion in any tree walker")
def deep_unary(base: Path, scale: str) -> Setup:
    depth = _big(scale, 100_000, 20_000)
    body = FIXABLE + "\nx = " + "-" * depth + "1\n"
    return _one_file(base, "unary.py", body.encode())


def _many_logs(count: int) -> bytes:
    calls = "\n".join(f'        self.log("m{i}", loss, on_epoch=True)' for i in range(count))
    return (LIGHTNING_HEAD + f'''    def validation_step(self, batch, batch_idx):
        loss = self.layer(batch).sum()
{calls}
        return loss


trainer = L.Trainer(devices=2, strategy="ddp")
''').encode()


@case("file", "10^4 epoch-level self.log calls in one method: 10^4 findings and fixes")
def many_findings(base: Path, scale: str) -> Setup:
    return _one_file(base, "many.py", _many_logs(_big(scale, 20_000, 3_000)), args=("--diff", "--jobs", "1"),
                     within_budget=True)


@case("file", "10^5 self.log calls in one method (3.9 MB, under the 4 MiB parse limit)")
def very_many_findings(base: Path, scale: str) -> Setup:
    return _one_file(base, "very_many.py", _many_logs(_big(scale, 100_000, 5_000)), args=("--diff", "--jobs", "1"),
                     within_budget=True)


def _many_in_a_step(hook: str, count: int, line: str) -> bytes:
    body = "\n".join(line.format(i=i) for i in range(count))
    return (LIGHTNING_HEAD + f'''    def {hook}(self, batch, batch_idx):
        loss = self.layer(batch).sum()
{body}
        return loss


trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp")
''').encode()


@case("file", "10^4 rank-gated synced logs in one method (DDP003): each asks the class's other logs")
def many_gated_logs(base: Path, scale: str) -> Setup:
    line = "        if self.global_rank == 0:\n            self.log(\"m{i}\", loss, sync_dist=True)"
    return _one_file(base, "gated.py", _many_in_a_step("validation_step", _big(scale, 10_000, 3_000), line),
                     args=("--diff", "--jobs", "1"), within_budget=True)


@case("file", "10^4 tensors pinned to cuda:0 in one step (DDP006): each asks the file's other pins")
def many_pinned_devices(base: Path, scale: str) -> Setup:
    line = "        t{i} = torch.zeros(3, device=\"cuda:0\")"
    return _one_file(base, "pinned.py", _many_in_a_step("training_step", _big(scale, 10_000, 3_000), line),
                     args=("--diff", "--jobs", "1"), within_budget=True)


@case("file", "a 3 MB string literal and a 3 MB comment in a fixable file")
def huge_literals(base: Path, scale: str) -> Setup:
    size = _big(scale, 3_000_000, 300_000)
    body = FIXABLE + f'\nBLOB = "{"a" * size}"\n# {"c" * size}\n'
    return _one_file(base, "literals.py", body.encode())


@case("file", "a file over the parse limit: reported, left alone")
def over_the_limit(base: Path, scale: str) -> Setup:
    size = _big(scale, 6_000_000, 5_000_000)
    body = FIXABLE + "# " + "p" * size + "\n"
    return _one_file(base, "large.py", body.encode(), left_alone=True)


@case("file", "NUL bytes inside a fixable file")
def nul_bytes(base: Path, scale: str) -> Setup:
    return _one_file(base, "nul.py", FIXABLE.encode() + b"\nx = 1\x00\x00\n", left_alone=True)


@case("file", "invalid UTF-8 after a valid prefix")
def invalid_utf8(base: Path, scale: str) -> Setup:
    return _one_file(base, "bad_utf8.py", FIXABLE.encode() + b"\n# caf\xc3\n\xff\xfe = 1\n", left_alone=True)


ENCODINGS = {
    "latin1_cookie.py": b"# -*- coding: latin-1 -*-\n" + FIXABLE.encode() + "\nNAME = 'café'\n".encode("latin-1"),
    "cp1252_cookie.py": b"# coding=cp1252\n" + FIXABLE.encode() + "\nQUOTE = '\u201chi\u201d'\n".encode("cp1252"),
    "shift_jis_cookie.py": b"# coding: shift_jis\n" + FIXABLE.encode() + "\nJA = '日本'\n".encode("shift_jis"),
    "bom.py": b"\xef\xbb\xbf" + FIXABLE.encode(),
    "bom_and_latin1_cookie.py": b"\xef\xbb\xbf# coding: latin-1\n" + FIXABLE.encode(),
    "unknown_codec.py": b"# coding: no-such-codec\n" + FIXABLE.encode(),
    "utf16_bom.py": "\ufeff".encode("utf-16-le") + FIXABLE.encode("utf-16-le"),
    "vim_cookie.py": b"# vim: set fileencoding=ascii :\n" + FIXABLE.encode() + "\nX = 'é'\n".encode(),
    "second_line_cookie.py": b"#!/usr/bin/env python\n# coding: latin-1\n" + FIXABLE.encode() + b"\nY = '\xe9'\n",
    "crlf.py": FIXABLE.replace("\n", "\r\n").encode(),
    "cr_only.py": FIXABLE.replace("\n", "\r").encode(),
}


@case("file", "every kind of encoding cookie, BOMs, CRLF and CR-only newlines")
def encodings(base: Path, scale: str) -> Setup:
    root = _project(base)
    for name, data in ENCODINGS.items():
        (root / name).write_bytes(data)
    return Setup(["--write", "."], root)


def _notebook(cells: list, extra: dict | None = None) -> dict:
    return {"cells": cells, "metadata": extra or {}, "nbformat": 4, "nbformat_minor": 5}


def _code_cell(source, outputs=None) -> dict:
    return {"cell_type": "code", "execution_count": None, "id": "a1", "metadata": {}, "outputs": outputs or [],
            "source": source}


NOTEBOOK_CODE = 'import lightning as L\ntrainer = L.Trainer(devices=2, strategy="ddp")\n'


@case("file", "a 50 MB notebook (a big image output) holding a fixable cell")
def huge_notebook(base: Path, scale: str) -> Setup:
    size = _big(scale, 50_000_000, 5_000_000)
    image = {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBOR" + "A" * size}}
    notebook = _notebook([_code_cell(NOTEBOOK_CODE, [image])])
    return _one_file(base, "huge.ipynb", json.dumps(notebook, indent=1).encode())


BAD_NOTEBOOKS = {
    "invalid_json.ipynb": b'{"cells": [',
    "top_level_list.ipynb": b"[1, 2, 3]",
    "cells_not_a_list.ipynb": json.dumps({"cells": {"a": 1}, "nbformat": 4}).encode(),
    "cell_not_an_object.ipynb": json.dumps(_notebook(["print(1)", 7, None])).encode(),
    "source_a_number.ipynb": json.dumps(_notebook([_code_cell(12)])).encode(),
    "source_null.ipynb": json.dumps(_notebook([_code_cell(None)])).encode(),
    "source_list_of_ints.ipynb": json.dumps(_notebook([_code_cell([1, 2, "x = 1\n"])])).encode(),
    "no_cell_type.ipynb": json.dumps(_notebook([{"source": NOTEBOOK_CODE}])).encode(),
    "cell_type_a_list.ipynb": json.dumps(_notebook([{**_code_cell(NOTEBOOK_CODE), "cell_type": ["code"]}])).encode(),
    "metadata_a_string.ipynb": json.dumps(_notebook([_code_cell(NOTEBOOK_CODE)], extra=None) | {"metadata": "x"}).encode(),
    "nbformat3_worksheets.ipynb": json.dumps({"worksheets": [{"cells": [{"cell_type": "code", "input": NOTEBOOK_CODE}]}],
                                              "nbformat": 3}).encode(),
    "deep_json.ipynb": b'{"cells": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "not_utf8.ipynb": b'{"cells": [], "x": "\xff"}',
}


@case("file", "notebooks of unexpected JSON: types, nesting, encodings")
def odd_notebooks(base: Path, scale: str) -> Setup:
    root = _project(base)
    for name, data in BAD_NOTEBOOKS.items():
        (root / name).write_bytes(data)
    # Every one of them is either understood or refused; none may be rewritten into something else.
    broken = [name for name in BAD_NOTEBOOKS if name != "metadata_a_string.ipynb"]  # its cells are fine
    return Setup(["--write", "."], root, left_alone=[root / name for name in broken])


# --- trees ----------------------------------------------------------------------------------------


def _outside(base: Path) -> Path:
    outside = base / "outside"
    outside.mkdir()
    (outside / "victim.py").write_text(FIXABLE)
    (outside / "pkg").mkdir()
    (outside / "pkg" / "deep_victim.py").write_text(FIXABLE)
    return outside


@case("tree", "symlinks from inside the root to files and folders outside it")
def symlinks_out(base: Path, scale: str) -> Setup:
    outside = _outside(base)
    root = _project(base)
    (root / "own.py").write_text(FIXABLE)
    (root / "train.py").symlink_to(outside / "victim.py")
    (root / "relative.py").symlink_to(Path("..") / "outside" / "victim.py")
    (root / "linked_pkg").symlink_to(outside / "pkg", target_is_directory=True)
    (root / "sub").mkdir()
    (root / "sub" / "up.py").symlink_to(Path("..") / ".." / "outside" / "pkg" / "deep_victim.py")
    return Setup(["--write", "."], root, outside=outside)


@case("tree", "symlink loops: a folder linking to itself and its parent, files linking to each other")
def symlink_loops(base: Path, scale: str) -> Setup:
    root = _project(base)
    (root / "own.py").write_text(FIXABLE)
    (root / "self").symlink_to(root, target_is_directory=True)
    (root / "sub").mkdir()
    (root / "sub" / "up").symlink_to(Path(".."), target_is_directory=True)
    (root / "a.py").symlink_to(root / "b.py")
    (root / "b.py").symlink_to(root / "a.py")
    (root / "me.py").symlink_to(root / "me.py")
    return Setup(["--write", "."], root)


@case("tree", "a FIFO and a socket named like sources, and a file that cannot be read")
def special_files(base: Path, scale: str) -> Setup:
    root = _project(base)
    (root / "own.py").write_text(FIXABLE)
    os.mkfifo(root / "pipe.py")
    os.mkfifo(root / "pipe.ipynb")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(root / "sock.py"))
    listener.close()  # the socket file stays
    (root / "locked").mkdir()
    (root / "locked" / "inner.py").write_text(FIXABLE)
    os.chmod(root / "locked", 0)
    (root / "unreadable.py").write_text(FIXABLE)
    os.chmod(root / "unreadable.py", 0)
    return Setup(["--write", "."], root)


@case("tree", "10^5 empty files")
def many_empty_files(base: Path, scale: str) -> Setup:
    root = _project(base)
    count = _big(scale, 100_000, 10_000)
    for folder in range(count // 1000):
        sub = root / f"d{folder}"
        sub.mkdir()
        for index in range(1000):
            (sub / f"f{index}.py").touch()
    (root / "own.py").write_text(FIXABLE)
    return Setup(["--check", "."], root)


@case("tree", "a .gitignore of thousands of patterns that are slow to match")
def slow_gitignore(base: Path, scale: str) -> Setup:
    root = _project(base)
    (root / ".git").mkdir()
    patterns = [f"**/{'*a' * 12}{n}*/**/x{n}*.py" for n in range(_big(scale, 5_000, 1_000))]
    patterns += ["!" + "*" * 40 + "z", "[!a-z]" * 30, "**/" * 50 + "q.py"]
    (root / ".gitignore").write_text("\n".join(patterns) + "\n")
    for folder in range(_big(scale, 40, 10)):
        sub = root / ("a" * 20 + str(folder)) / "inner"
        sub.mkdir(parents=True)
        for index in range(50):
            (sub / f"x{index}_{'a' * 30}.py").write_text("x = 1\n")
    (root / "own.py").write_text(FIXABLE)
    return Setup(["--check", "."], root)


@case("tree", "very long paths, and names with newlines, tabs, colons and dashes")
def odd_names(base: Path, scale: str) -> Setup:
    root = _project(base)
    deep = root
    while len(str(deep)) < 3600:  # the whole path stays under PATH_MAX (4096) with its 204-byte name
        deep = deep / ("d" * 200)
    deep.mkdir(parents=True)
    (deep / ("n" * 200 + ".py")).write_text(FIXABLE)
    for name in ("new\nline.py", "tab\tname.py", "co:lon.py", "-rf.py", "--write.py", "spaced name.py",
                 "ünïcode.py", "back\\slash.py", "quote'd\".py"):
        (root / name).write_text(FIXABLE)
    return Setup(["--write", "."], root)


# --- the runner -----------------------------------------------------------------------------------


def _checksums(folder: Path | None) -> dict[str, str]:
    if folder is None:
        return {}
    sums = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            sums[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return sums


def _sums(paths: list[Path]) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def ddpfix_command() -> list[str]:
    beside = Path(sys.executable).parent / "ddpfix"
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "ddpfix"]


def _peak_rss(pid: int) -> int:
    """The high-water mark of the process's resident set since its exec (``VmHWM``), in bytes."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def run_command(argv: list[str], cwd: Path, timeout: float) -> dict:
    """Run ``argv`` in its own process group; kill the group at ``timeout``. Wall time, exit code,
    output, and the largest peak resident set of any one process of the command: ``VmHWM`` of the
    command and each descendant, sampled every 20 ms (it only grows, so the last sample misses at
    most a process's last 20 ms). Not ``getrusage``: a child's ``ru_maxrss`` keeps the high-water
    mark of the process it was forked from (Linux carries it over ``exec``), so it would report this
    campaign's own size after a big case was built."""
    out = tempfile.TemporaryFile()
    env = dict(os.environ, NO_COLOR="1")
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
                               start_new_session=True)
    pid = process.pid
    timed_out = False
    peaks: dict[int, int] = {}
    while process.poll() is None:
        todo = [pid]
        while todo:
            current = todo.pop()
            peaks[current] = max(peaks.get(current, 0), _peak_rss(current))
            todo.extend(_children(current))
        if time.perf_counter() - start > timeout:
            timed_out = True
            os.killpg(pid, signal.SIGKILL)
            process.wait()
            break
        time.sleep(0.02)
    wall = time.perf_counter() - start
    try:
        os.killpg(pid, signal.SIGKILL)  # workers the run left behind are a finding too: counted below
        leftover = True
    except ProcessLookupError:
        leftover = False
    out.seek(0)
    text = out.read().decode("utf-8", "replace")
    return {"rc": process.returncode, "wall_s": round(wall, 2), "maxrss_mb": round(max(peaks.values(), default=0) / 2**20, 1),
            "timed_out": timed_out, "leftover_processes": leftover, "output": text}


def run_case(item: Case, scale: str, timeout: float, budget_mb: float, work: Path) -> dict:
    base = work / item.name
    base.mkdir(parents=True)
    setup = item.build(base, scale)
    outside_before = _checksums(setup.outside)
    alone_before = _sums(setup.left_alone)
    result = run_command([*ddpfix_command(), *setup.args], setup.cwd, timeout)
    failures = []
    if result["timed_out"]:
        failures.append(f"hang: killed after {timeout:.0f} s")
    if "Traceback (most recent call last)" in result["output"]:
        failures.append("traceback")
    if result["rc"] not in (0, 1, 2):
        failures.append(f"exit {result['rc']}")
    if result["leftover_processes"]:
        failures.append("processes left running")
    if _checksums(setup.outside) != outside_before:
        failures.append("ESCAPE: a file outside the root changed or appeared")
    changed = [p for p, s in _sums(setup.left_alone).items() if alone_before[p] != s]
    if changed:
        failures.append(f"changed a file it must leave alone: {changed[0]}")
    if result["maxrss_mb"] > budget_mb:
        failures.append(f"memory {result['maxrss_mb']:.0f} MB > budget {budget_mb:.0f} MB")
    lines = [line for line in result["output"].splitlines() if line.strip()]
    codes = sorted({word for line in lines for word in line.split() if word[:1] == "E" and word[1:4].isdigit()})
    if setup.within_budget and "E903" in codes:
        failures.append("gave up at the per-file time budget (E903)")
    return {"case": item.name, "kind": item.kind, "args": " ".join(setup.args), "rc": result["rc"],
            "wall_s": result["wall_s"], "maxrss_mb": result["maxrss_mb"], "codes": codes,
            "last_line": lines[-1][:160] if lines else "", "failures": failures, "output": result["output"][-4000:]}


def _restore_permissions(folder: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                try:
                    os.chmod(path, 0o755)
                except OSError:
                    pass


def campaign(scale: str = "full", only: list[str] | None = None, timeout: float = 300, budget_mb: float = 2048,
             work: Path | None = None) -> list[dict]:
    chosen = [c for c in CASES if not only or c.name in only]
    owned = work is None
    work = Path(tempfile.mkdtemp(prefix="ddpfix-hostile-")) if owned else work
    try:
        return [run_case(item, scale, timeout, budget_mb, work) for item in chosen]
    finally:
        if owned:
            _restore_permissions(work)
            shutil.rmtree(work, ignore_errors=True)


def table(results: list[dict]) -> str:
    rows = ["| case | args | exit | wall s | max RSS MB | codes | verdict |", "|---|---|---|---|---|---|---|"]
    for r in results:
        verdict = "; ".join(r["failures"]) or "ok"
        rows.append(f"| {r['case']} | `{r['args']}` | {r['rc']} | {r['wall_s']} | {r['maxrss_mb']} | "
                    f"{' '.join(r['codes'])} | {verdict} |")
    hangs = sum(any(f.startswith("hang") for f in r["failures"]) for r in results)
    escapes = sum(any("ESCAPE" in f for f in r["failures"]) for r in results)
    tracebacks = sum("traceback" in r["failures"] for r in results)
    rows.append("")
    rows.append(f"{len(results)} cases: {sum(not r['failures'] for r in results)} ok, {hangs} hangs, "
                f"{escapes} escapes, {tracebacks} tracebacks; worst time {max(r['wall_s'] for r in results)} s, "
                f"worst memory {max(r['maxrss_mb'] for r in results)} MB")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", choices=SCALES, default="full")
    parser.add_argument("--only", action="append", help="a case's name (repeatable); see --list")
    parser.add_argument("--timeout", type=float, default=300, help="hard outer timeout per case, seconds")
    parser.add_argument("--budget-mb", type=float, default=2048, help="the largest process's memory budget")
    parser.add_argument("--json", type=Path, help="write every case's figures and output here")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args(argv)
    if args.list:
        for item in CASES:
            print(f"{item.name:22} {item.kind:5} {item.why}")
        return 0
    results = []
    for item in [c for c in CASES if not args.only or c.name in args.only]:
        found = campaign(args.scale, [item.name], args.timeout, args.budget_mb)
        results += found
        r = found[0]
        print(f"{r['case']:22} rc={r['rc']} {r['wall_s']:7.2f} s {r['maxrss_mb']:7.1f} MB "
              f"{'; '.join(r['failures']) or 'ok'}", file=sys.stderr, flush=True)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 1 if any(r["failures"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
