"""``ddpfix rehearse [OPTIONS] -- PYTHON SCRIPT [ARGS...]``: run the user's own script on CPU ranks
and report what multi-GPU DDP would do with it (docs/rehearse.md).

The one ddpfix command that runs user code, and only the command the user names, under the
interpreter the user names (ddpfix itself never imports torch). Exit status: 0 clean, 1 a hang, a
crash or a divergence found (or, with ``--verify``, still there after the fixes), 2 could not
rehearse (the reason is said: the script failed before it built a Trainer, built none, or the
command names no script).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from ddpfix.model.program import program_root
from ddpfix.rehearse import launch, report as reports

EXIT_CLEAN, EXIT_FOUND, EXIT_CANNOT = 0, 1, 2

USAGE = "ddpfix rehearse [--devices N] [--batches K] [--stall S] [--timeout S] [--json] [--verify] -- PYTHON SCRIPT [ARGS...]"


def parser() -> argparse.ArgumentParser:
    parse = argparse.ArgumentParser(
        prog="ddpfix rehearse", usage=USAGE,
        description="Run your training script on CPU ranks (gloo), as it would run on N GPUs under DDP, and report "
                    "hangs, crashes and ranks that diverge, at your script's line. It runs your code: only the "
                    "command you give, under the interpreter you name.",
        epilog="Example: ddpfix rehearse -- python train.py --config small.yaml   (docs/rehearse.md)")
    parse.add_argument("--devices", type=int, default=2, metavar="N", help="CPU ranks to run (default 2)")
    parse.add_argument("--batches", type=int, default=2, metavar="K",
                       help="batches per loader and epoch: every Trainer gets limit_*_batches=K (default 2)")
    parse.add_argument("--epochs", type=int, default=2, metavar="E", help="epochs at most (default 2)")
    parse.add_argument("--stall", type=float, default=20.0, metavar="S",
                       help="a hang: no rank records anything or uses CPU for S seconds (default 20)")
    parse.add_argument("--timeout", type=float, default=600.0, metavar="S", help="stop the whole run after S seconds (default 600)")
    parse.add_argument("--json", action="store_true", help="print the report as JSON")
    parse.add_argument("--verify", action="store_true",
                       help="if it fails, apply ddpfix's fixes to a scratch copy and rehearse that copy too")
    parse.add_argument("--unsafe-fixes", action="store_true", help="with --verify: apply the unsafe fixes too")
    parse.add_argument("--keep", action="store_true", help="keep the rehearsal's folder (events, stacks, output) and say where")
    parse.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command that runs your script")
    return parse


def main(argv: list[str]) -> int:
    with launch.signals_raise() as stopped:
        try:
            return _main(argv)
        except KeyboardInterrupt:  # launch.run has killed every process it started on the way out
            how = "stopped" if stopped else "interrupted"
            print(f"ddpfix rehearse: {how}; every process it started is stopped.", file=sys.stderr)
            return 128 + (stopped[0] if stopped else signal.SIGINT)


def _main(argv: list[str]) -> int:
    options = parser().parse_args(argv)
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    if options.devices < 1 or options.batches < 1 or options.epochs < 1:
        return _cannot(options, "--devices, --batches and --epochs must be at least 1")
    if not command:
        return _cannot(options, f"no command given. Usage: {USAGE}")
    if command[0].endswith(".py"):  # ``ddpfix rehearse train.py``: as ``python train.py`` would run it
        python = shutil.which("python") or shutil.which("python3")
        if python is None:
            return _cannot(options, "no python on PATH: name the interpreter, as in `ddpfix rehearse -- python train.py`")
        command = [python, *command]
    options.command_shown = [os.path.basename(command[0]), *command[1:]]
    script = _script_of(command)
    if script is None:
        return _cannot(options, "the command names no Python script file of this folder (rehearse runs "
                                "`PYTHON SCRIPT.py [ARGS...]` or `PYTHON -m MODULE` of a package here)")
    if not script.is_file():
        return _cannot(options, f"no such script: {script}")
    first = rehearse(command, script, options)
    findings = static_findings(script)
    attach(first, findings)
    if not options.verify or first.why_not or not first.failed:
        _print(options, first)
        return _status(first)
    verified = verify(command, script, options)
    _print(options, first, verified)
    if verified.get("report") is None:
        return EXIT_FOUND
    return EXIT_CLEAN if not verified["report"].failed and not verified["report"].why_not else EXIT_FOUND


def _script_of(command: list[str]) -> Path | None:
    """The script ``PYTHON [interpreter options] SCRIPT.py ...`` runs (None for ``-m``/``-c``)."""
    args = command[1:]
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-m" and i + 1 < len(args):  # a module of the current folder's packages
            parts = args[i + 1].split(".")
            for candidate in (Path(*parts).with_suffix(".py"), Path(*parts, "__main__.py")):
                if candidate.is_file():
                    return candidate.resolve()
            return None
        if arg == "-c":
            return None
        if arg in ("-X", "-W"):
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        return Path(arg).resolve()
    return None


def rehearse(command: list[str], script: Path, options, cwd: Path | None = None, devices: int | None = None,
             shown: str | None = None) -> reports.Report:
    devices = devices or options.devices
    out = Path(tempfile.mkdtemp(prefix="ddpfix-rehearse-"))
    try:
        result = _rehearse_in(out, command, script, options, cwd, devices, shown)
    except BaseException:  # (a Ctrl-C or a stop: the folder holds nothing anyone asked to keep)
        if not options.keep:
            shutil.rmtree(out, ignore_errors=True)
        raise
    if options.keep:
        result.mappings.append(f"kept: {out}")
    else:
        shutil.rmtree(out, ignore_errors=True)
    return result


def _rehearse_in(out: Path, command: list[str], script: Path, options, cwd: Path | None, devices: int,
                 shown: str | None) -> reports.Report:
    root = Path(program_root(str(script)))
    env, removed = launch.environment(out, root, devices, options.batches, options.epochs, dict(os.environ))
    outcome = launch.run(command, cwd or Path.cwd(), env, out, options.stall, options.timeout)
    result = reports.build(out, shown or os.path.relpath(script), devices, outcome)
    if not any(out.glob("events-*.jsonl")) and not outcome.stopped:
        # The start-up code never ran (a Python that ignores PYTHONPATH, -I or -E, or one it broke in).
        result.why_not = ("ddpfix's start-up code did not run in the script's interpreter (run with -E or -I, or "
                          "it failed: see the output)")
        result.problems = []
    if removed:
        result.mappings.append(f"environment: {', '.join(removed)} unset (the rehearsal starts its own ranks)")
    _could_not(result, outcome)
    return result


NEEDS_A_GPU = re.compile(r"Torch not compiled with CUDA|Cannot get CUDA generator|ATen_cuda|Found no NVIDIA driver|"
                         r"CUDA driver|No CUDA GPUs are available|requires a GPU|bitsandbytes.*(CUDA|GPU)")


def _could_not(result: reports.Report, outcome) -> None:
    """A run that never built a Trainer or Fabric rehearsed nothing, and one that needs a GPU for
    something the rehearsal cannot map ran something else: say why (exit 2)."""
    needs = [p for p in result.problems if p.kind == "exception" and NEEDS_A_GPU.search(p.message)]
    if needs:
        place = needs[0].place()
        result.why_not = (f"the script needs a GPU for something the rehearsal cannot map{' at ' + place if place else ''}: "
                          f"{needs[0].message.split(': ', 1)[-1]}")
        result.problems = []
        return
    if result.trainers or outcome.stopped:
        return
    errors = [p for p in result.problems if p.kind == "exception"]
    if errors:
        place = errors[0].place()
        result.why_not = f"the script failed before it built a Trainer or Fabric{' at ' + place if place else ''}: " + errors[0].message.split(": ", 1)[-1]
    elif outcome.returncode:
        result.why_not = f"the script exited with status {outcome.returncode} before it built a Trainer or Fabric"
    else:
        result.why_not = "the script built no Trainer or Fabric: there was nothing to rehearse"
    result.problems = []


def static_findings(script: Path, folder: Path | None = None) -> list[dict]:
    """ddpfix's own findings for the script (the static side), as its JSON output gives them."""
    proc = subprocess.run([sys.executable, "-m", "ddpfix", "--output-format", "json", "--no-color", str(script)],
                          capture_output=True, text=True, cwd=folder or script.parent, timeout=300)
    try:
        return json.loads(proc.stdout or "[]")
    except ValueError:
        return []


