#!/usr/bin/env python3
"""Precision benchmark of ddpfix on real public Lightning code (issue 29, part B).

For every project of ``manifest.toml``: materialise its sources at the pinned commit in a cache
folder outside the repository (from a local mirror git directory, else ``git clone``), run ddpfix
on it (``--check --output-format json``), match every finding against ``verdicts.toml`` and the
known pitfalls of ``known.toml``, and print precision per rule and overall, recall on the known
list, safe fixes judged wrong, fix counts, crashes, time, and every finding nobody has judged yet.

Stdlib only (Python 3.11+: tomllib). Usage::

    python bench/real/run.py                      # everything
    python bench/real/run.py --project bolts      # one project (repeatable)
    python bench/real/run.py --rules DDP004,DDP006
    python bench/real/run.py --unjudged-only      # only the findings nobody judged
    python bench/real/run.py --json               # machine-readable
    python bench/real/run.py --stubs              # TOML stubs of the unjudged findings, to paste and judge
    python bench/real/run.py --ddpfix "python -m ddpfix"   # the ddpfix to score (default: this interpreter's)

A finding is keyed by (project, path, code, the stripped text of its line, occurrence): the n-th
finding of that code on a line with that text in that file. Lines added or removed elsewhere do not
lose a verdict; editing the finding's own line does (it is a new finding: judge it again).
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERDICTS = ("right", "wrong", "noise")
FIX_VERDICTS = ("right", "wrong", "unprovable")
STAMP = ".ddpfix-real-commit"
#: Codes of a file ddpfix could not handle that are not a crash of ddpfix: a file that does not parse
#: (E999), a file too large or unreadable (E902), a note (a notebook cell left out).
NOT_CRASH_PROBLEMS = {"E999", "E902", "note"}


# ----------------------------------------------------------------------------------------------
# data


@dataclass
class Finding:
    project: str
    path: str
    line: int
    code: str
    message: str
    text: str  # the stripped source line (in a notebook: the line of the cell)
    applicability: str | None  # "safe", "unsafe" or None (no fix)
    cell: int | None = None
    occurrence: int = 1
    verdict: dict | None = None

    @property
    def key(self) -> tuple:
        return (self.project, self.path, self.code, self.text, self.occurrence)

    def where(self) -> str:
        cell = f":cell {self.cell}" if self.cell is not None else ""
        return f"{self.project} {self.path}{cell}:{self.line}"


@dataclass
class ProjectRun:
    name: str
    status: str = "ok"  # ok / missing / crash
    note: str = ""
    seconds: float = 0.0
    rc: int | None = None
    files: int = 0
    lines: int = 0
    findings: list[Finding] = field(default_factory=list)
    problems: list[dict] = field(default_factory=list)  # E999 / E902 / notes
    crashes: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------------------------
# files


def load_toml(path: Path) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def load_manifest(path: Path) -> list[dict]:
    projects = load_toml(path).get("project", [])
    names = [p["name"] for p in projects]
    dup = [n for n, c in Counter(names).items() if c > 1]
    if dup:
        raise SystemExit(f"manifest: duplicate project names {dup}")
    return projects


def load_verdicts(path: Path) -> dict[tuple, dict]:
    """(project, path, code, text, occurrence) -> the verdict entry."""
    if not path.exists():
        return {}
    table: dict[tuple, dict] = {}
    for entry in load_toml(path).get("verdict", []):
        key = (entry["project"], entry["path"], entry["code"], entry["text"].strip(), int(entry.get("occurrence", 1)))
        if entry.get("verdict") not in VERDICTS:
            raise SystemExit(f"verdicts: {key}: verdict must be one of {VERDICTS}, not {entry.get('verdict')!r}")
        if "fix" in entry and entry["fix"] not in FIX_VERDICTS:
            raise SystemExit(f"verdicts: {key}: fix must be one of {FIX_VERDICTS}, not {entry['fix']!r}")
        if key in table:
            raise SystemExit(f"verdicts: judged twice: {key}")
        table[key] = entry
    return table


def load_known(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return load_toml(path).get("pitfall", [])


def toml_str(value: str) -> str:
    # A JSON string is a valid TOML basic string (same escapes), kept on one line.
    return json.dumps(value, ensure_ascii=False)


# ----------------------------------------------------------------------------------------------
# materialising a project


def _git(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], capture_output=True, **kw)


def find_mirror(mirrors: Path | None, repo: str) -> Path | None:
    """The git directory of a local mirror of owner/name: <mirrors>/owner+name[/repo][/.git]."""
    if mirrors is None:
        return None
    base = mirrors / repo.replace("/", "+")
    for cand in (base / "repo", base / "repo" / ".git", base, base / ".git"):
        if cand.is_dir() and (cand / "HEAD").is_file() and (cand / "objects").is_dir():
            return cand
    return None


def extract_tree(git_dir: Path, commit: str, dest: Path) -> tuple[int, int]:
    """Write the commit's files under dest (blobs the mirror lacks are skipped: large files are
    absent from some snapshots). Returns (files written, files missing)."""
    ls = _git(["--git-dir", str(git_dir), "ls-tree", "-r", "-z", commit])
    if ls.returncode != 0:
        raise RuntimeError(ls.stderr.decode(errors="replace").strip())
    entries = []
    for item in ls.stdout.split(b"\0"):
        if not item:
            continue
        meta, _, name = item.partition(b"\t")
        mode, kind, sha = meta.split()
        if kind != b"blob" or mode == b"120000":  # submodules and symlinks are left out
            continue
        entries.append((sha.decode(), name.decode("utf-8", "surrogateescape"), mode))
    written = missing = 0
    proc = subprocess.Popen(["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    # feed in a thread so that a large tree cannot deadlock the pipes
    import threading

    def feed():
        for sha, _, _ in entries:
            proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.close()

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    out = proc.stdout
    for sha, name, mode in entries:
        header = out.readline().split()
        if len(header) < 3 or header[1] != b"blob":  # "<sha> missing"
            missing += 1
            continue
        size = int(header[2])
        data = out.read(size)
        out.read(1)  # the newline after the content
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        if mode == b"100755":
            target.chmod(0o755)
        written += 1
    t.join()
    proc.wait()
    return written, missing


def materialise(entry: dict, cache: Path, mirrors: Path | None, allow_clone: bool) -> tuple[Path | None, str]:
    """The project's folder in the cache, at its pinned commit; (None, why) when it cannot be had."""
    name, repo, commit = entry["name"], entry["repo"], entry["commit"]
    dest = cache / name
    stamp = dest / STAMP
    if stamp.is_file() and stamp.read_text().split()[0] == commit:
        return dest, "cached"
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=cache))
    try:
        git_dir = find_mirror(mirrors, repo)
        how = ""
        if git_dir is not None and _git(["--git-dir", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"]).returncode == 0:
            written, missing = extract_tree(git_dir, commit, tmp)
            how = f"mirror {git_dir}: {written} files" + (f", {missing} absent from the snapshot" if missing else "")
        elif allow_clone:
            clone = tmp / ".clone"
            url = f"https://github.com/{repo}.git"
            r = _git(["clone", "--quiet", "--no-checkout", "--filter=blob:limit=4m", url, str(clone)], timeout=600)
            if r.returncode != 0:
                why = "no mirror with that commit" if git_dir is None else f"mirror {git_dir} lacks {commit}"
                return None, f"{why}; git clone {url} failed: {r.stderr.decode(errors='replace').strip()[-300:]}"
            written, missing = extract_tree(clone / ".git", commit, tmp)
            shutil.rmtree(clone, ignore_errors=True)
            how = f"git clone {url}: {written} files" + (f", {missing} absent" if missing else "")
        else:
            return None, "no local mirror with that commit, and cloning is off (--no-clone)"
        (tmp / STAMP).write_text(f"{commit}\n{how}\n")
        if dest.exists():
            shutil.rmtree(dest)
        tmp.rename(dest)
        return dest, how
    except (OSError, RuntimeError, subprocess.SubprocessError) as err:
        return None, f"could not materialise: {err}"
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


# ----------------------------------------------------------------------------------------------
# running ddpfix and reading its findings


def source_lines(root: Path, path: str, cell: int | None, cache: dict) -> list[str]:
    k = (path, cell)
    if k not in cache:
        lines: list[str] = []
        try:
            raw = (root / path).read_bytes().decode("utf-8-sig", errors="replace")
            if cell is None:
                lines = raw.splitlines()
            else:
                nb = json.loads(raw)
                src = nb["cells"][cell - 1].get("source", "")
                lines = ("".join(src) if isinstance(src, list) else src).splitlines()
        except (OSError, ValueError, KeyError, IndexError):
            pass
        cache[k] = lines
    return cache[k]


def count_size(root: Path, target: Path) -> tuple[int, int]:
    """Python files and notebooks under target, and their lines (code cells for notebooks)."""
    files = lines = 0
    for p in sorted(target.rglob("*")):
        if p.suffix not in (".py", ".ipynb") or not p.is_file():
            continue
        files += 1
        try:
            raw = p.read_bytes().decode("utf-8", errors="replace")
            if p.suffix == ".py":
                lines += raw.count("\n") + (0 if raw.endswith("\n") or not raw else 1)
            else:
                for c in json.loads(raw).get("cells", []):
                    if c.get("cell_type") == "code":
                        src = c.get("source", "")
                        lines += len(("".join(src) if isinstance(src, list) else src).splitlines())
        except (OSError, ValueError, AttributeError):
            pass
    return files, lines


def run_ddpfix(cmd: list[str], root: Path, target: str, timeout: float, extra: list[str],
               select: str | None) -> tuple[int | None, float, str, str]:
    args = [*cmd, "--check", "--output-format", "json", "--no-color", *extra]
    if select:
        args += ["--select", select]
    args.append(target)
    t0 = time.monotonic()
    try:
        r = subprocess.run(args, cwd=root, capture_output=True, timeout=timeout,
                           env={**os.environ, "NO_COLOR": "1"})
    except subprocess.TimeoutExpired as err:
        out = (err.stdout or b"").decode(errors="replace")
        return None, time.monotonic() - t0, out, f"timeout after {timeout:.0f} s"
    return r.returncode, time.monotonic() - t0, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def read_findings(name: str, root: Path, records: list[dict], run: ProjectRun) -> None:
    lines_cache: dict = {}
    seen: Counter = Counter()
    records = sorted(records, key=lambda r: (r.get("path", ""), r.get("cell") or 0, r.get("line") or 0,
                                             r.get("column") or 0, r.get("code", "")))
    for r in records:
        code = r.get("code", "")
        msg = r.get("message", "")
        if "internal error" in msg:
            run.crashes.append(f"{r.get('path')}:{r.get('line')}: {code} {msg}")
            continue
        if not code.startswith("DDP"):
            if code not in NOT_CRASH_PROBLEMS:
                run.crashes.append(f"{r.get('path')}:{r.get('line')}: {code} {msg}")
            else:
                run.problems.append(r)
            continue
        if r.get("suppressed"):
            continue
        lines = source_lines(root, r["path"], r.get("cell"), lines_cache)
        line = int(r.get("line") or 0)
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        f = Finding(name, r["path"], line, code, msg, text,
                    r.get("applicability") if r.get("fixable") else None, r.get("cell"))
        seen[(f.path, f.code, f.text)] += 1
        f.occurrence = seen[(f.path, f.code, f.text)]
        run.findings.append(f)


def check_project(entry: dict, root: Path, cmd: list[str], timeout: float, extra: list[str],
                  select: str | None) -> ProjectRun:
    run = ProjectRun(entry["name"])
    target = entry.get("subdir") or "."
    if not (root / target).exists():
        run.status, run.note = "missing", f"subdir {target} not in the snapshot"
        return run
    run.files, run.lines = count_size(root, root / target)
    rc, secs, out, err = run_ddpfix(cmd, root, target, timeout, extra, select)
    run.rc, run.seconds = rc, secs
    if rc is None:
        run.status = "crash"
        run.crashes.append(err)
        return run
    try:
        records = json.loads(out) if out.strip() else []
    except ValueError:
        run.status = "crash"
        run.crashes.append(f"exit {rc}, output is not JSON: {err.strip()[-500:] or out[:300]}")
        return run
    read_findings(entry["name"], root, records, run)
    if rc not in (0, 1, 2):
        run.crashes.append(f"exit {rc}: {err.strip()[-500:]}")
    elif rc == 2 and not run.problems and not run.crashes:
        run.crashes.append(f"exit 2 without an unparsable file: {err.strip()[-500:]}")
    if run.crashes:
        run.status = "crash"
    return run


# ----------------------------------------------------------------------------------------------
# scoring


def judge(findings: list[Finding], verdicts: dict[tuple, dict]) -> list[tuple]:
    """Attach each finding's verdict; return the verdict keys no finding matched (stale)."""
    used = set()
    for f in findings:
        v = verdicts.get(f.key)
        if v is not None:
            f.verdict = v
            used.add(f.key)
    return [k for k in verdicts if k not in used]


def known_lines(pit: dict, root: Path | None) -> set[int]:
    """The lines a known pitfall names: its `occurrence`-th line with that stripped text in the file (robust to
    line shifts), else its `line`, else every line with that text. Empty when the file cannot be read (then the
    text alone decides)."""
    text = pit.get("text", "").strip()
    lines = source_lines(root, pit["path"], None, {}) if root is not None and not pit["path"].endswith(".ipynb") else []
    same = [n for n, l in enumerate(lines, 1) if l.strip() == text]
    if "occurrence" in pit:
        occ = int(pit["occurrence"])
        return {same[occ - 1]} if 0 < occ <= len(same) else set()
    if "line" in pit:
        return {int(pit["line"])}
    return set(same)


def known_found(pit: dict, findings: list[Finding], root: Path | None = None) -> Finding | None:
    text = pit.get("text", "").strip()
    targets = known_lines(pit, root)
    for f in findings:
        if f.project == pit["project"] and f.path == pit["path"] and f.code == pit["code"]:
            if (f.line in targets) if targets else (text and f.text == text):
                return f
    return None


def score(runs: list[ProjectRun], verdicts: dict[tuple, dict], known: list[dict],
          rules: set[str] | None, roots: dict[str, Path] | None = None) -> dict:
    findings = [f for r in runs for f in r.findings if rules is None or f.code in rules]
    projects = {r.name for r in runs if r.status != "missing"}
    judged_projects = {r.name for r in runs}
    stale = [k for k in judge(findings, verdicts) if k[0] in judged_projects and (rules is None or k[2] in rules)]
    per_rule: dict[str, Counter] = defaultdict(Counter)
    for f in findings:
        c = per_rule[f.code]
        c["findings"] += 1
        c[f.verdict["verdict"] if f.verdict else "unjudged"] += 1
        if f.applicability == "safe":
            c["safe_fixes"] += 1
        elif f.applicability == "unsafe":
            c["unsafe_fixes"] += 1

    def prec(c: Counter) -> float | None:
        judged = c["right"] + c["wrong"] + c["noise"]
        return c["right"] / judged if judged else None

    total = Counter()
    for c in per_rule.values():
        total.update(c)
    safe_wrong = [f for f in findings if f.applicability == "safe" and f.verdict
                  and (f.verdict["verdict"] != "right" or f.verdict.get("fix") == "wrong")]
    # a fix the verdict calls right and provable, which ddpfix does not apply by default (part C)
    provable_not_safe = [f for f in findings if f.applicability == "unsafe" and f.verdict
                         and f.verdict["verdict"] == "right" and f.verdict.get("fix") == "right"]
    pits = [p for p in known if p["project"] in projects and (rules is None or p["code"] in rules)]
    found, missed = [], []
    for p in pits:
        (found if known_found(p, findings, (roots or {}).get(p["project"])) else missed).append(p)
    known_by_rule: dict[str, Counter] = defaultdict(Counter)
    for p in found:
        known_by_rule[p["code"]]["found"] += 1
    for p in missed:
        known_by_rule[p["code"]]["missed"] += 1
    unjudged = [f for f in findings if f.verdict is None]
    return {
        "per_rule": {code: {**dict(c), "precision": prec(c)} for code, c in sorted(per_rule.items())},
        "overall": {**dict(total), "precision": prec(total)},
        "provisional": bool(unjudged),
        "recall": (len(found) / len(pits)) if pits else None,
        "known": {"total": len(pits), "found": len(found), "missed": missed,
                  "per_rule": {k: dict(v) for k, v in sorted(known_by_rule.items())}},
        "safe_fixes_judged_wrong": safe_wrong,
        "provable_fix_not_safe": provable_not_safe,
        "unjudged": unjudged,
        "stale_verdicts": stale,
        "findings": findings,
    }


# ----------------------------------------------------------------------------------------------
# output


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def finding_line(f: Finding) -> str:
    fix = {"safe": " [*]", "unsafe": " [~]"}.get(f.applicability or "", "")
    return f"{f.where()}: {f.code}{fix} {f.message}    | {f.text}"


def stub(f: Finding) -> str:
    out = ["[[verdict]]", f"project = {toml_str(f.project)}", f"path = {toml_str(f.path)}",
           f"code = {toml_str(f.code)}", f"text = {toml_str(f.text)}"]
    if f.occurrence != 1:
        out.append(f"occurrence = {f.occurrence}")
    out += [f'verdict = ""  # line {f.line}{f" cell {f.cell}" if f.cell else ""}: {f.message}', 'why = ""']
    if f.applicability:
        out.append(f'fix = ""  # {f.applicability}')
    return "\n".join(out) + "\n"


def report_text(runs: list[ProjectRun], s: dict, total_secs: float) -> str:
    out = []
    ok = [r for r in runs if r.status != "missing"]
    out.append(f"projects: {len(ok)} checked of {len(runs)}; files {sum(r.files for r in ok)}; "
               f"lines {sum(r.lines for r in ok)}; ddpfix time {sum(r.seconds for r in ok):.1f} s "
               f"(whole run {total_secs:.1f} s)")
    for r in runs:
        if r.status == "missing":
            out.append(f"  MISSING {r.name}: {r.note}")
    out.append("")
    hdr = f"{'rule':8} {'findings':>8} {'right':>6} {'wrong':>6} {'noise':>6} {'unjudged':>8} {'precision':>9} {'safe':>5} {'unsafe':>6} {'known':>7}"
    out.append(hdr)
    kn = s["known"]["per_rule"]
    codes = sorted(set(s["per_rule"]) | set(kn))
    for code in codes:
        c = s["per_rule"].get(code, {})
        k = kn.get(code, {})
        ktot = k.get("found", 0) + k.get("missed", 0)
        out.append(f"{code:8} {c.get('findings', 0):>8} {c.get('right', 0):>6} {c.get('wrong', 0):>6} "
                   f"{c.get('noise', 0):>6} {c.get('unjudged', 0):>8} {pct(c.get('precision')):>9} "
                   f"{c.get('safe_fixes', 0):>5} {c.get('unsafe_fixes', 0):>6} "
                   f"{(str(k.get('found', 0)) + '/' + str(ktot)) if ktot else '-':>7}")
    o = s["overall"]
    out.append(f"{'overall':8} {o.get('findings', 0):>8} {o.get('right', 0):>6} {o.get('wrong', 0):>6} "
               f"{o.get('noise', 0):>6} {o.get('unjudged', 0):>8} {pct(o.get('precision')):>9} "
               f"{o.get('safe_fixes', 0):>5} {o.get('unsafe_fixes', 0):>6} "
               f"{s['known']['found']}/{s['known']['total']:<3}")
    out.append("")
    prov = " (PROVISIONAL: %d findings unjudged)" % len(s["unjudged"]) if s["provisional"] else ""
    out.append(f"overall precision: {pct(o.get('precision'))}{prov}")
    out.append(f"recall on the known pitfalls: {pct(s['recall'])} ({s['known']['found']} of {s['known']['total']})")
    out.append(f"safe fixes: {o.get('safe_fixes', 0)}; unsafe fixes: {o.get('unsafe_fixes', 0)}; "
               f"safe fixes judged wrong: {len(s['safe_fixes_judged_wrong'])}; "
               f"fixes judged right and provable but not safe: {len(s['provable_fix_not_safe'])}")
    crashes = [(r.name, c) for r in runs for c in r.crashes]
    out.append(f"crashes: {len(crashes)}")
    for name, c in crashes:
        out.append(f"  CRASH {name}: {c}")
    problems = [(r.name, p) for r in runs for p in r.problems if p.get("code") != "note"]
    if problems:
        out.append(f"files ddpfix could not parse or read (not crashes): {len(problems)}")
        for name, p in problems:
            out.append(f"  {name} {p.get('path')}: {p.get('code')} {p.get('message', '')[:120]}")
    for f in s["safe_fixes_judged_wrong"]:
        out.append(f"  SAFE FIX JUDGED WRONG: {finding_line(f)}  -- {f.verdict.get('why', '')}")
    for p in s["known"]["missed"]:
        out.append(f"  MISSED {p['code']} {p['project']} {p['path']}: {p.get('text', '')}  -- {p.get('what', '')}")
    if s["stale_verdicts"]:
        out.append(f"verdicts matching no finding (the finding is gone or its line changed): {len(s['stale_verdicts'])}")
        for k in s["stale_verdicts"]:
            out.append(f"  STALE {k[0]} {k[1]} {k[2]} #{k[4]}: {k[3]}")
    out.append("")
    out.append(f"unjudged findings: {len(s['unjudged'])}")
    for f in s["unjudged"]:
        out.append("  " + finding_line(f))
    out.append("")
    out.append("per project: " + ", ".join(f"{r.name} {len(r.findings)}f/{r.seconds:.1f}s" + ("" if r.status == "ok" else f" [{r.status}]") for r in runs))
    return "\n".join(out)


def report_json(runs: list[ProjectRun], s: dict, total_secs: float) -> str:
    def fd(f: Finding) -> dict:
        return {"project": f.project, "path": f.path, "line": f.line, "cell": f.cell, "code": f.code,
                "message": f.message, "text": f.text, "occurrence": f.occurrence,
                "applicability": f.applicability, "verdict": (f.verdict or {}).get("verdict"),
                "fix_verdict": (f.verdict or {}).get("fix"), "why": (f.verdict or {}).get("why")}
    ok = [r for r in runs if r.status != "missing"]
    return json.dumps({
        "size": {"projects": len(ok), "files": sum(r.files for r in ok), "lines": sum(r.lines for r in ok)},
        "time_s": round(sum(r.seconds for r in ok), 2), "wall_s": round(total_secs, 2),
        "per_rule": s["per_rule"], "overall": s["overall"], "provisional": s["provisional"],
        "recall": s["recall"],
        "known": {**s["known"], "missed": s["known"]["missed"]},
        "safe_fixes_judged_wrong": [fd(f) for f in s["safe_fixes_judged_wrong"]],
        "provable_fix_not_safe": [fd(f) for f in s["provable_fix_not_safe"]],
        "crashes": [{"project": r.name, "what": c} for r in runs for c in r.crashes],
        "missing": [{"project": r.name, "why": r.note} for r in runs if r.status == "missing"],
        "projects": [{"name": r.name, "status": r.status, "rc": r.rc, "seconds": round(r.seconds, 2),
                      "files": r.files, "lines": r.lines, "findings": len(r.findings)} for r in runs],
        "unjudged": [fd(f) for f in s["unjudged"]],
        "stale_verdicts": [list(k) for k in s["stale_verdicts"]],
        "findings": [fd(f) for f in s["findings"]],
    }, indent=1, default=str)


# ----------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", type=Path, default=HERE / "manifest.toml")
    ap.add_argument("--verdicts", type=Path, default=HERE / "verdicts.toml")
    ap.add_argument("--known", type=Path, default=HERE / "known.toml")
    ap.add_argument("--cache", type=Path,
                    default=Path(os.environ.get("DDPFIX_REAL_CACHE") or Path.home() / ".cache" / "ddpfix-real"),
                    help="where the projects' sources are materialised (default $DDPFIX_REAL_CACHE or ~/.cache/ddpfix-real)")
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"),
                    help="folder of local mirror git dirs named owner+name (default /work/.mirror)")
    ap.add_argument("--no-clone", action="store_true", help="never git clone a project that no mirror has")
    ap.add_argument("--ddpfix", default=None,
                    help="the ddpfix command to score (default: '<this python> -m ddpfix'; set PYTHONPATH=<tree>/src to score a tree)")
    ap.add_argument("--ddpfix-arg", action="append", default=[],
                    help="an extra argument for ddpfix (repeatable), e.g. --ddpfix-arg=--extend-select=DDP")
    ap.add_argument("--project", action="append", help="only this project (repeatable)")
    ap.add_argument("--rules", help="only these rule codes, comma-separated (also passed to ddpfix as --select)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per project (default 120)")
    ap.add_argument("--unjudged-only", action="store_true", help="print only the findings nobody has judged")
    ap.add_argument("--stubs", action="store_true", help="print TOML verdict stubs for the unjudged findings")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--context", type=int, default=0, metavar="N",
                    help="with --unjudged-only: print N source lines either side of each finding, to judge it")
    a = ap.parse_args(argv)

    cmd = shlex.split(a.ddpfix) if a.ddpfix else [sys.executable, "-m", "ddpfix"]
    manifest = load_manifest(a.manifest)
    if a.project:
        unknown = set(a.project) - {p["name"] for p in manifest}
        if unknown:
            ap.error(f"no such project in the manifest: {sorted(unknown)}")
        manifest = [p for p in manifest if p["name"] in a.project]
    rules = {r.strip().upper() for r in a.rules.split(",") if r.strip()} if a.rules else None
    verdicts = load_verdicts(a.verdicts)
    known = load_known(a.known)
    a.cache.mkdir(parents=True, exist_ok=True)
    mirrors = a.mirrors if a.mirrors and a.mirrors.is_dir() else None

    t0 = time.monotonic()
    runs = []
    for entry in manifest:
        root, how = materialise(entry, a.cache, mirrors, not a.no_clone)
        if root is None:
            runs.append(ProjectRun(entry["name"], status="missing", note=how))
            print(f"MISSING {entry['name']} ({entry['repo']}@{entry['commit'][:10]}): {how}", file=sys.stderr)
            continue
        run = check_project(entry, root, cmd, a.timeout, a.ddpfix_arg, ",".join(sorted(rules)) if rules else None)
        runs.append(run)
        if not a.json:
            print(f"  {entry['name']}: {len(run.findings)} findings, {run.seconds:.1f} s"
                  + ("" if run.status == "ok" else f" [{run.status}]"), file=sys.stderr)
    total = time.monotonic() - t0
    s = score(runs, verdicts, known, rules, {r.name: a.cache / r.name for r in runs if r.status != "missing"})
    if a.stubs:
        print("\n".join(stub(f) for f in s["unjudged"]))
    elif a.json:
        print(report_json(runs, s, total))
    elif a.unjudged_only:
        for i, f in enumerate(s["unjudged"]):
            print(f"[{i}] " + finding_line(f) if a.context else finding_line(f))
            if a.context:
                lines = source_lines(a.cache / f.project, f.path, f.cell, {})
                for n in range(max(1, f.line - a.context), min(len(lines), f.line + a.context) + 1):
                    print(f"    {'>' if n == f.line else ' '}{n:5} {lines[n - 1]}")
        print(f"{len(s['unjudged'])} unjudged", file=sys.stderr)
    else:
        print(report_text(runs, s, total))
    return 1 if any(r.crashes for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
