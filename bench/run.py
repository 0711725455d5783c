"""ddpfix's benchmark: one command, one table, one JSON file. Not a test: run it by hand.

    python bench/run.py                       # both corpora, 3 runs each (about 30 min on 2 cores)
    python bench/run.py --quick               # small corpora, 1 run: a smoke test of the script
    python bench/run.py --corpus a --runs 5

What it does (see bench/README.md):
1. Makes or reuses venvs in the cache folder: one with torch==2.13.0 (CPU), lightning,
   transformers and ruff (corpus A's source, and Ruff), one with torchfix (it pins an old LibCST).
2. Makes the corpora (cached): A, the ``.py`` files of that venv's site-packages; B, Lightning
   scripts generated from the fixtures (bench/corpus.py).
3. Times each tool as a subprocess of a fresh wrapper (bench/measure.py: wall time, peak RSS),
   the tools interleaved run by run, and prints medians with min-max, plus the targets' ratios.

ddpfix runs from this checkout's ``src`` with the interpreter running this script (which must have
libcst and click: the project's dev venv); the regex / ast / LibCST floors run with the same
interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SRC = ROOT / "src"
sys.path.insert(0, str(HERE))

import corpus as corpora  # noqa: E402

TORCH = "torch==2.13.0"
DEFAULT_CACHE = os.environ.get("DDPFIX_BENCH_CACHE") or (
    "/work/bench-cache" if Path("/work").is_dir() else str(Path.home() / ".cache" / "ddpfix-bench")
)
SCALING_SIZES = (500, 1000, 2000)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- environments ------------------------------------------------------------------------------


def venv(path: Path, packages: list[list[str]]) -> Path:
    """A venv at ``path`` with ``packages`` installed in order (each a pip install); reused when its stamp says so."""
    stamp = path / ".bench-stamp"
    want = json.dumps(packages)
    if stamp.exists() and stamp.read_text() == want:
        return path
    if path.exists():
        shutil.rmtree(path)
    log(f"creating {path} ({'; '.join(' '.join(p) for p in packages)})")
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    for group in packages:
        subprocess.run([str(path / "bin" / "python"), "-m", "pip", "install", "-q", *group], check=True)
    stamp.write_text(want)
    return path


def site_packages(env: Path) -> Path:
    out = subprocess.run([str(env / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True)
    return Path(out.stdout.strip())


# --- measuring ---------------------------------------------------------------------------------


def measure(command: list[str], env: dict | None = None) -> dict:
    """One run of ``command`` in a fresh wrapper process (so its peak RSS is its own)."""
    out = subprocess.run([sys.executable, str(HERE / "measure.py"), "--", *command], capture_output=True, text=True,
                         env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def summarise(samples: list[dict]) -> dict:
    walls = [s["wall_s"] for s in samples]
    return {
        "runs": len(samples),
        "median_s": statistics.median(walls),
        "min_s": min(walls),
        "max_s": max(walls),
        "maxrss_mb": max(s["maxrss_mb"] for s in samples),
        "tree_rss_mb": max(s["tree_rss_mb"] for s in samples),
        "rc": sorted({s["rc"] for s in samples}),
        "samples_s": walls,
    }


class Tools:
    """The commands timed on a corpus (``paths``: the folders to give each tool)."""

    def __init__(self, python: str, ruff: str, torchfix: str | None, env: dict):
        self.python, self.ruff, self.torchfix, self.env = python, ruff, torchfix, env

    def ddpfix(self, mode: str, jobs: int, paths: list[str]) -> list[str]:
        return [self.python, "-m", "ddpfix", mode, "--jobs", str(jobs), "--no-respect-gitignore", "--quiet", *paths]

    def baseline(self, kind: str, paths: list[str]) -> list[str]:
        return [self.python, str(HERE / "baselines.py"), kind, *paths]

    def table(self, paths: list[str]) -> dict[str, list[str]]:
        return {
            "ddpfix --check --jobs 1": self.ddpfix("--check", 1, paths),
            "ddpfix --check --jobs 2": self.ddpfix("--check", 2, paths),
            "ddpfix --diff --jobs 2": self.ddpfix("--diff", 2, paths),
            "regex scan (floor)": self.baseline("regex", paths),
            "ast.parse": self.baseline("ast", paths),
            "libcst.parse_module": self.baseline("libcst", paths),
            "ruff check --select E9,F": [self.ruff, "check", "--no-cache", "--select", "E9,F", "--exit-zero", "--quiet",
                                          "--no-respect-gitignore", *paths],
        }


def file_count(paths: list[str]) -> dict:
    """The files each side sees: ddpfix's discovery, the baselines' walk, Ruff's own listing."""
    sys.path.insert(0, str(SRC))
    from ddpfix.runner import discover

    import baselines

    return {"ddpfix": len(discover(paths, respect_gitignore=False)[0]), "baselines": len(baselines.files(paths))}


