"""What a rehearsal found, from the events every process recorded (``inject/sitecustomize.py``) and
the watchdog's stacks: the hang and where each rank waits, exceptions, and the divergences between
ranks — keys logged by some ranks only or in another order, an epoch-level value that differs
between ranks without ``sync_dist``, a monitored key missing on a rank, splits that differ, a
different number of batches — each at the user's line, with the mappings made to run on CPU."""

from __future__ import annotations

import json
import os
import re
import signal
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

EPOCH_HOOKS = re.compile(r"^(validation_step|test_step|on_\w+_epoch_(start|end)|on_(train|validation|test)_(start|end))$")


@dataclass
class Problem:
    kind: str  # hang, exception, logged-keys, unsynced-value, monitor-missing, split, batches, emulated
    message: str
    site: list | None = None  # [path, line, function]
    ranks: list[int] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)  # static rules that know the shape here
    findings: list[str] = field(default_factory=list)  # their findings near here (``command.attach``)
    details: list[str] = field(default_factory=list)  # one line per rank, under the message
    note: bool = False  # said, but no failure (exit 0): a difference that breaks nothing by itself

    def place(self) -> str:
        return f"{self.site[0]}:{self.site[1]}" if self.site else ""


@dataclass
class Report:
    script: str
    devices: int
    ranks: dict[int, dict] = field(default_factory=dict)  # rank -> summary
    problems: list[Problem] = field(default_factory=list)
    mappings: list[str] = field(default_factory=list)
    trainers: int = 0
    seconds: float = 0.0
    stopped: str = ""
    returncode: int | None = 0
    output_tail: str = ""
    why_not: str = ""  # set when the script could not be rehearsed
    gpu_only: list[str] = field(default_factory=list)  # static findings of what CPU ranks cannot show

    @property
    def failed(self) -> bool:
        return any(not problem.note for problem in self.problems)

    def logged(self, rank: int) -> dict[str, list]:
        return self.ranks.get(rank, {}).get("logged", {})


def _site_text(site) -> str:
    return f"{site[0]}:{site[1]}" if site else "?"


def load(out: Path) -> dict[int, list[dict]]:
    """Events per process id, in order."""
    events: dict[int, list[dict]] = {}
    for path in sorted(out.glob("events-*.jsonl")):
        rows = []
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
        if rows:
            events[rows[0]["pid"]] = rows
    return events


def _rank_of(rows: list[dict], leader: int | None) -> int | None:
    ranks = [row["rank"] for row in rows if row.get("rank") is not None]
    if ranks:
        return ranks[-1]
    return 0 if rows and rows[0]["pid"] == leader else None


