"""Large single files, and what ddpfix costs on them next to LibCST's own parse.

    python bench/bigfiles.py make OUT_DIR                 # writes the cases below into OUT_DIR
    python bench/bigfiles.py measure OUT_DIR [--main SRC] [--modes diff,check] [--timeout S]

The cases (deterministic):

- ``lightning_<size>.py`` (226 kB, 1 MB, 3.9 MB): realistic LightningModules one after another, as a
  generated or concatenated project would have them: the fixture inputs with findings of every rule
  (``corpus.fixture_snippets``, renamed per copy so no two classes clash), padded with ordinary code
  (helpers, datasets, dataclasses, argument parsers) as corpus B pads its scripts.
- ``many_logs.py`` (~710 kB): one ``training_step`` whose rank guard holds 20,000 ``self.log`` calls
  (20,000 DDP003 findings, each with a fix).
- ``many_epoch_logs.py`` (~80 kB): one ``on_validation_epoch_end`` with 2,000 ``self.log`` calls without
  ``sync_dist`` (2,000 DDP004 findings).
- ``long_sum.py``: one ``self.log`` whose value is a 30,000-term ``b.sum() + b.sum() + ...``: a tree
  far deeper than any real file, which LibCST's native parser does not finish in minutes (and a
  module-level ``Trainer`` whose DDP011 fix, with ``--unsafe-fixes``, needs LibCST's tree).

``measure`` runs, for each case, in fresh processes one after another (``bench/measure.py``: wall time
and peak RSS): LibCST's ``parse_module`` of the file (the floor the targets are stated against), then
``ddpfix --diff`` and ``ddpfix --check`` (``--jobs 1``) from this checkout and, with ``--main``, from
another ``src`` folder, so the before/after ratios come from the same minute. Prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from corpus import PREAMBLE, _padding, _sentence, fixture_snippets, rename  # noqa: E402

SIZES = {"226k": 226_000, "1m": 1_000_000, "3_9m": 3_900_000}


def lightning_file(size: int, seed: int = 0) -> str:
    """LightningModules with findings of several rules, padded with ordinary code, to ``size`` bytes."""
    rng = random.Random(seed)
    snippets = fixture_snippets()
    parts = [f'"""{_sentence(rng, 8)}"""\n', PREAMBLE]
    total, n = sum(map(len, parts)), 0
    while total < size:
        chosen = [rename(text, f"b{n}s{i}") for i, (_rule, text) in enumerate(rng.sample(snippets, 3))]
        padding = _padding(rng, rng.randint(2_000, 12_000), f"b{n}")
        cut = rng.randint(0, len(padding))
        block = [*padding[:cut], *chosen, *padding[cut:]]
        parts += block
        total += sum(len(part) + 2 for part in block)
        n += 1
    return "\n\n".join(part.rstrip("\n") + "\n" for part in parts)


def many_logs_file(calls: int = 20_000) -> str:
    """One method with ``calls`` ``self.log`` calls under a rank guard (a DDP003 finding and fix
    each: ``rank_zero_only=True``)."""
    lines = [
        "import lightning as L\n\n\n",
        "class Wide(L.LightningModule):\n",
        "    def training_step(self, batch, batch_idx):\n",
        "        loss = self(batch).mean()\n",
        "        if self.global_rank == 0:\n",
    ]
    lines += [f'            self.log("t{i}", loss)\n' for i in range(calls)]
    lines.append("        return loss\n")
    return "".join(lines)


def many_epoch_logs_file(calls: int = 2_000) -> str:
    """One epoch-end hook with ``calls`` ``self.log`` calls without ``sync_dist`` (a DDP004 finding
    each, whose safety proof reads the hook up to the call: quadratic in the hook's length)."""
    lines = [
        "import lightning as L\nimport torch\n\n\n",
        "class Wide(L.LightningModule):\n",
        "    def on_validation_epoch_end(self):\n",
        "        loss = torch.stack(self.outputs).mean()\n",
    ]
    lines += [f'        self.log("val_{i}", loss)\n' for i in range(calls)]
    lines.append("        self.outputs.clear()\n")
    return "".join(lines)


def long_sum_file(terms: int = 30_000) -> str:
    """One ``self.log`` of a ``terms``-term sum, in a file whose other finding needs LibCST's tree
    (DDP011: the module-level ``Trainer`` wrapped in a main guard, with ``--unsafe-fixes``): CPython
    parses it in milliseconds, LibCST's native parser does not finish in minutes."""
    value = " + ".join(["b.sum()"] * terms)
    return (
        "import lightning as L\n\n\n"
        "class Deep(L.LightningModule):\n"
        "    def training_step(self, batch, batch_idx):\n"
        "        b = batch\n"
        f'        self.log("total", {value})\n'
        "        return b.sum()\n\n\n"
        'trainer = L.Trainer(devices=2, strategy="ddp_spawn")\n'
        "trainer.fit(Deep())\n"
    )


def make(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    cases = {f"lightning_{name}.py": lightning_file(size) for name, size in SIZES.items()}
    cases["many_logs.py"] = many_logs_file()
    cases["many_epoch_logs.py"] = many_epoch_logs_file()
    cases["long_sum.py"] = long_sum_file()
    written = []
    for name, text in cases.items():
        path = folder / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


_PARSE = "import sys; sys.setrecursionlimit(20_000); import libcst; libcst.parse_module(open(sys.argv[1], 'rb').read())"


def _measure(command: list[str], env: dict, timeout: float) -> dict:
    wrapped = [sys.executable, str(HERE / "measure.py"), "--", "timeout", "-s", "KILL", str(timeout), *command]
    out = subprocess.run(wrapped, capture_output=True, text=True, env=env, check=True).stdout
    result = json.loads(out)
    result["timed_out"] = result["rc"] in (124, 137, -9)
    return result


def _ddpfix(src: str, mode: str, path: Path) -> tuple[list[str], dict]:
    env = {**os.environ, "PYTHONPATH": src}
    flags = ["--diff", "--unsafe-fixes"] if mode == "diff-unsafe" else [f"--{mode}"]
    return [sys.executable, "-m", "ddpfix", *flags, "--jobs", "1", "--quiet", "--no-respect-gitignore",
            str(path)], env


def measure(folder: Path, others: dict[str, str], modes: list[str], timeout: float, only: list[str]) -> list[dict]:
    rows = []
    paths = sorted(folder.glob("*.py"))
    if only:
        paths = [p for p in paths if p.stem in only]
    for path in paths:
        row = {"file": path.name, "kB": round(path.stat().st_size / 1000)}
        parse = _measure([sys.executable, "-c", _PARSE, str(path)], dict(os.environ), timeout)
        row["libcst"] = parse
        for label, src in others.items():
            for mode in modes:
                command, env = _ddpfix(src, mode, path)
                row[f"{label} {mode}"] = _measure(command, env, timeout)
        rows.append(row)
        _print_row(row)
    return rows


def _cell(result: dict) -> str:
    if result["timed_out"]:
        return f">{result['wall_s']:.0f} s (killed) / {result['maxrss_mb']:.0f} MB"
    return f"{result['wall_s']:.2f} s / {result['maxrss_mb']:.0f} MB (rc {result['rc']})"


def _print_row(row: dict) -> None:
    parse = row["libcst"]
    print(f"{row['file']} ({row['kB']} kB)  LibCST parse_module: {_cell(parse)}", flush=True)
    for key, result in row.items():
        if key in ("file", "kB", "libcst"):
            continue
        ratio = ""
        if not parse["timed_out"] and not result["timed_out"]:
            ratio = f"  = {result['wall_s'] / parse['wall_s']:.2f}x time, {result['maxrss_mb'] / parse['maxrss_mb']:.2f}x memory"
        print(f"    {key:<14} {_cell(result)}{ratio}", flush=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    made = sub.add_parser("make")
    made.add_argument("folder", type=Path)
    measured = sub.add_parser("measure")
    measured.add_argument("folder", type=Path)
    measured.add_argument("--main", help="another checkout's src folder to measure beside this one (before/after)")
    measured.add_argument("--this", default=str(ROOT / "src"), help="the src folder measured as 'this' (default: this checkout's)")
    measured.add_argument("--modes", default="diff,check", help="of diff, check, diff-unsafe (--diff --unsafe-fixes)")
    measured.add_argument("--only", default="", help="comma-separated file stems")
    measured.add_argument("--timeout", type=float, default=600)
    measured.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "make":
        for path in make(args.folder):
            print(f"{path}  {path.stat().st_size / 1000:.0f} kB")
        return 0
    others = {"this": args.this}
    if args.main:
        others = {"main": args.main, **others}
    rows = measure(args.folder, others, args.modes.split(","), args.timeout, [s for s in args.only.split(",") if s])
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
