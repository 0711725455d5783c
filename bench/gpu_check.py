"""Confirm on a real GPU what a CPU machine cannot show: the GPU-only facts the rules rest on, and
the differential cases of the device rules run on a CUDA device, before and after their fixes.

A CPU-only build of torch fails every CUDA call for a reason of its own ("Torch not compiled with
CUDA enabled"), so on the CPU the harness can only show that a CUDA-only original *fails*, not that
it fails for the DDP reason, nor that its rewrite computes on a GPU what it computed before. This
script does that where a GPU is lent (rarely). It runs in two steps, because the GPU machine has no
ddpfix dependencies and a short lease:

    python bench/gpu_check.py prepare .gpu-check          # here: ddpfix rewrites each case
    python3 bench/gpu_check.py run .gpu-check --out OUT   # there: one GPU, accelerator="gpu"

``prepare`` writes, per case of the device rules, the original, the default rewrite, the
``--unsafe-fixes`` rewrite and the reference (where each exists and differs). ``run`` trains each on
one process with ``DDPFIX_DIFF_ACCELERATOR=gpu`` (the probe's and Lightning's default accelerator;
a case that writes its own keeps it) and compares them with the harness's comparisons; it also runs
the fact probes (``FACTS``), each a few lines that print what they saw or fail. One GPU cannot hold
two DDP ranks under NCCL, so everything runs on one process: NCCL itself is checked with a world of
one (its refusal of CPU tensors does not need a second rank). It prints a table and writes
``gpu_check.json`` under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from differential import harness  # noqa: E402

#: The rules whose failures or fixes depend on where tensors live.
DEVICE_RULES = ("cuda-generator", "init-module-scope", "hardcoded-device", "tensor-attribute", "device-map-under-ddp")
VARIANTS = ("original", "fixed", "unsafe", "reference")

_TRAINER = ("import lightning as L, torch\n"
            "from torch import nn\n"
            "from torch.utils.data import DataLoader, TensorDataset\n")
_LOGGING_MODULE = _TRAINER + """
class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)
    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        VALIDATION
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

x = torch.randn(32, 4)
data = DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=8)
trainer = L.Trainer(accelerator="gpu", devices=1, strategy="ddp", max_epochs=1, logger=False,
                    enable_progress_bar=False, enable_model_summary=False, enable_checkpointing=False,
                    num_sanity_val_steps=0)