def build(out: Path, script: str, devices: int, outcome, leader: int | None = None) -> Report:
    report = Report(script, devices, seconds=outcome.seconds, stopped=outcome.stopped, returncode=outcome.returncode)
    report.output_tail = "\n".join(outcome.output.rstrip().splitlines()[-8:])
    by_pid = load(out)
    leader = leader if leader is not None else min(by_pid, default=None, key=lambda pid: by_pid[pid][0]["t"])
    by_rank: dict[int, list[dict]] = defaultdict(list)
    pid_rank: dict[int, int] = {}
    for pid, rows in by_pid.items():
        rank = _rank_of(rows, leader)
        if rank is None:
            continue  # a helper process (a data worker, a tool the script ran)
        pid_rank[pid] = rank
        by_rank[rank].extend(rows)
    for rank in by_rank:
        by_rank[rank].sort(key=lambda row: row["t"])
    seen_mappings: set[str] = set()
    for rank, rows in sorted(by_rank.items()):
        summary = {"pid": sorted(p for p, r in pid_rank.items() if r == rank), "logged": defaultdict(list),
                   "collectives": [], "waiting": None, "exceptions": [], "batches": defaultdict(int),
                   "splits": [], "monitors": [], "exited": False, "loaders": [], "state": [], "draws": []}
        open_collectives: list[dict] = []
        for row in rows:
            kind = row["event"]
            if kind in ("trainer", "fabric"):
                report.trainers += rank == 0
                for text in row.get("mapped", []):
                    line = f"{_site_text(row.get('site'))}: {'Trainer' if kind == 'trainer' else 'Fabric'}: {text}"
                    if line not in seen_mappings:
                        seen_mappings.add(line)
                        report.mappings.append(line)
            elif kind == "mapped":
                line = f"{_site_text(row.get('site'))}: {row['what']}"
                if line not in seen_mappings:
                    seen_mappings.add(line)
                    report.mappings.append(line)
            elif kind == "log":
                summary["logged"][row["key"]].append(row)
            elif kind == "enter":
                open_collectives.append(row)
                summary["collectives"].append(row)
            elif kind == "leave":
                for i in range(len(open_collectives) - 1, -1, -1):
                    if open_collectives[i]["op"] == row["op"]:
                        del open_collectives[i]
                        break
            elif kind == "exception":
                summary["exceptions"].append(row)
            elif kind == "batch":
                summary["batches"][_site_text(row.get("site")) if row.get("site") else row["loader"]] += 1
            elif kind == "loader":
                summary["loaders"].append(row)
            elif kind == "state":
                summary["state"].append(row)
            elif kind == "draw":
                summary["draws"].append(row)
            elif kind == "split":
                summary["splits"].append(row)
            elif kind == "run":
                summary["monitors"] = row.get("monitors", [])
            elif kind == "exit":
                summary["exited"] = True
            elif kind == "exit_status":
                summary["exit_status"] = row
            elif kind == "emulated":
                report.problems.append(Problem("emulated", f"{row['what']}: on GPUs this raises \"{row['message']}\"",
                                               row.get("site"), [rank], [row.get("rule", "DDP002")]))
        summary["waiting"] = open_collectives[-1] if open_collectives else None
        report.ranks[rank] = summary
    _hang(report, outcome)
    _ended_itself(report, outcome)
    _prepare_data_state(report, sorted(report.ranks))  # also where a rank died of it before training
    _exceptions(report)
    _divergences(report)
    _dedupe(report)
    return report


_FRAME = re.compile(r'File "([^"]+)", line (\d+) in (\S+)')
_LIBRARY = re.compile(r"[/\\](site-packages|dist-packages|lib[/\\]python\d[\d.]*)[/\\]")


def _where_in_stack(dump: str) -> str | None:
    """The innermost frame of the user's code in a rank's faulthandler dump (the watchdog's, taken
    at the hang): its current thread, innermost first as faulthandler writes it."""
    current = next((block for block in dump.split("\n\n") if "Current thread" in block), dump)
    for path, line, function in _FRAME.findall(current):
        if not _LIBRARY.search(path) and "rehearse/inject" not in path.replace("\\", "/"):
            try:
                shown = os.path.relpath(path)
            except ValueError:
                shown = path
            return f"{shown}:{line} in {function}"
    return None


def _hang(report: Report, outcome) -> None:
    if not outcome.stopped:
        return
    parts = []
    site = None
    waiting_ranks = []
    for rank, summary in sorted(report.ranks.items()):
        waiting = summary["waiting"]
        if waiting:
            waiting_ranks.append(rank)
            key = waiting.get("key")
            logged = summary["logged"].get(key) if key else None
            if logged:  # Lightning syncing a value self.log handed it: the log call is the line
                log_site = logged[0].get("site")
                parts.append(f"rank {rank} waits in {waiting['op']}, syncing self.log('{key}') of {_site_text(log_site)}")
                site = site or log_site
                continue
            where = waiting.get("stack") or [waiting.get("site")]
            place = " <- ".join(_site_text(s) for s in reversed([s for s in where if s]))
            via = waiting.get("via", "")
            via = f" (in {via.split(':')[-1]})" if via and not via.startswith(tuple(w[0] for w in where if w)) else ""
            parts.append(f"rank {rank} waits in {waiting['op']}{via}, entered from {place}")
            site = site or (where[-1] if where and where[-1] else waiting.get("site"))
        elif summary["exceptions"]:
            parts.append(f"rank {rank} raised {summary['exceptions'][0]['type']} (below)")
        elif summary["exited"]:
            parts.append(f"rank {rank} had finished")
        else:
            # No collective open: where its stack (dumped by the watchdog) stands in the user's code.
            where = next((_where_in_stack(outcome.stacks[pid]) for pid in summary["pid"] if pid in outcome.stacks), None)
            parts.append(f"rank {rank} is at {where} (no collective open)" if where
                         else f"rank {rank} is elsewhere (no collective open)")
    for rank in range(report.devices):
        if rank not in report.ranks:
            parts.append(f"rank {rank} never started its rehearsal code")
    what = ("no rank made progress, so the run was stopped" if outcome.stopped == "stall"
            else "the run was still going at --timeout and was stopped")
    report.problems.insert(0, Problem("hang", f"hang: {what}", site, waiting_ranks, details=parts))


