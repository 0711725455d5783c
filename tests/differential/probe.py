"""What a differential case script records about its run, for the harness to compare.

The harness puts this folder on ``PYTHONPATH`` and sets:

- ``DDPFIX_DIFF_OUT``: the folder to write to (``rank{global_rank}.json`` per rank, ``state.pt`` from
  rank 0);
- ``DDPFIX_DIFF_DEVICES``: ``1`` or ``2`` (``probe.devices()``);
- ``DDPFIX_DIFF_LOAD`` (optional): a ``state.pt`` written by another script (the original's into the
  rewrite and the reverse); ``record`` loads it into this script's model with ``strict=True`` and
  records whether that worked.

A case script stays a realistic Lightning script: it writes its Trainer arguments as a user would
(``strategy="ddp"`` literally, where ddpfix needs to see it) and takes only the device count and the
quiet settings from here. ``record`` must be the script's last use of the model: the load check
overwrites the weights after they have been recorded.

Without ``DDPFIX_DIFF_OUT`` every function still works, so a case also runs on its own
(``python case.py``), printing nothing.
"""

from __future__ import annotations

import atexit
import json
import math
import os
from typing import Any

OUT = "DDPFIX_DIFF_OUT"
DEVICES = "DDPFIX_DIFF_DEVICES"
# ``cpu`` everywhere but on a GPU machine, where ``bench/gpu_check.py`` sets ``gpu`` to run the same
# cases on a real CUDA device.
ACCELERATOR = "DDPFIX_DIFF_ACCELERATOR"
LOAD = "DDPFIX_DIFF_LOAD"


def devices() -> int:
    """The number of CPU processes to train on (``1`` or ``2``; the harness decides)."""
    return int(os.environ.get(DEVICES, "1"))


# ``devices()`` as a constant, for a script that must name it without a call: ddpfix moves a
# ddp_spawn script's Trainer into main() safely only when its arguments are literals and names
# (a DDP011 case; a call there is an effect ddpfix does not know).
DEVICE_COUNT = devices()


def out_dir() -> str | None:
    return os.environ.get(OUT) or None


def trainer_kwargs(**overrides: Any) -> dict[str, Any]:
    """The quiet, CPU-only (see ``ACCELERATOR``) Trainer settings every case shares (no strategy: a script writes its own,
    so that ddpfix sees it). ``overrides`` win (a case with a ModelCheckpoint passes
    ``enable_checkpointing=True``)."""
    kwargs: dict[str, Any] = dict(
        accelerator=os.environ.get(ACCELERATOR, "cpu"),
        devices=devices(),
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        num_sanity_val_steps=0,
        deterministic=True,
    )
    folder = out_dir()
    if folder:
        kwargs["default_root_dir"] = folder
    kwargs.update(overrides)
    return kwargs


def _plain(value: Any) -> Any:
    """JSON-able exact copy: tensors become nested float/int lists (floats round-trip exactly),
    non-finite floats become strings."""
    try:
        import torch
    except ImportError:  # pragma: no cover - the cases need torch anyway
        torch = None
    if torch is not None and isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        if value.dtype.is_floating_point:
            value = value.double()
        return _plain(value.tolist())
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, range)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist"):  # numpy
        return _plain(value.tolist())
    return repr(value)


def _shapes(value: Any) -> Any:
    return list(value.shape) if hasattr(value, "shape") else None