def gpu_only_rules() -> set[str]:
    """The rules whose failures only GPUs show (``Rule.gpu_only``): a CPU rehearsal runs them clean."""
    from ddpfix.rules import all_rules

    return {rule.code for rule in all_rules() if rule.gpu_only}


def attach(result: reports.Report, findings: list[dict]) -> None:
    """For each problem, the static findings that know its shape: a rule it names, near its line;
    and the findings of what only GPUs show, said beside any verdict."""
    codes = gpu_only_rules()
    gpu_only = [f for f in findings if f["code"] in codes and not f.get("suppressed")]
    for problem in result.problems:
        near = []
        for finding in findings:
            if finding["code"] not in problem.rules:
                continue
            if problem.site and abs(finding["line"] - problem.site[1]) > 6:
                continue
            how = {"safe": "safe fix", "unsafe": "unsafe fix (--unsafe-fixes)"}.get(finding.get("applicability"), "no fix")
            near.append(f"{finding['path']}:{finding['line']}: {finding['code']} {finding['message']} [{how}]")
            if finding in gpu_only:
                gpu_only.remove(finding)
        problem.findings = near
    result.gpu_only = [f"{f['path']}:{f['line']}: {f['code']} {f['message']}" for f in gpu_only]


def _as_yours(report: reports.Report, copy: Path, root: Path) -> reports.Report:
    """The copy's report with its places named as the user's files (``train.py:41``, not the scratch
    copy's ``../../tmp/ddpfix-verify-.../train.py:41``): the lines are the same but where a fix
    added some."""
    theirs, yours = os.path.relpath(copy), os.path.relpath(root)

    def named(text: str) -> str:
        if yours == ".":
            return text.replace(theirs + os.sep, "")
        return text.replace(theirs, yours)

    report.mappings = [named(line) for line in report.mappings]
    for problem in report.problems:
        problem.message = named(problem.message)
        problem.details = [named(line) for line in problem.details]
        problem.findings = [named(line) for line in problem.findings]
        if problem.site:
            problem.site = [named(str(problem.site[0])), *problem.site[1:]]
    return report