def _ended_itself(report: Report, outcome) -> None:
    """A rank that ended itself with a failure status and no uncaught exception (a script that
    catches an error and calls sys.exit(1)), and a script that exited with a failure status the
    start-up code saw nothing of."""
    said = False
    for rank, summary in sorted(report.ranks.items()):
        row = summary.get("exit_status")
        if row is not None and not summary["exceptions"]:
            text = f"rank {rank} ended itself with sys.exit({row['message']!r})" if row.get("message") else \
                f"rank {rank} ended itself with exit status {row['status']}"
            report.problems.append(Problem("exception", text, row.get("site"), [rank]))
            said = True
    quiet = not any(s["exceptions"] for s in report.ranks.values())
    if said or not quiet or outcome.stopped or outcome.returncode in (0, None):
        return
    if outcome.returncode < 0 and all(report.ranks.get(rank, {}).get("exited") for rank in range(report.devices)):
        # Killed by a signal past the script: every rank ran its whole program and its atexit
        # functions (the exit event is the last of them), with no exception or failure status
        # (``quiet``, not ``said``). What kills a process then is the interpreter's teardown, as
        # gloo's, whose threads abort when a peer that finished first has closed its connection:
        # the CPU stand-in for NCCL, not what the script does. Said, but no failure.
        name = _signal_name(-outcome.returncode)
        report.problems.append(Problem("teardown", f"the script's process ended by {name} after every rank had ended "
                                       "its script, in the interpreter's teardown (gloo's, when a peer has already "
                                       "gone): not the script's doing", None, [0], note=True))
        return
    report.problems.append(Problem("exception", f"the script exited with status {outcome.returncode} (no uncaught "
                                   "exception: see its last output)", None, [0]))


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _exceptions(report: Report) -> None:
    """Each rank's first exception, the root ones first: one that only follows another rank's
    failure (gloo's "Connection closed by peer") comes last, marked."""
    first = None
    for rank, summary in sorted(report.ranks.items()):
        for row in summary["exceptions"][:1]:
            if first is None or row["t"] < first[1]["t"]:
                first = (rank, row)
    roots, follow_ons = [], []
    for rank, summary in sorted(report.ranks.items()):
        for row in summary["exceptions"][:1]:
            follow_on = first is not None and (rank, row) != first and "Connection" in row["message"]
            text = f"rank {rank} raised {row['type']}: {row['message'].splitlines()[0] if row['message'] else ''}"
            if follow_on:
                text += " (after another rank's failure)"
            elif any(p.kind == "emulated" and rank in p.ranks for p in report.problems):
                text += " (which follows from the failure above)"
            (follow_ons if follow_on else roots).append(Problem("exception", text, row.get("site"), [rank]))
    report.problems.extend(roots + follow_ons)