assert torch.distributed.get_backend() if torch.distributed.is_initialized() else True
trainer.fit(Model(), data, data)
print("backend", torch.distributed.get_backend(), "metrics", dict(trainer.callback_metrics))
"""

#: name -> (what it shows, "fails" / "runs" / "record", substring the failure must hold, code).
FACTS: dict[str, tuple[str, str, str, str]] = {
    "cuda_generator_with_cpu_default": (
        "a CUDA generator handed to a shuffling DataLoader fails with the CPU default device",
        "fails", "Expected a 'cpu' device type for generator",
        _TRAINER + "x = torch.randn(16, 2)\n"
        "loader = DataLoader(TensorDataset(x), batch_size=4, shuffle=True, generator=torch.Generator(device='cuda').manual_seed(0))\n"
        "print(next(iter(loader))[0].shape)\n"),
    "cpu_generator_with_cpu_default": (
        "the fix: a CPU generator works there", "runs", "",
        _TRAINER + "x = torch.randn(16, 2)\n"
        "loader = DataLoader(TensorDataset(x), batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(0))\n"
        "print(next(iter(loader))[0].shape)\n"),
    "cpu_generator_with_cuda_default": (
        "with torch.set_default_device('cuda') a CPU generator fails (the rule refuses to drop the device)",
        "fails", "Expected a 'cuda' device type for generator",
        _TRAINER + "torch.set_default_device('cuda')\nx = torch.randn(16, 2)\n"
        "loader = DataLoader(TensorDataset(x), batch_size=4, shuffle=True, generator=torch.Generator(device='cpu').manual_seed(0))\n"
        "print(next(iter(loader))[0].shape)\n"),
    "cuda_generator_with_cuda_default": (
        "with a CUDA default device the CUDA generator works (working code)", "runs", "",
        _TRAINER + "torch.set_default_device('cuda')\nx = torch.randn(16, 2)\n"
        "loader = DataLoader(TensorDataset(x), batch_size=4, shuffle=True, generator=torch.Generator(device='cuda').manual_seed(0))\n"
        "print(next(iter(loader))[0].shape)\n"),
    "cpu_generator_in_cuda_device_block": (
        "iterating a shuffling loader inside `with torch.device('cuda')` needs a CUDA generator",
        "fails", "Expected a 'cuda' device type for generator",
        _TRAINER + "x = torch.randn(16, 2)\n"
        "loader = DataLoader(TensorDataset(x), batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(0))\n"
        "with torch.device('cuda'):\n    print(next(iter(loader))[0].shape)\n"),
    "random_split_with_cuda_generator": (
        "random_split with a CUDA generator fails on the CPU default device", "fails", "",
        "import torch\nfrom torch.utils.data import random_split\n"
        "print(random_split(range(10), [5, 5], generator=torch.Generator(device='cuda').manual_seed(0)))\n"),
    "init_module_places_data_on_cuda": (
        "tensors made inside `trainer.init_module()` on a GPU Trainer are CUDA tensors", "runs", "",
        _TRAINER + "trainer = L.Trainer(accelerator='gpu', devices=1, logger=False)\n"
        "with trainer.init_module():\n    x = torch.randn(4)\n"
        "assert x.device.type == 'cuda', x.device\nprint(x.device)\n"),
    "fabric_init_module_places_data_on_cuda": (
        "tensors made inside `fabric.init_module()` are CUDA tensors", "runs", "",
        "import torch\nfrom lightning.fabric import Fabric\nfabric = Fabric(accelerator='cuda', devices=1)\n"
        "with fabric.init_module():\n    x = torch.randn(4)\n"
        "assert x.device.type == 'cuda', x.device\nprint(x.device)\n"),
    "init_module_data_with_pinned_memory": (
        "a loader over init_module data with pin_memory=True fails", "fails", "pin",
        _TRAINER + "trainer = L.Trainer(accelerator='gpu', devices=1, logger=False)\n"
        "with trainer.init_module():\n    x = torch.randn(16, 2)\n"
        "print(next(iter(DataLoader(TensorDataset(x), batch_size=4, pin_memory=True)))[0].device)\n"),
    "init_module_data_with_workers": (
        "a loader over init_module data with worker processes fails (CUDA in forked workers)", "fails", "",
        _TRAINER + "trainer = L.Trainer(accelerator='gpu', devices=1, logger=False)\n"
        "with trainer.init_module():\n    x = torch.randn(16, 2)\n"
        "print(next(iter(DataLoader(TensorDataset(x), batch_size=4, num_workers=2)))[0].device)\n"),
    "nccl_refuses_a_cpu_tensor_synced_by_log": (
        "self.log(cpu_tensor, sync_dist=True) under NCCL fails (DDP004 refuses a CPU value)", "fails", "",
        _LOGGING_MODULE.replace("VALIDATION", "self.log('v', torch.tensor(1.0), on_epoch=True, sync_dist=True)")),
    "nccl_syncs_a_python_float_logged": (
        "self.log(float, sync_dist=True) under NCCL works (Lightning makes it on the module's device)", "runs", "",
        _LOGGING_MODULE.replace("VALIDATION", "self.log('v', float(loss), on_epoch=True, sync_dist=True)")),
    "nccl_syncs_the_loss_logged": (
        "self.log(loss, sync_dist=True) under NCCL works (the fix's usual shape)", "runs", "",
        _LOGGING_MODULE.replace("VALIDATION", "self.log('v', loss, on_epoch=True, sync_dist=True)")),
    "nccl_all_gathers_a_cpu_tensor_moved_by_lightning": (
        "self.all_gather(cpu_tensor) under NCCL runs: LightningModule.all_gather moves its input to the "
        "module's device first (seen on an H200, 2026-11-29)", "runs", "",
        _LOGGING_MODULE.replace("VALIDATION", "self.log('v', self.all_gather(torch.tensor(1.0)).float().mean())")),
    "random_sampler_generator_replaced_under_ddp": (
        "a RandomSampler's CUDA generator is dropped under DDP: Lightning replaces the sampler by a "
        "DistributedSampler over the dataset (use_distributed_sampler)", "runs", "",
        _LOGGING_MODULE.replace("VALIDATION", "pass").replace(
            "data = DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=8)",
            "from torch.utils.data import RandomSampler\nds = TensorDataset(x, x.sum(1, keepdim=True))\n"
            "data = DataLoader(ds, batch_size=8, sampler=RandomSampler(ds, generator=torch.Generator(device='cuda')))")),
    "random_sampler_generator_on_one_device": (
        "without DDP the same RandomSampler fails", "fails", "Expected a 'cpu' device type for generator",
        _LOGGING_MODULE.replace("VALIDATION", "pass").replace('strategy="ddp"', 'strategy="auto"').replace(
            "data = DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=8)",
            "from torch.utils.data import RandomSampler\nds = TensorDataset(x, x.sum(1, keepdim=True))\n"
            "data = DataLoader(ds, batch_size=8, sampler=RandomSampler(ds, generator=torch.Generator(device='cuda')))")),
    "loader_generator_kept_under_ddp": (
        "a DataLoader's own CUDA generator (shuffle=True) still fails under DDP: the loader's base seed is drawn with it",
        "fails", "device type for generator",
        _LOGGING_MODULE.replace("VALIDATION", "pass").replace(
            "data = DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=8)",
            "data = DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=8, shuffle=True, "
            "generator=torch.Generator(device='cuda'))")),
    "indexless_cuda_is_the_current_device": (
        "an index-less 'cuda' is torch.cuda.current_device()", "runs", "",
        "import torch\ntorch.cuda.set_device(0)\nassert torch.zeros(1, device='cuda').device.index == torch.cuda.current_device()\n"
        "print(torch.cuda.get_device_name())\n"),
}


def prepare(folder: Path) -> None:
    """Rewrite each case of the device rules with this checkout's ddpfix and lay the variants out
    under ``folder/<rule>/<case>/<variant>/`` (the project's files beside each, the stubs under
    ``stubs``), with ``case.json``."""
    shutil.rmtree(folder, ignore_errors=True)
    cases = [case for rule in DEVICE_RULES for case in harness.discover(rule) if not case.notebook]
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(2) as pool:
        def one(case: harness.Case) -> str:
            base = folder / case.rule / case.name
            fixed = harness.rewrite(case.path, Path(scratch) / case.id / "fixed", project=case.project)
            unsafe = harness.rewrite(case.path, Path(scratch) / case.id / "unsafe", unsafe=True, project=case.project)
            texts = {"original": fixed.before, "fixed": fixed.after if fixed.changed else None,
                     "unsafe": unsafe.after if unsafe.after not in (fixed.before, fixed.after) else None,
                     "reference": case.reference.read_bytes() if case.reference else None}
            for variant, text in texts.items():
                if text is None:
                    continue
                case.place(case.path, base / variant / case.path.name)
                (base / variant / case.path.name).write_bytes(text)
            if case.stubs is not None:
                shutil.copytree(case.stubs, base / "stubs")
            meta = {"rule": case.rule, "name": case.name, "file": case.path.name,
                    "expectation": case.expectation, "options": case.options}
            (base / "case.json").write_text(json.dumps(meta), encoding="utf-8")
            return case.id
        for done in pool.map(one, cases):
            print("prepared", done)


def _run_fact(name: str, work: Path, gpu: bool) -> dict:
    summary, expected, needle, code = FACTS[name]
    script = work / "facts" / name / "fact.py"
    script.parent.mkdir(parents=True)
    script.write_text(code, encoding="utf-8")
    env = harness.training_env()
    env["MASTER_PORT"] = str(harness.free_port())
    proc = harness.run_group([sys.executable, str(script)], env, script.parent, 240)
    outcome = "runs" if proc.returncode == 0 else "fails"
    error = harness.last_error(proc) if outcome == "fails" else proc.stdout.strip().splitlines()[-1:] or [""]
    error = error if isinstance(error, str) else error[0]
    # Without a GPU every CUDA call fails for a reason of its own: no fact is shown there.
    as_expected = gpu and outcome == expected and (not needle or needle in proc.stderr + proc.stdout)
    return {"fact": name, "shows": summary, "expected": expected, "outcome": outcome,
            "as_expected": as_expected, "said": error[:300], "seconds": round(proc.seconds, 1)}


def _run_case(base: Path, work: Path) -> dict:
    meta = json.loads((base / "case.json").read_text(encoding="utf-8"))
    # DDPFIX_DIFF_NO_STUBS=1: the real library (transformers, accelerate) where the machine has it.
    stubs = [base / "stubs"] if (base / "stubs").exists() and not os.environ.get("DDPFIX_DIFF_NO_STUBS") else []
    runs: dict[str, harness.Run] = {}
    for variant in VARIANTS:
        script = base / variant / meta["file"]
        if script.exists():
            runs[variant] = harness.train(script, 1, work / "runs" / meta["rule"] / meta["name"] / variant, variant,
                                          timeout=240, paths=stubs)
    result = {"case": f"{meta['rule']}/{meta['name']}", "expectation": meta["expectation"],
              "options": meta["options"], "runs": {}, "problems": []}
    for variant, run in runs.items():
        result["runs"][variant] = "ok" if run.ok else harness.last_error(run.proc)
    yardstick = runs.get("reference") or runs["original"]
    if "reference" in runs and runs["original"].ok and not meta["options"].get("reference"):
        yardstick = runs["original"]  # on a GPU a CUDA-only original runs: it is the yardstick
    for variant in ("fixed", "unsafe"):
        run = runs.get(variant)
        if run is None:
            continue
        if not run.ok:
            result["problems"].append(f"{variant} failed: {harness.last_error(run.proc)}")
        elif yardstick.ok and yardstick is not run:
            found = harness.compare(yardstick, run)
            result["problems"] += [f"{variant}: {p}" for p in found]
            result[f"{variant}_matches_{yardstick.label}"] = not found
    return result


def run(folder: Path, out: Path, jobs: int, rules: list[str], facts_named: list[str]) -> int:
    import torch

    out.mkdir(parents=True, exist_ok=True)
    os.environ["DDPFIX_DIFF_ACCELERATOR"] = "gpu"
    os.environ["DDPFIX_DIFF_WARM"] = "0"  # a fork of a warm interpreter would share its CUDA state
    header = {"torch": torch.__version__, "cuda": torch.cuda.is_available(),
              "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None}
    try:
        import lightning
        header["lightning"] = lightning.__version__
    except ImportError:
        header["lightning"] = None
    print(json.dumps(header))
    work = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    bases = sorted(path.parent for path in folder.resolve().glob("*/*/case.json")
                   if not rules or path.parent.parent.name in rules)
    names = [name for name in FACTS if not facts_named or name in facts_named]
    with ThreadPoolExecutor(jobs) as pool:
        facts = list(pool.map(lambda name: _run_fact(name, work, bool(header["cuda"])), names))
        cases = list(pool.map(lambda base: _run_case(base, work), bases))
    for fact in facts:
        print(f"{'ok ' if fact['as_expected'] else 'NOT'} fact {fact['fact']}: expected {fact['expected']}, "
              f"{fact['outcome']} ({fact['seconds']} s): {fact['said']}")
    for case in cases:
        runs = ", ".join(f"{variant} {status if status == 'ok' else 'FAILED: ' + status}" for variant, status in case["runs"].items())
        print(f"case {case['case']} [{case['expectation']}]: {runs}")
        for problem in case["problems"]:
            print(f"    {problem[:400]}")
    (out / "gpu_check.json").write_text(json.dumps({"header": header, "facts": facts, "cases": cases}, indent=1),
                                        encoding="utf-8")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    sub.add_parser("prepare").add_argument("folder", type=Path)
    running = sub.add_parser("run")
    running.add_argument("folder", type=Path)
    running.add_argument("--out", type=Path, required=True)
    running.add_argument("--jobs", type=int, default=12)
    running.add_argument("--rule", action="append", default=[], help="only this rule's cases (repeatable)")
    running.add_argument("--fact", action="append", default=[], help="only this fact (repeatable; 'none' for none)")
    args = parser.parse_args()
    if args.step == "prepare":
        prepare(args.folder)
        return 0
    return run(args.folder, args.out, args.jobs, args.rule, args.fact)


if __name__ == "__main__":
    sys.exit(main())