def ruff_count(ruff: str, paths: list[str]) -> int:
    out = subprocess.run([ruff, "check", "--show-files", "--no-respect-gitignore", "--no-cache", *paths],
                         capture_output=True, text=True)
    return sum(1 for line in out.stdout.splitlines() if line.strip().endswith(".py"))


def bench_corpus(name: str, paths: list[str], tools: Tools, runs: int, slow_runs: int, torchfix_sample: int,
                 seed: int, workdir: Path) -> dict:
    counts = file_count(paths)
    counts["ruff"] = ruff_count(tools.ruff, paths)
    log(f"corpus {name}: files seen {counts}")
    commands = tools.table(paths)
    slow = {"libcst.parse_module"} if name == "A" else set()
    samples: dict[str, list[dict]] = {label: [] for label in commands}
    for run in range(runs):
        for label, command in commands.items():
            if label in slow and run >= slow_runs:
                continue
            result = measure(command, tools.env)
            samples[label].append(result)
            log(f"corpus {name} run {run + 1}/{runs}: {label}: {result['wall_s']:.2f} s, {result['maxrss_mb']:.0f} MB, rc {result['rc']}")
    rows = {label: summarise(s) for label, s in samples.items() if s}  # --slow-runs 0 skips the slow ones
    files = counts["ddpfix"]
    for row in rows.values():
        row["per_file_ms"] = row["median_s"] / files * 1000
        row["files"] = files
    if tools.torchfix:
        rows["torchfix (subset, per file)"] = bench_torchfix(paths, tools, torchfix_sample, seed, workdir / f"torchfix-{name}",
                                                          slow_runs)
    return {"files": counts, "rows": rows}


def bench_torchfix(paths: list[str], tools: Tools, sample: int, seed: int, folder: Path, runs: int) -> dict:
    """TorchFix on a seeded sample of the corpus (copied to ``folder``), scaled per file."""
    import baselines

    everything = baselines.files(paths)
    chosen = sorted(random.Random(seed).sample(everything, min(sample, len(everything))))
    if folder.exists():
        shutil.rmtree(folder)
    for i, path in enumerate(chosen):
        target = folder / f"{i // 100:03d}" / f"{i:05d}_{Path(path).name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    results = []
    for run in range(runs):
        results.append(measure([tools.torchfix, "--jobs", "2", str(folder)], tools.env))
        log(f"torchfix on {len(chosen)} files: {results[-1]['wall_s']:.1f} s")
    row = summarise(results)
    row["files"] = len(chosen)
    row["per_file_ms"] = row["median_s"] / len(chosen) * 1000
    row["min_s"] = row["min_s"]  # of the subset
    return row