def _divergences(report: Report) -> None:
    ranks = sorted(report.ranks)
    trained = [r for r in ranks if report.ranks[r]["logged"] or report.ranks[r]["batches"]]
    if len(trained) < 2:
        return
    # Keys logged by some ranks only: their collectives (sync_dist) fall out of step, and a monitor
    # reading them fails on the others.
    keys = sorted({k for r in trained for k in report.logged(r)})
    monitored = {monitor for r in trained for _, monitor in report.ranks[r]["monitors"]}
    for key in keys:
        have = [r for r in trained if key in report.logged(r)]
        row = report.logged(have[0])[key][0]
        # A key some ranks log is a problem where its sync is a collective (sync_dist without
        # rank_zero_only) or where a callback monitors it; logging on rank 0 alone is fine otherwise.
        synced = row["sync_dist"] and not row["rank_zero_only"]
        if len(have) != len(trained):
            if not synced:
                continue  # a monitored key missing on a rank is said below
            missing = [r for r in trained if r not in have]
            report.problems.append(Problem(
                "logged-keys", f"'{key}' is logged with sync_dist=True by rank {', '.join(map(str, have))} only, not by rank "
                f"{', '.join(map(str, missing))}: its all-reduce waits for ranks that never enter it", row.get("site"),
                missing, ["DDP003"]))
        elif synced and _on_step(row) and any(len(report.logged(r)[key]) != len(report.logged(trained[0])[key]) for r in trained):
            # A step-level synced value is all-reduced at each call: the calls must pair up.
            counts = ", ".join(f"rank {r}: {len(report.logged(r)[key])}" for r in trained)
            report.problems.append(Problem("logged-keys", f"'{key}' is logged with sync_dist=True at every step a different "
                                           f"number of times ({counts}): the ranks' all-reduces fall out of step",
                                           row.get("site"), trained, ["DDP003"]))
        elif synced and not _on_step(row) and len({frozenset(r_["epoch"] for r_ in report.logged(r)[key]) for r in trained}) > 1:
            # An epoch-level one is synced once an epoch, by the ranks that logged it in that epoch.
            epochs = "; ".join(f"rank {r}: epochs {sorted({r_['epoch'] for r_ in report.logged(r)[key]})}" for r in trained)
            report.problems.append(Problem("logged-keys", f"'{key}' is logged with sync_dist=True in some epochs on some "
                                           f"ranks only ({epochs}): its epoch-end all-reduce waits for the others",
                                           row.get("site"), trained, ["DDP003"]))
        else:
            _unsynced(report, key, [r for r in trained if key in report.logged(r)])
    for rank in trained:
        for callback, monitor in report.ranks[rank]["monitors"]:
            others = [r for r in trained if monitor in report.logged(r)]
            if monitor not in report.logged(rank) and others:
                site = report.logged(others[0])[monitor][0].get("site")
                report.problems.append(Problem(
                    "monitor-missing", f"{callback} monitors '{monitor}', which rank {rank} never logs (rank "
                    f"{', '.join(map(str, others))} does): its check fails or waits on rank {rank}", site, [rank], ["DDP003"]))
    _collective_order(report, trained)
    _splits(report, trained)
    _batches(report, trained)


def _describe_collective(row: dict, summary: dict) -> tuple[str, list | None]:
    """``barrier at train.py:36`` (and its site), or the log whose sync it is."""
    key = row.get("key")
    logged = summary["logged"].get(key) if key else None
    if logged:
        site = logged[0].get("site")
        return f"{row['op']} syncing self.log('{key}') of {_site_text(site)}", site
    stack = [s for s in (row.get("stack") or [row.get("site")]) if s]
    site = stack[-1] if stack else None
    via = (row.get("via") or "").split(":")[-1]
    inside = f" (in Lightning's {via})" if via and "lightning" in (row.get("via") or "") else ""
    return f"{row['op']}{inside} at {_site_text(site)}", site


