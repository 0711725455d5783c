"""Fuzz ``sources.fix_source`` with every rule over generated and mutated programs.

    python bench/fuzz.py --programs 100000 --seed 0 --jobs 2

Five properties, per program (docs/reliability.md):

1. ``fix_source`` never lets an exception escape (and never takes longer than ``--timeout`` seconds);
2. when the input compiles, the output compiles;
3. idempotency: ``fix(fix(x)) == fix(x)`` (the second run changes nothing and reports no problem);
4. a program in which no rule's trigger words occur comes out unchanged, with no findings;
5. the prefilters hide nothing and the tree checks see what ``apply`` sees: report-only, every rule
   gives the same findings as shipped and with its trigger words, text prefilter, ``module_only``
   and ``may_apply`` switched off and, where a fixable rule reports from CPython's tree, with that
   ``check`` switched off too; on every program, those without a trigger word included
   (``--no-prefilter-check`` skips this, which costs a second report-only run of every rule on
   every program).

The programs come from three generators, all seeded (``--seed`` and the program's number decide
everything, so a run is reproducible and a failure can be replayed):

* ``lightning``: a random Lightning program built from pitfall pieces (rank guards around
  ``self.log``, ``torch.Generator(device="cuda")`` in DataLoaders, ``with trainer.init_module():``
  blocks, ``.cuda()`` calls, collectives, step outputs, spawn calls...) nested in random blocks, with
  random import spellings and aliases;
* ``hypothesmith``: programs from ``hypothesmith.from_grammar()`` (drawn by running a seeded
  hypothesis ``@given`` function in each worker), each spliced with pitfall pieces at random
  statement boundaries, or wrapped into a LightningModule method;
* ``fixture``: the fixture inputs, mutated by line edits (insert a piece or a generated program,
  delete, duplicate, indent) at random places.

A failing input is saved to ``--failures`` (``<kind>-<n>.py`` plus a ``.txt`` that says why) and
the summary prints counts and throughput. Exit status 1 when any property failed.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import time
import traceback
import warnings
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import libcst as cst  # noqa: E402

from ddpfix.engine import set_up_for_trees  # noqa: E402
from ddpfix.sources import fix_source  # noqa: E402
from ddpfix.rules import all_rules  # noqa: E402
from ddpfix.findings import NOTE  # noqa: E402

RULES = all_rules()
FIXTURE_INPUTS = sorted(
    p for p in (ROOT / "fixtures").rglob("*.py") if not p.name.endswith((".expected.py", ".unsafe.py"))
)

# --- pieces of Lightning code with DDP pitfalls (and their correct spellings) --------------------

IMPORTS = [
    "import lightning as L",
    "import lightning.pytorch as pl",
    "import pytorch_lightning as pl",
    "from lightning.pytorch import LightningModule, Trainer",
    "from pytorch_lightning import LightningModule, Trainer, LightningDataModule",
    "from lightning import LightningModule as LM, Trainer as T",
    "import torch",
    "import torch as th",
    "from torch import Generator, nn",
    "import torch.distributed as dist",
    "import torch.multiprocessing as mp",
    "from torch.utils.data import DataLoader, Dataset, random_split, DistributedSampler",
    "from torch.utils.data import DataLoader as DL",
    "from lightning.pytorch.utilities import rank_zero_only",
    "from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint",
    "from lightning.pytorch.tuner import Tuner",
    "from transformers import AutoModel",
    "import os",
    "import random",
]

COMMON_HEADER = """import os
import torch
import torch.distributed as dist
from torch import nn
import lightning as L
import lightning.pytorch as pl
from lightning.pytorch import LightningModule, Trainer
from lightning.pytorch.utilities import rank_zero_only
from torch.utils.data import DataLoader, random_split"""

BASES = ["L.LightningModule", "pl.LightningModule", "LightningModule", "L.LightningModule", "pl.LightningModule", "LightningModule", "LM", "nn.Module", "object", "Base"]

GUARDS = [
    "if self.global_rank == 0:",
    "if self.trainer.is_global_zero:",
    "if self.local_rank == 0:",
    "if trainer.global_rank == 0:",
    "if not self.trainer.is_global_zero:",
    "if rank == 0:",
    "if int(os.environ['RANK']) == 0:",
    "if dist.get_rank() == 0:",
    "if self.global_rank != 0:",
    "if self.trainer.global_rank == 0 and batch_idx % 10 == 0:",
    "if x:",
]

NAMES = ["loss", "acc", "val_loss", "train_loss", "x", "batch", "self.metric", "out[0]", "torch.tensor(1.0)"]

METHOD_STATEMENTS = [
    'self.log("{m}", {v})',
    'self.log("{m}", {v}, prog_bar=True)',
    'self.log("{m}", {v}, on_epoch=True)',
    'self.log("{m}", {v}, sync_dist=True)',
    'self.log("{m}", {v}, rank_zero_only=True)',
    'self.log("{m}", {v}, on_step=False, on_epoch=True, batch_size=len(batch))',
    'self.log_dict({{"{m}": {v}, "b": 1}})',
    'self.log_dict({{"{m}": {v}}}, on_epoch=True)',
    "self.log(name, {v})",
    "{v2} = {v2}.cuda()",
    "{v2} = torch.zeros(3, device='cuda')",
    "{v2} = torch.ones(2).to('cuda:0')",
    "{v2} = {v2}.to(torch.device('cuda'))",
    "self.outputs.append({v})",
    "self.validation_step_outputs.append({v})",
    "self.outputs.clear()",
    "torch.distributed.barrier()",
    "dist.all_reduce({v2})",
    "{v2} = self.all_gather({v2})",
    "self.trainer.strategy.barrier()",
    "return {v}",
    "return",
    "pass",
    "print({v})",
    "{v2} = batch['x']",
    "{v2} = batch[0]",
    "self.buf = torch.zeros(3)",
    "self.weights = torch.tensor([1.0, 2.0])",
    "self.layer = nn.Linear(3, 3)",
    "g = torch.Generator(device='cuda')",
    "loader = DataLoader(ds, generator=torch.Generator(device='cuda'))",
    "train, val = random_split(ds, [0.8, 0.2])",
    "# a comment",
    'self.log("{m}", {v})  # noqa: DDP003',
    'self.log("{m}", {v})  # ddpfix: ignore',
    "torch.cuda.set_device(self.local_rank)",
    "{v2} = {v2}[self.global_rank::self.trainer.world_size]",
]

METHOD_NAMES = [
    "training_step", "validation_step", "test_step", "on_train_epoch_end", "on_validation_epoch_end",
    "on_train_batch_end", "on_train_start", "__init__", "setup", "forward", "configure_optimizers",
    "training_epoch_end", "validation_epoch_end", "train_dataloader", "_report", "helper",
]

MODULE_STATEMENTS = [
    "trainer = L.Trainer(devices=2, strategy='ddp')",
    "trainer = pl.Trainer(accelerator='gpu', devices=4)",
    "trainer = Trainer(devices=2)",
    "trainer.fit(model)",
    "trainer.fit(model, datamodule=dm)",
    "with trainer.init_module():\n    model = Model()",
    "with trainer.init_module(empty_init=True):\n    model = Model()\n    model.layer = nn.Linear(3, 3)",
    "with torch.device('cuda'):\n    model = Model()",
    "with fabric.init_module():\n    model = Model()",
    "model = Model()",
    "g = torch.Generator(device='cuda')",
    "g = Generator('cuda')",
    "g.manual_seed(0)",
    "loader = DataLoader(ds, batch_size=4, shuffle=True, generator=g)",
    "loader = DL(ds, generator=torch.Generator(device='cuda').manual_seed(3))",
    "loader = DataLoader(ds, sampler=DistributedSampler(ds), generator=torch.Generator('cuda'))",
    "train, val = random_split(ds, [0.9, 0.1])",
    "train, val = random_split(ds, [90, 10], generator=torch.Generator().manual_seed(42))",
    "mp.spawn(main, nprocs=2)",
    "torch.multiprocessing.spawn(main, args=(2,), nprocs=2)",
    "L.seed_everything(42)",
    "tuner = Tuner(trainer)\ntuner.lr_find(model)",
    "lr_finder = trainer.tuner.lr_find(model)",
    "trainer = pl.Trainer(auto_lr_find=True, devices=2)",
    "model = AutoModel.from_pretrained('bert-base-uncased', device_map='auto')",
    "model = AutoModel.from_pretrained(name, device_map=None)",
    "early = EarlyStopping(monitor='val_loss')",
    "ckpt = ModelCheckpoint(monitor='train_loss')",
    "x = torch.zeros(3).cuda()",
    "shard = files[int(os.environ['RANK'])::int(os.environ['WORLD_SIZE'])]",
    "rank = int(os.environ.get('LOCAL_RANK', 0))",
    "if trainer.is_global_zero:\n    torch.distributed.barrier()",
    "if rank == 0:\n    dist.all_reduce(x)",
    "print('hello')",
    "# comment",
    "",
]

BLOCK_OPENERS = [
    "for i in range(3):", "while x:", "with ctx:", "try:", "if batch_idx % 2:", "if x:\n{ind}    pass\n{ind}else:",
    "async def inner():", "def inner():", "with torch.no_grad():",
]


class Gen:
    """A random Lightning program (one ``random.Random`` decides everything)."""

    def __init__(self, rng: random.Random):
        self.r = rng

    def metric(self) -> str:
        return self.r.choice(["train_loss", "val_loss", "acc", "loss", "val_acc", "lr"])

    def stmt(self, ind: str) -> str:
        text = self.r.choice(METHOD_STATEMENTS).format(
            m=self.metric(), v=self.r.choice(NAMES), v2=self.r.choice(["x", "y", "loss", "self.t"])
        )
        return ind + text

    def body(self, ind: str, depth: int) -> list[str]:
        lines: list[str] = []
        for _ in range(self.r.randint(1, 5)):
            roll = self.r.random()
            if depth < 3 and roll < 0.25:
                lines.append(ind + self.r.choice(GUARDS))
                lines += self.body(ind + "    ", depth + 1)
                if self.r.random() < 0.2:
                    lines.append(ind + "else:")
                    lines += self.body(ind + "    ", depth + 1)
            elif depth < 3 and roll < 0.35:
                opener = self.r.choice(BLOCK_OPENERS).replace("{ind}", ind)
                lines.append(ind + opener)
                lines += self.body(ind + "    ", depth + 1)
                if opener == "try:":
                    lines.append(ind + "finally:")
                    lines.append(ind + "    pass")
            else:
                lines.append(self.stmt(ind))
        return lines

    def method(self, ind: str) -> list[str]:
        name = self.r.choice(METHOD_NAMES)
        params = {"training_step": "self, batch, batch_idx", "validation_step": "self, batch, batch_idx"}.get(
            name, self.r.choice(["self", "self, batch, batch_idx", "self, *args, **kwargs", "self, outputs"])
        )
        lines = []
        if self.r.random() < 0.15:
            lines.append(ind + self.r.choice(["@rank_zero_only", "@staticmethod", "@torch.no_grad()", "@property"]))
        lines.append(f"{ind}def {name}({params}):")
        if name == "__init__" and self.r.random() < 0.6:
            lines.append(ind + "    super().__init__()")
        return lines + self.body(ind + "    ", 0)

    def module_class(self, ind: str = "") -> list[str]:
        lines = [f"{ind}class {self.r.choice(['Model', 'Net', 'Lit', 'Child'])}({self.r.choice(BASES)}):"]
        if self.r.random() < 0.2:
            lines.append(ind + '    """Docstring."""')
        for _ in range(self.r.randint(1, 4)):
            lines += self.method(ind + "    ")
            lines.append("")
        return lines

    def program(self) -> str:
        lines = self.r.sample(IMPORTS, self.r.randint(0, 6))
        if self.r.random() < 0.8:  # mostly coherent: the names used below are imported
            lines = COMMON_HEADER.split("\n") + lines
        for _ in range(self.r.randint(1, 6)):
            roll = self.r.random()
            if roll < 0.45:
                lines += self.module_class()
            elif roll < 0.85:
                lines += self.r.choice(MODULE_STATEMENTS).split("\n")
            elif roll < 0.93:
                lines.append("if __name__ == '__main__':")
                for piece in self.r.sample(MODULE_STATEMENTS, 2):
                    lines += ["    " + ln for ln in piece.split("\n")]
            else:
                lines.append(f"def {self.r.choice(['main', 'run', 'make_loader'])}(rank, world_size):")
                for piece in self.r.sample(MODULE_STATEMENTS, 2):
                    lines += ["    " + ln for ln in piece.split("\n")]
        newline = self.r.choice(["\n"] * 8 + ["\r\n"])
        return newline.join(lines) + (newline if self.r.random() < 0.95 else "")

    def piece(self) -> str:
        """One pitfall piece for splicing: a statement, a guard with a log, or a whole class."""
        roll = self.r.random()
        if roll < 0.3:
            return "\n".join(self.module_class()) + "\n"
        if roll < 0.5:
            return self.r.choice(IMPORTS) + "\n"
        return self.r.choice(MODULE_STATEMENTS) + "\n"


# --- splicing ----------------------------------------------------------------------------------


def compiles(data: bytes) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(data, "<fuzz>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def splice(rng: random.Random, host: str, piece: str) -> str:
    """Insert ``piece`` before a random line of ``host``, indented like that line; fall back to appending
    when that does not compile (a line inside a string or a bracket)."""
    lines = host.splitlines(keepends=True)
    for _ in range(3):
        where = rng.randint(0, len(lines))
        ind = indent_of(lines[where]) if where < len(lines) and lines[where].strip() else ""
        block = "".join(ind + ln if ln.strip() else ln for ln in piece.splitlines(keepends=True))
        if not block.endswith("\n"):
            block += "\n"
        candidate = "".join(lines[:where]) + block + "".join(lines[where:])
        if where and not lines[where - 1].endswith(("\n", "\r")):
            continue
        if compiles(candidate.encode("utf-8", "surrogatepass")):
            return candidate
    return host + ("" if host.endswith("\n") or not host else "\n") + piece


def wrap_in_module(program: str, header: str) -> str:
    """``program`` as the body of a LightningModule's training_step (if it stays valid code)."""
    body = "".join("        " + ln if ln.strip() else ln for ln in program.splitlines(keepends=True)) or "        pass\n"
    if not body.endswith("\n"):
        body += "\n"
    return (
        f"{header}\nclass Model(L.LightningModule):\n    def training_step(self, batch, batch_idx):\n{body}"
        "        if self.global_rank == 0:\n            self.log('train_loss', 1.0)\n"
    )