def verify(command: list[str], script: Path, options) -> dict:
    """Apply ddpfix's fixes to a scratch copy of the script's program and rehearse the copy (and the
    copy on one process, whose logged keys every rank must match)."""
    root = Path(program_root(str(script)))
    scratch = Path(tempfile.mkdtemp(prefix="ddpfix-verify-"))
    try:
        copy = scratch / root.name
        skipped: list[str] = []
        shutil.copytree(root, copy, ignore=_copy_ignore(skipped), symlinks=True)
        fixed_script = copy / script.relative_to(root)
        args = [sys.executable, "-m", "ddpfix", "--write", "--no-color", *(["--unsafe-fixes"] if options.unsafe_fixes else []),
                str(fixed_script)]
        fix = subprocess.run(args, capture_output=True, text=True, cwd=copy, timeout=300)
        name = os.path.relpath(script)
        diff = "".join(difflib.unified_diff(script.read_text(encoding="utf-8", errors="replace").splitlines(True),
                                            fixed_script.read_text(encoding="utf-8", errors="replace").splitlines(True),
                                            f"{name} (yours)", f"{name} (ddpfix's fixes)"))
        if not diff:
            return {"report": None, "diff": "", "note": "ddpfix changed nothing in the script"
                    + ("" if options.unsafe_fixes else " (its fixes here may be unsafe: --unsafe-fixes)"),
                    "fix_output": fix.stdout + fix.stderr}
        if "-m" in command[1:]:
            return {"report": None, "diff": diff, "note": "--verify runs a script by its path; with -m, apply the fixes "
                    "above and rehearse again"}
        new_command = [str(fixed_script) if Path(a).resolve() == script else a for a in command]
        after = _as_yours(rehearse(new_command, fixed_script, options, shown=f"{name} (fixed copy)"), copy, root)
        single = rehearse(new_command, fixed_script, options, devices=1, shown=f"{name} (fixed copy)")
        keys_one = {k for r in single.ranks for k in single.logged(r)}
        # Keys logged with rank_zero_only (or under a rank guard) are rank 0's alone by design.
        alone = {k for r in after.ranks for k, rows in after.logged(r).items() if rows[0]["rank_zero_only"]}
        differ = [r for r in after.ranks if set(after.logged(r)) - alone != keys_one - alone] if not single.why_not else []
        return {"report": after, "diff": diff, "skipped": skipped, "single_keys": sorted(keys_one),
                "keys_differ": differ, "fix_output": fix.stdout + fix.stderr}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