def _collective_order(report: Report, trained: list[int]) -> None:
    """The first collective the ranks do not enter together: collectives pair up by their order on
    each rank, so from there on every rank waits in, or feeds, another one (a hang, or values
    reduced with the wrong partner)."""
    sequences = {r: report.ranks[r]["collectives"] for r in trained}
    for index in range(min(len(seq) for seq in sequences.values())):
        rows = {r: sequences[r][index] for r in trained}
        # What pairs collectives is their order; what tells one from another is the operation and
        # what Lightning was doing (the key it syncs, else the function that called it). Not the
        # user's frames: rank 0 may trigger a sync early (reading callback_metrics under a guard)
        # that the other ranks enter from Lightning's own epoch end: the same collective.
        signatures = {r: (row["op"], row.get("key") or row.get("via")) for r, row in rows.items()}
        if len(set(signatures.values())) == 1:
            continue
        described = {r: _describe_collective(rows[r], report.ranks[r]) for r in trained}
        # The line to name: the one only some ranks reach (deepest in the user's code, or a log's).
        site_rank = max(trained, key=lambda r: (bool(rows[r].get("key") and described[r][1]), len(rows[r].get("stack") or []), -r))
        report.problems.append(Problem(
            "collective-order", f"the ranks' collectives fall out of step at the {_ordinal(index + 1)} one (collectives "
            "pair up by their order: from here every rank waits in, or feeds, another)", described[site_rank][1], trained,
            ["DDP005", "DDP003"], details=[f"rank {r} enters {described[r][0]}" for r in trained]))
        return


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


EVALUATION_HOOKS = re.compile(r"^(validation_step|test_step|on_(validation|test)_epoch_end|on_(validation|test)_batch_end)$")
STEP_HOOKS = re.compile(r"^(training_step|on_train_batch_(start|end)|on_before_backward|on_after_backward|"
                        r"on_before_optimizer_step|on_before_zero_grad)$")


def _on_step(row: dict) -> bool:
    """Whether a logged value is synced at its call (step level): ``on_step``, else the hook's
    default (lightning-notes: training-step hooks log per step, the others per epoch)."""
    if row.get("on_step") is not None:
        return bool(row["on_step"])
    return bool(STEP_HOOKS.match(row.get("hook") or ""))


def _unsynced(report: Report, key: str, trained: list[int]) -> None:
    """An epoch-level value logged without sync_dist that differs between ranks: what rank 0's
    logger, checkpoint and early stopping see is its own shard's."""
    if len(trained) < 2:
        return
    rows = {r: report.logged(r)[key] for r in trained}
    first = rows[trained[0]][-1]
    if first["sync_dist"] or first["rank_zero_only"] or first["value"] is None or first["metric"] not in ("Tensor", "float", "int"):
        return
    epoch_level = first["on_epoch"] is True or (first["on_epoch"] is None and EPOCH_HOOKS.match(first.get("hook") or ""))
    if not epoch_level:
        return
    values = {r: [row["value"] for row in rows[r]] for r in trained}
    if all(v == values[trained[0]] for v in values.values()):
        return
    last = ", ".join(f"rank {r}: {values[r][-1]:.6g}" for r in trained)
    monitored = any(monitor == key for r in trained for _, monitor in report.ranks[r]["monitors"])
    evaluated = bool(EVALUATION_HOOKS.match(first.get("hook") or ""))
    # A failure where a callback decides on it (each rank's checkpoint or early stop decides on its
    # own shard) or where it is an evaluation metric (the validation or test score logged is rank
    # 0's shard's); a value of the training epoch's own (a timing, a rate) is said, as a note.
    report.problems.append(Problem(
        "unsynced-value", f"'{key}' is an epoch-level value logged without sync_dist, and the ranks disagree ({last}): "
        + ("the callbacks that monitor it decide on each rank's own shard" if monitored
           else "the logger records rank 0's shard only"), first.get("site"), trained, ["DDP004"],
        note=not (monitored or evaluated)))


def _prepare_data_state(report: Report, trained: list[int]) -> None:
    """Attributes ``prepare_data`` sets, which Lightning runs on local rank 0 only: a rank that never
    sets them (nor in ``setup``) lacks them (an AttributeError, or other data)."""
    for rank in trained:
        for row in report.ranks[rank]["state"]:
            if row["hook"] != "prepare_data" or not row["names"]:
                continue
            missing = {}
            for other in trained:
                have = {n for r in report.ranks[other]["state"] if r["owner"] == row["owner"] for n in r["names"]}
                lacking = [n for n in row["names"] if n not in have]
                if lacking:
                    missing[other] = lacking
            if missing:
                names = sorted({n for lacking in missing.values() for n in lacking})
                report.problems.append(Problem(
                    "prepare-data-state", f"{row['owner']}.prepare_data sets {', '.join('self.' + n for n in names)}, but "
                    f"Lightning runs prepare_data on local rank 0 only: rank {', '.join(map(str, missing))} never has "
                    f"{'it' if len(names) == 1 else 'them'} (set state in setup, which runs on every rank)",
                    row.get("site"), sorted(missing)))
        return