def bench_scaling(corpus_b: Path, tools: Tools, runs: int, parts: int, total: int) -> list[dict]:
    """ddpfix --check --jobs 2 on the first 500, 1000, 2000 files of corpus B (its part folders)."""
    per_part = total // parts
    out = []
    for size in SCALING_SIZES:
        if size > total or size % per_part:
            continue
        paths = [str(corpus_b / f"part{i}") for i in range(size // per_part)]
        samples = [measure(tools.ddpfix("--check", 2, paths), tools.env) for _ in range(runs)]
        row = summarise(samples)
        row["files"] = size
        row["per_file_ms"] = row["median_s"] / size * 1000
        log(f"scaling: {size} files: {row['median_s']:.2f} s ({row['per_file_ms']:.2f} ms/file)")
        out.append(row)
    return out


def findings_per_file(corpus_b: Path, python: str, env: dict) -> dict:
    """Average findings and distinct rules per file of corpus B (one untimed ddpfix --check run)."""
    import re

    out = subprocess.run([python, "-m", "ddpfix", "--check", "--no-respect-gitignore", "--jobs", "2", "--quiet",
                          str(corpus_b)], capture_output=True, text=True, env=env)
    by_file: dict[str, set] = {}
    total = 0
    for line in out.stdout.splitlines():
        match = re.match(r"(.*?):\d+:\d+: (DDP\d+) ", line)
        if match:
            total += 1
            by_file.setdefault(match.group(1), set()).add(match.group(2))
    files = sum(1 for _ in corpus_b.rglob("*.py"))
    rules = [len(v) for v in by_file.values()] + [0] * (files - len(by_file))
    return {
        "findings_per_file": total / files,
        "rules_per_file": sum(rules) / files,
        "files_with_2_rules_or_more": sum(r >= 2 for r in rules) / files,
        "rules_seen": sorted({c for v in by_file.values() for c in v}),
    }


# --- targets -----------------------------------------------------------------------------------


def targets(results: dict) -> list[dict]:
    checks = []

    def add(name: str, measured: float | None, limit: float, higher_is_better: bool, unit: str = "x") -> None:
        if measured is None:
            return
        ok = measured >= limit if higher_is_better else measured <= limit
        checks.append({"target": name, "measured": round(measured, 3), "limit": limit,
                       "op": ">=" if higher_is_better else "<=", "unit": unit, "met": ok})

    def median(corpus: str, label: str) -> float | None:
        row = results.get(corpus, {}).get("rows", {}).get(label)
        return row["median_s"] if row else None

    def per_file(corpus: str, label: str) -> float | None:
        row = results.get(corpus, {}).get("rows", {}).get(label)
        return row["per_file_ms"] if row else None

    if "A" in results:
        j2 = median("A", "ddpfix --check --jobs 2")
        add("A: check --jobs 2 / regex floor", j2 / median("A", "regex scan (floor)"), 2.5, False)
        add("A: check --jobs 2 / ruff E9,F", j2 / median("A", "ruff check --select E9,F"), 1.7, False)
        add("A: check --jobs 2 peak RSS (largest process)", results["A"]["rows"]["ddpfix --check --jobs 2"]["maxrss_mb"], 300,
            False, "MB")
        tf = per_file("A", "torchfix (subset, per file)")
        if tf:
            add("A: torchfix per file / ddpfix per file (--jobs 2 both)", tf / per_file("A", "ddpfix --check --jobs 2"), 100, True)
    if "B" in results:
        parse = median("B", "libcst.parse_module")
        add("B: ddpfix throughput / libcst parse throughput (--jobs 1)", parse / median("B", "ddpfix --check --jobs 1"), 0.70, True)
        add("B: --jobs 2 speed-up over --jobs 1", median("B", "ddpfix --check --jobs 1") / median("B", "ddpfix --check --jobs 2"),
            1.7, True)
        tf = per_file("B", "torchfix (subset, per file)")
        if tf:
            add("B: torchfix per file / ddpfix per file (--jobs 2 both)", tf / per_file("B", "ddpfix --check --jobs 2"), 5, True)
        scaling = results["B"].get("scaling") or []
        if len(scaling) >= 2:
            add("B: ms per file, largest / smallest size", scaling[-1]["per_file_ms"] / scaling[0]["per_file_ms"], 1.15, False)
    return checks


# --- output ------------------------------------------------------------------------------------


def machine() -> dict:
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as handle:
            cpu = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), cpu)
    except OSError:
        pass
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
            "load_1min_at_end": load, "date": time.strftime("%Y-%m-%d %H:%M %Z")}