def record(trainer: Any, model: Any, **extra: Any) -> dict[str, Any] | None:
    """Record this rank's results: weights and buffers (exact), every metric the rank holds, and
    ``extra`` (e.g. ``splits={"train": ds.indices}``); save the state_dict; check strict loading of
    ``DDPFIX_DIFF_LOAD``. Returns what it wrote (``None`` without ``DDPFIX_DIFF_OUT``)."""
    import torch

    folder = out_dir()
    if folder is None:
        return None
    _finish_at_exit()
    rank = int(getattr(trainer, "global_rank", 0))
    state = model.state_dict()
    result: dict[str, Any] = {
        "rank": rank,
        "world_size": int(getattr(trainer, "world_size", 1)),
        "state": {name: {"shape": _shapes(t), "values": _plain(t)} for name, t in state.items()},
        # Persistent buffers only: a non-persistent one is no part of what the program saves, and a fix
        # may add one (DDP007 turns a plain tensor attribute into ``register_buffer(..., persistent=False)``).
        "buffers": {name: {"shape": _shapes(t), "values": _plain(t)} for name, t in model.named_buffers() if name in state},
        "callback_metrics": _plain(dict(trainer.callback_metrics)),
        "logged_metrics": _plain(dict(trainer.logged_metrics)),
        "progress_bar_metrics": _plain(dict(trainer.progress_bar_metrics)),
        "epochs": int(trainer.current_epoch),
        "global_step": int(trainer.global_step),
        "extra": _plain(extra),
        "load": None,
    }
    if rank == 0:
        torch.save({name: t.detach().cpu().clone() for name, t in state.items()}, os.path.join(folder, "state.pt"))
    load = os.environ.get(LOAD)
    if load:
        try:
            loaded = torch.load(load, weights_only=True)
            model.load_state_dict(loaded, strict=True)
            result["load"] = {"path": load, "ok": True, "error": None}
        except Exception as error:  # the failure is the finding: record it, do not crash the run
            result["load"] = {"path": load, "ok": False, "error": f"{type(error).__name__}: {error}"}
    path = os.path.join(folder, f"rank{rank}.json")
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    os.replace(path + ".tmp", path)
    return result


def finish() -> None:
    """Tear down the process group Lightning leaves up (avoids gloo's occasional abort at exit)."""
    try:
        import torch.distributed as dist
    except ImportError:  # pragma: no cover
        return
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


_FINISH_REGISTERED = False


def _finish_at_exit() -> None:
    """Have ``finish`` run when this process exits. A rank that ``ddp_spawn`` started never runs the
    script's own ``finish()`` (the code after ``fit`` runs in the launching process only); left up,
    its gloo group is torn down during interpreter shutdown, where it sometimes aborts ("terminate
    called without an active exception", SIGABRT) after training finished, failing a correct run."""
    global _FINISH_REGISTERED
    if not _FINISH_REGISTERED:
        atexit.register(finish)
        _FINISH_REGISTERED = True


_RECORD_CLASS: Any = None


def __getattr__(name: str) -> Any:
    """``probe.Record``, made on first use (so that importing the probe needs no Lightning), under its
    module-level name: a strategy that pickles the Trainer (``ddp_spawn``) finds the class again."""
    global _RECORD_CLASS
    if name != "Record":
        raise AttributeError(f"module 'probe' has no attribute {name!r}")
    if _RECORD_CLASS is None:
        import lightning as L

        class Record(L.Callback):
            """Records each rank's results at the end of fit, in the rank's own process."""

            def __init__(self, **extra: Any) -> None:
                self.extra = extra

            def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
                record(trainer, pl_module, **{k: v() if callable(v) else v for k, v in self.extra.items()})

        Record.__module__, Record.__qualname__ = __name__, "Record"
        _RECORD_CLASS = Record
    return _RECORD_CLASS


def callback(**extra: Any) -> Any:
    """A Lightning ``Callback`` that records each rank's results (``record``) at the end of fit, in
    the rank's own process. For a strategy that runs fit in processes of its own, started from this
    one (``ddp_notebook`` forks the notebook's kernel, ``ddp_spawn`` spawns), where the code after
    ``trainer.fit`` runs in the launching process only: pass it in the Trainer's ``callbacks``
    instead of calling ``record``. An ``extra`` value that is callable is called then (e.g.
    ``splits=lambda: {...}``; under ``ddp_spawn`` it must be picklable)."""
    return __getattr__("Record")(**extra)