def _splits(report: Report, trained: list[int]) -> None:
    _subsets(report, trained)
    splits = {r: report.ranks[r]["splits"] for r in trained}
    for index, row in enumerate(splits[trained[0]]):
        others = [splits[r][index] for r in trained[1:] if index < len(splits[r])]
        if any(other["digests"] != row["digests"] for other in others):
            report.problems.append(Problem(
                "split", f"random_split gives the ranks different subsets (sizes {row['sizes']}): each rank trains and "
                "validates on another split, and samples leak between them", row.get("site"), trained, ["DDP012"]))


def _subsets(report: Report, trained: list[int]) -> None:
    """A loader under Lightning's DistributedSampler whose Subset differs between ranks: each rank
    drew its own split (an unseeded randperm, numpy or sklearn split), or split by rank on top of
    the sampler's own split. A rank-dependent subset with the sampler off is sharding by hand."""
    loaders = {r: [row for row in report.ranks[r]["loaders"] if row.get("subset")] for r in trained}
    for index in range(min(len(v) for v in loaders.values())):
        rows = {r: loaders[r][index] for r in trained}
        if not all(str(row.get("sampler", "")).startswith("Distributed") for row in rows.values()):
            continue
        if len({row["subset"] for row in rows.values()}) > 1:
            first = rows[trained[0]]
            draw = _unseeded_draw(report, trained)
            where = f" (the loader at {_site_text(first.get('site'))})" if draw else ""
            report.problems.append(Problem(
                "split", "this DataLoader's Subset holds other indices on each rank while Lightning's DistributedSampler "
                "splits it again: a split each rank draws on its own (unseeded), or one by rank on top of the sampler's"
                + (f"; {draw['what']} here draws a different permutation on each rank{where}" if draw else ""),
                (draw or first).get("site"), trained, ["DDP012", "DDP013"]))
            return


def _unseeded_draw(report: Report, trained: list[int]) -> dict | None:
    """The first permutation of the user's own (torch.randperm without a generator) that came out
    different on the ranks: where a split by hand went wrong."""
    draws = {r: report.ranks[r]["draws"] for r in trained}
    for index in range(min(len(v) for v in draws.values())):
        rows = [draws[r][index] for r in trained]
        if len({row["digest"] for row in rows}) > 1:
            return rows[0]
    return None


def _batches(report: Report, trained: list[int]) -> None:
    """Loaders whose epochs have a different number of batches on different ranks: under DDP the
    rank with more batches waits in its gradient all-reduce for one whose epoch is over (a hang at
    the end of the epoch, which the rehearsal's few batches would hide: so their lengths count)."""
    # Training loaders only: evaluation has no per-step collective, so ranks may take uneven
    # shares there (exact metrics), and a loop outside a Trainer is the script's own.
    loaders = {r: [row for row in report.ranks[r]["loaders"] if row.get("stage") == "train"] for r in trained}
    for index in range(min(len(v) for v in loaders.values())):
        rows = {r: loaders[r][index] for r in trained}
        lengths = {r: row.get("batches") for r, row in rows.items()}
        if None in lengths.values() or len(set(lengths.values())) == 1:
            continue
        text = ", ".join(f"rank {r}: {n}" for r, n in lengths.items())
        first = rows[trained[0]]
        report.problems.append(Problem(
            "batches", f"this training DataLoader's epoch has a different number of batches on each rank ({text}, sampler "
            f"{first.get('sampler')}): under DDP a rank that has more waits in its gradient all-reduce for one whose "
            "epoch is over (a hang at the end of an epoch, which the rehearsal's few batches do not reach)",
            first.get("site"), trained, ["DDP013"]))
        return
    if any(p.kind in ("hang", "exception", "batches") for p in report.problems):
        return
    training = {_site_text(row.get("site")) for r in trained for row in report.ranks[r]["loaders"] if row.get("stage") == "train"}
    names = sorted({name for r in trained for name in report.ranks[r]["batches"]} & training)
    for name in names:
        counts = {r: report.ranks[r]["batches"].get(name, 0) for r in trained}
        if len(set(counts.values())) > 1:
            text = ", ".join(f"rank {r}: {n}" for r, n in counts.items())
            report.problems.append(Problem("batches", f"the ranks draw a different number of batches from the DataLoader "
                                           f"of {name} ({text})", None, trained))