# --- the properties ----------------------------------------------------------------------------


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


PREFILTER_CHECK = True


UNFILTERED = []


def libcst_round_trips(data: bytes) -> bool:
    try:
        return cst.parse_module(data).bytes == data
    except Exception:  # noqa: BLE001 - a file LibCST cannot parse gives nothing to compare
        return False


def libcst_is_no_reference(data: bytes, tree_report, libcst_report) -> bool:
    """Where a report of LibCST's alone cannot judge the tree checks' report of the same file
    (here and in ``tests/test_properties.py``): CPython parses a little that LibCST does not (a line
    continuation at the very end of the file), so the tree checks report where LibCST can only say
    E999; and where LibCST does not give the file back byte for byte (it drops a form feed), its
    positions come from code it generated, so it misplaces findings that CPython's tree does not."""
    if any(p.code == "E999" for p in libcst_report.problems) and not any(p.code == "E999" for p in tree_report.problems):
        return True
    return not libcst_round_trips(data)


def hidden_findings(data: bytes) -> str:
    """What the prefilters hid, report-only: empty when the findings are the same without them."""
    if not UNFILTERED:
        UNFILTERED.extend(rule.without_prefilters() for rule in RULES)
    shipped = fix_source("fuzz.py", data, RULES, fix=False)
    everything = fix_source("fuzz.py", data, UNFILTERED, fix=False)
    # A file that no rule's words concern is not parsed as shipped: its syntax error shows only
    # without the prefilters, which is not a finding hidden. An internal error is compared.
    problems = tuple([(p.code, p.message) for p in r.problems if p.code not in ("E999", "E902")] for r in (shipped, everything))
    if shipped.findings == everything.findings and problems[0] == problems[1]:
        return ""
    if libcst_is_no_reference(data, shipped, everything):
        return ""
    return "\n".join(
        ["as shipped:"] + [f"  {f.line}:{f.column} {f.code} {f.message}" for f in shipped.findings]
        + ["without prefilters and tree checks:"] + [f"  {f.line}:{f.column} {f.code} {f.message}" for f in everything.findings]
        + [f"problems: {problems[0]} / {problems[1]}"]
    )