def render(results: dict) -> str:
    lines = []
    for corpus in ("A", "B"):
        if corpus not in results:
            continue
        info = results[corpus]
        lines.append(f"Corpus {corpus}: {info['corpus']['files']} files, {info['corpus']['mb']} MB "
                     f"(files seen: {', '.join(f'{k} {v}' for k, v in info['files'].items())})")
        if "quality" in info:
            q = info["quality"]
            lines.append(f"  findings per file {q['findings_per_file']:.1f}, rules per file {q['rules_per_file']:.1f}, "
                         f"files with >= 2 rules {q['files_with_2_rules_or_more']:.0%}")
        lines.append(f"  | {'tool':<30} | {'median s':>9} | {'min-max s':>13} | {'ms/file':>8} | {'peak RSS MB':>11} | {'all procs MB':>12} |")
        lines.append(f"  |{'-' * 32}|{'-' * 11}|{'-' * 15}|{'-' * 10}|{'-' * 13}|{'-' * 14}|")
        for label, row in info["rows"].items():
            span = f"{row['min_s']:.2f}-{row['max_s']:.2f}"
            name = label if "torchfix" not in label else f"torchfix ({row['files']} files)"
            lines.append(f"  | {name:<30} | {row['median_s']:>9.2f} | {span:>13} | {row['per_file_ms']:>8.2f} | "
                         f"{row['maxrss_mb']:>11.0f} | {row['tree_rss_mb']:>12.0f} |")
        for row in info.get("scaling", []):
            lines.append(f"  scaling: ddpfix --check --jobs 2 on {row['files']:>5} files: {row['median_s']:.2f} s, "
                         f"{row['per_file_ms']:.2f} ms/file")
        lines.append("")
    lines.append("Targets:")
    for check in results.get("targets", []):
        mark = "met " if check["met"] else "MISS"
        lines.append(f"  [{mark}] {check['target']}: {check['measured']}{check['unit'] if check['unit'] != 'x' else 'x'} "
                     f"(target {check['op']} {check['limit']}{check['unit'] if check['unit'] != 'x' else 'x'})")
    m = results["machine"]
    lines.append(f"\nMachine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, load {m['load_1min_at_end']}, {m['date']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", choices=["a", "b", "both"], default="both")
    parser.add_argument("--runs", type=int, default=3, help="runs of each tool (default 3)")
    parser.add_argument("--slow-runs", type=int, default=1,
                        help="runs of the slow ones: LibCST on corpus A, TorchFix (default 1)")
    parser.add_argument("--quick", action="store_true", help="small corpora (A: 600 files, B: 200), 1 run: a smoke test")
    parser.add_argument("--b-files", type=int, default=2000, help="files in corpus B (default 2000)")
    parser.add_argument("--torchfix-files", type=int, default=200, help="files TorchFix runs on, per corpus (default 200)")
    parser.add_argument("--no-torchfix", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", default=DEFAULT_CACHE, help=f"venvs and corpora (default {DEFAULT_CACHE})")
    parser.add_argument("--out", default=str(HERE / "results.json"))
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.slow_runs, args.b_files, args.torchfix_files = 1, 1, 200, 20
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    started = time.time()

    packages_env = venv(cache / "corpus-a", [[TORCH], ["lightning", "transformers", "ruff"]])
    ruff = str(packages_env / "bin" / "ruff")
    torchfix = None if args.no_torchfix else str(venv(cache / "torchfix", [["torchfix"]]) / "bin" / "torchfix")
    env = dict(os.environ, PYTHONPATH=str(SRC), NO_COLOR="1")
    env.pop("PYTHONSTARTUP", None)
    tools = Tools(sys.executable, ruff, torchfix, env)
    results: dict = {"machine": {}, "args": vars(args)}

    if args.corpus in ("a", "both"):
        folder = cache / "corpora" / "a"
        info = corpora.make_corpus_a(site_packages(packages_env), folder)
        paths = [str(folder)]
        if args.quick:  # a slice of it: a few of its packages
            paths = [str(folder / name) for name in ("lightning", "torch/distributed", "transformers/models/bert")]
        log(f"corpus A: {info}")
        results["A"] = {"corpus": info, **bench_corpus("A", paths, tools, args.runs, args.slow_runs, args.torchfix_files,
                                                        args.seed, cache)}
        if args.quick:
            results["A"]["corpus"] = {"files": results["A"]["files"]["ddpfix"], "mb": "slice of"}
    if args.corpus in ("b", "both"):
        folder = cache / "corpora" / f"b-{args.b_files}"
        info = corpora.make_corpus_b(folder, files=args.b_files, seed=args.seed)
        log(f"corpus B: {info}")
        results["B"] = {"corpus": info, **bench_corpus("B", [str(folder)], tools, args.runs, args.slow_runs,
                                                        args.torchfix_files, args.seed, cache)}
        results["B"]["quality"] = findings_per_file(folder, sys.executable, env)
        results["B"]["scaling"] = bench_scaling(folder, tools, args.runs, info["parts"], args.b_files)

    results["targets"] = targets(results)
    results["machine"] = machine()
    results["elapsed_s"] = round(time.time() - started)
    text = render(results)
    print(text)
    Path(args.out).write_text(json.dumps({**results, "table": text}, indent=2) + "\n")
    log(f"wrote {args.out} ({results['elapsed_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