def _dedupe(report: Report) -> None:
    seen, kept = set(), []
    for problem in report.problems:
        key = (problem.kind, problem.message, tuple(problem.site or ()))
        if key not in seen:
            seen.add(key)
            kept.append(problem)
    report.problems = kept


# --- output --------------------------------------------------------------------------------------


def text(report: Report) -> str:
    lines = [f"ddpfix rehearse: {report.script} on {report.devices} CPU ranks (gloo), "
             f"{report.seconds:.1f} s"]
    if report.why_not:
        lines.append(f"could not rehearse: {report.why_not}")
        if report.output_tail:
            lines += ["", "the script's last output:", *("  " + line for line in report.output_tail.splitlines())]
        return "\n".join(lines) + "\n"
    if report.failed:
        lines.append("")
        for problem in sorted(report.problems, key=lambda p: p.note):
            place = problem.place()
            lines.append(f"{place + ': ' if place else ''}{'note: ' if problem.note else ''}{problem.message}")
            lines += [f"    {detail}" for detail in problem.details]
        findings = list(dict.fromkeys(f for problem in report.problems for f in problem.findings))
        if findings:
            lines += ["", "ddpfix's rules that know this shape:", *(f"  {finding}" for finding in findings)]
    else:
        lines.append("")
        collectives = max((len(s["collectives"]) for s in report.ranks.values()), default=0)
        lines.append(f"clean: no hang, no crash, no divergence between the {len(report.ranks)} ranks "
                     f"({_key_count(report)} keys logged, {collectives} collectives entered per rank)")
        for problem in report.problems:  # notes only
            place = problem.place()
            lines.append(f"{place + ': ' if place else ''}note: {problem.message}")
    if report.gpu_only:
        lines += ["", "what only GPUs show, which a CPU rehearsal cannot (ddpfix's static rules find it):",
                  *(f"  {finding}" for finding in report.gpu_only)]
    if report.mappings:
        lines += ["", "mapped to run on CPU:", *("  " + line for line in report.mappings)]
    unexplained = [p for p in report.problems if p.kind == "exception" and "follows from" not in p.message]
    if report.output_tail and unexplained:
        lines += ["", "the script's last output:", *("  " + line for line in report.output_tail.splitlines())]
    return "\n".join(lines) + "\n"


def _key_count(report: Report) -> int:
    return len({k for r in report.ranks for k in report.logged(r)})


def as_json(report: Report) -> dict:
    return {
        "script": report.script, "devices": report.devices, "seconds": round(report.seconds, 2),
        "result": "could-not-rehearse" if report.why_not else ("failed" if report.failed else "clean"),
        "why_not": report.why_not or None, "stopped": report.stopped or None,
        "problems": [{"kind": p.kind, "note": p.note, "message": p.message, "details": p.details, "path": p.site[0] if p.site else None,
                      "line": p.site[1] if p.site else None, "ranks": p.ranks, "rules": p.rules,
                      "findings": p.findings} for p in report.problems],
        "mappings": report.mappings, "gpu_only": report.gpu_only,
        "ranks": {str(r): {"logged": sorted(s["logged"]), "collectives": len(s["collectives"]),
                           "batches": dict(s["batches"]), "exited": s["exited"]} for r, s in sorted(report.ranks.items())},
    }