#: The fix modes the properties must hold in: every fix (``--unsafe-fixes``), then the default run
#: (safe fixes only), asked only of files that every fix changes.
MODES = ({"unsafe_fixes": True}, {"unsafe_fixes": False})


def check(data: bytes, timeout: int) -> tuple[str | None, str]:
    """(failed property or None, detail). The outcome tag in the detail is used for the counts."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        every_fix = _check_mode(data, timeout, MODES[0])
        if every_fix[0] is not None or every_fix[1] != "changed=1":
            return every_fix
        safe_only = _check_mode(data, timeout, MODES[1])
        return safe_only if safe_only[0] is not None else every_fix  # the counts tell what every fix did
    finally:
        signal.alarm(0)


def _check_mode(data: bytes, timeout: int, options: dict) -> tuple[str | None, str]:
    mode = "" if options["unsafe_fixes"] else " (safe fixes only)"
    try:
        result = fix_source("fuzz.py", data, RULES, options=options)
    except Timeout:
        return "timeout", f"fix_source took more than {timeout}s{mode}"
    except BaseException:  # noqa: BLE001 - this is what we look for
        return "exception", traceback.format_exc() + mode
    problems = [p for p in result.problems if p.code not in ("E999", "E902") and p.level != NOTE]
    refused = any(p.level == NOTE for p in result.problems)  # LibCST would not reproduce the file
    triggered = any(rule.has_trigger_words(data) for rule in RULES)
    if not triggered and (result.fixed is not None or result.findings):
        return "untriggered-change", "a file without trigger words was changed or got findings" + mode
    if problems:
        # An internal error is reported and the file is kept, so no property broke, but it is a bug.
        return "internal-error", "\n".join(f"{p.code} {p.message}" for p in problems) + mode
    if PREFILTER_CHECK and options["unsafe_fixes"]:  # files without any trigger word too: a word missing is what it finds
        hidden = hidden_findings(data)
        if hidden:
            return "prefilter-hid-a-finding", hidden
    if result.fixed is None:
        return None, "refused-round-trip" if refused else "changed=0" if triggered else "untriggered"
    if compiles(data) and not compiles(result.fixed):
        return "does-not-compile", result.fixed.decode("utf-8", "replace") + mode
    try:
        again = fix_source("fuzz.py", result.fixed, RULES, options=options)
    except Timeout:
        return "timeout", f"second fix_source took more than {timeout}s{mode}"
    except BaseException:  # noqa: BLE001
        return "exception", traceback.format_exc() + mode
    if again.fixed is not None or again.problems:
        detail = (again.fixed or b"").decode("utf-8", "replace") + "\n".join(p.message for p in again.problems)
        return "not-idempotent", detail + mode
    return None, "changed=1"


# --- generation in the workers -----------------------------------------------------------------


def hypothesmith_programs(count: int, seed_value: int) -> list[str]:
    """``count`` programs from hypothesmith, drawn by running a seeded ``@given`` function."""
    if count <= 0:
        return []
    import hypothesmith
    from hypothesis import HealthCheck, Phase, given, seed, settings
    from hypothesis import strategies as st

    drawn: list[str] = []

    @seed(seed_value)
    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.one_of(hypothesmith.from_grammar(), hypothesmith.from_grammar("eval_input")))
    def draw(program):
        drawn.append(program)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draw()
    return drawn


KINDS = ("lightning", "hypothesmith", "fixture")


def make_program(rng: random.Random, kind: str, pool: list[str], fixtures: list[bytes]) -> bytes:
    gen = Gen(rng)
    if kind == "lightning":
        text = gen.program()
        for _ in range(rng.randint(0, 2)):
            if pool:
                text = splice(rng, text, rng.choice(pool))
        return text.encode("utf-8", "surrogatepass")
    if kind == "hypothesmith":
        text = rng.choice(pool) if pool else ""
        roll = rng.random()
        if roll < 0.15:
            return text.encode("utf-8", "surrogatepass")  # as generated
        if roll < 0.4:
            header = "\n".join(rng.sample(IMPORTS[:6], 1) + ["import torch", "import os"])
            return wrap_in_module(text, header).encode("utf-8", "surrogatepass")
        for _ in range(rng.randint(1, 4)):
            text = splice(rng, text, gen.piece())
        return text.encode("utf-8", "surrogatepass")
    # fixture: line edits on a fixture input
    lines = rng.choice(fixtures).splitlines(keepends=True)
    for _ in range(rng.randint(1, 4)):
        where = rng.randint(0, len(lines))
        action = rng.choice(["piece", "program", "delete", "duplicate", "indent", "dedent"])
        index = min(where, len(lines) - 1)
        if action == "piece" or action == "program":
            source = gen.piece() if action == "piece" or not pool else rng.choice(pool) + "\n"
            text = splice(rng, b"".join(lines).decode("utf-8", "surrogateescape"), source)
            lines = text.encode("utf-8", "surrogateescape").splitlines(keepends=True)
        elif not lines:
            continue
        elif action == "delete":
            del lines[index]
        elif action == "duplicate":
            lines.insert(where, lines[index])
        elif action == "indent":
            lines[index] = b"    " + lines[index]
        elif lines[index].startswith(b"    "):
            lines[index] = lines[index][4:]
    return b"".join(lines)


def run_chunk(args) -> tuple[Counter, list[str], float]:
    global PREFILTER_CHECK
    seed_value, start, count, fresh_ratio, failures, timeout, PREFILTER_CHECK = args
    set_up_for_trees()
    warnings.simplefilter("ignore")
    pool = hypothesmith_programs(max(1, int(count * fresh_ratio)), seed_value * 1_000_003 + start)
    fixtures = [p.read_bytes() for p in FIXTURE_INPUTS]
    counts: Counter = Counter()
    saved: list[str] = []
    began = time.perf_counter()
    for number in range(start, start + count):
        rng = random.Random(f"{seed_value}:{number}")
        kind = rng.choices(KINDS, weights=(5, 3, 2))[0]
        try:
            data = make_program(rng, kind, pool, fixtures)
        except Exception:  # noqa: BLE001 - a generator bug is ours, not ddpfix's
            counts["generator-error"] += 1
            continue
        failed, detail = check(data, timeout)
        counts[f"kind:{kind}"] += 1
        counts["programs"] += 1
        counts["valid" if compiles(data) else "invalid-input"] += 1
        if failed is None:
            counts[detail] += 1
            continue
        counts[f"FAIL:{failed}"] += 1
        name = f"{failed}-{seed_value}-{number}"
        folder = Path(failures)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.py").write_bytes(data)
        (folder / f"{name}.txt").write_text(f"{failed} ({kind}, seed {seed_value}, program {number})\n{detail}\n")
        saved.append(name)
    return counts, saved, time.perf_counter() - began


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0,
                        help="number of the first program (to finish a run that --max-seconds cut short)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--chunk", type=int, default=500, help="programs per worker task")
    parser.add_argument("--fresh-ratio", type=float, default=0.1,
                        help="fresh hypothesmith programs drawn per generated program (the rest reuse them, mutated)")
    parser.add_argument("--timeout", type=int, default=60, help="seconds one fix_source may take")
    parser.add_argument("--failures", default="fuzz-failures", help="folder for failing inputs")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="stop starting new chunks after this long, and report what ran")
    parser.add_argument("--no-prefilter-check", action="store_true",
                        help="skip property 5 (the report-only comparison without prefilters)")
    args = parser.parse_args(argv)

    tasks = []
    end = args.start + args.programs
    for start in range(args.start, end, args.chunk):
        tasks.append((args.seed, start, min(args.chunk, end - start), args.fresh_ratio, args.failures,
                      args.timeout, not args.no_prefilter_check))
    total: Counter = Counter()
    saved: list[str] = []
    time_is_up = False
    began = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_chunk, task) for task in tasks]
        for future in as_completed(futures):
            if future.cancelled():
                continue
            counts, names, _ = future.result()
            total.update(counts)
            saved += names
            elapsed = time.perf_counter() - began
            fails = sum(v for k, v in total.items() if k.startswith("FAIL:"))
            print(f"[{elapsed:7.0f}s] {total['programs']:>7} programs, {fails} failures, "
                  f"{total['programs'] / elapsed:.1f}/s", flush=True)
            if args.max_seconds is not None and elapsed > args.max_seconds and not time_is_up:
                time_is_up = True
                skipped = [task for task, f in zip(tasks, futures) if f.cancel()]
                if skipped:
                    # Chunks start in order, so the ones left are the run's last programs.
                    first = min(task[1] for task in skipped)
                    print(f"time is up: {len(skipped)} chunks not started; to finish the run: "
                          f"--seed {args.seed} --start {first} --programs {end - first}", flush=True)
    elapsed = time.perf_counter() - began
    print("\nsummary")
    for key in sorted(total):
        print(f"  {key:<24} {total[key]}")
    print(f"  {'seconds':<24} {elapsed:.0f}")
    print(f"  {'programs/second':<24} {total['programs'] / elapsed:.1f}")
    failures = sum(v for k, v in total.items() if k.startswith("FAIL:"))
    print(f"\n{failures} failures" + (f"; inputs saved in {args.failures}/" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