BIG = 5 * 1024 * 1024
SKIPPED_FOLDERS = {".git", ".hg", ".venv", "venv", "__pycache__", "lightning_logs", "node_modules", "wandb", "mlruns"}


def _copy_ignore(skipped: list[str]):
    """What the scratch copy leaves out: VCS and environment folders, logs, and files over 5 MB
    (data and checkpoints: the copy runs from your folder, so relative paths still find them)."""
    def ignore(folder: str, names: list[str]) -> set[str]:
        left = {n for n in names if n in SKIPPED_FOLDERS}
        for name in names:
            path = os.path.join(folder, name)
            if name not in left and os.path.isfile(path) and os.path.getsize(path) > BIG:
                left.add(name)
                skipped.append(path)
        return left
    return ignore


def _status(result: reports.Report) -> int:
    if result.why_not:
        return EXIT_CANNOT
    return EXIT_FOUND if result.failed else EXIT_CLEAN


def _cannot(options, why: str) -> int:
    if getattr(options, "json", False):
        print(json.dumps({"result": "could-not-rehearse", "why_not": why}))
    else:
        print(f"ddpfix rehearse: could not rehearse: {why}", file=sys.stderr)
    return EXIT_CANNOT


def _print(options, first: reports.Report, verified: dict | None = None) -> None:
    if options.json:
        data = reports.as_json(first)
        if verified is not None:
            after = verified.get("report")
            data["verify"] = {"note": verified.get("note"), "diff": verified.get("diff"),
                              "after": reports.as_json(after) if after else None,
                              "single_process_keys": verified.get("single_keys"),
                              "ranks_whose_keys_differ_from_one_process": verified.get("keys_differ")}
        print(json.dumps(data, indent=2))
        return
    sys.stdout.write(reports.text(first))
    if verified is None:
        if first.failed:
            again = " ".join(shlex.quote(a) for a in ["ddpfix", "rehearse", "--verify", "--", *options.command_shown])
            sys.stdout.write(f"\nfound: {_verdict(first)}. `{again}` applies ddpfix's fixes to a copy and rehearses it.\n")
        return
    sys.stdout.write("\n--verify: ")
    after = verified.get("report")
    if after is None:
        sys.stdout.write(verified.get("note", "nothing to verify") + "\n")
        return
    sys.stdout.write("ddpfix's fixes, applied to a scratch copy:\n")
    if verified.get("skipped"):
        sys.stdout.write(f"  (left out of the copy, over 5 MB: {len(verified['skipped'])} files; the copy runs from "
                         "your folder, so relative paths still find them)\n")
    sys.stdout.write("".join("  " + line + "\n" for line in verified["diff"].splitlines()))
    sys.stdout.write("\n" + reports.text(after))
    if not after.failed and not after.why_not:
        differ = verified.get("keys_differ")
        tail = ("; every rank logs the keys a one-process run logs" if not differ
                else f"; but rank(s) {differ} log other keys than a one-process run ({verified.get('single_keys')})")
        sys.stdout.write(f"\nverified: the failure is gone after the fixes{tail}. Apply them with `ddpfix --write"
                         f"{' --unsafe-fixes' if options.unsafe_fixes else ''} {os.path.relpath(first.script)}`.\n")
    else:
        sys.stdout.write("\nnot verified: the rehearsal still fails after ddpfix's fixes.\n")


def _verdict(result: reports.Report) -> str:
    kinds = {p.kind for p in result.problems}
    words = []
    if "hang" in kinds:
        words.append("a hang")
    if "exception" in kinds or "emulated" in kinds:
        words.append("a crash")
    if kinds - {"hang", "exception", "emulated"}:
        words.append("ranks that diverge")
    return " and ".join(words)
