"""ddpfix rehearse's start-up code: Python imports ``sitecustomize`` at start-up from the first
folder on ``PYTHONPATH`` that holds one, so every process of a rehearsal (the script, the ranks
Lightning launches, spawned children) runs this first, then the user's own ``sitecustomize``.

Plain Python with no ddpfix import (it runs under the user's interpreter). It does nothing unless
``DDPFIX_REHEARSE_OUT`` names the rehearsal's folder. Then it:

- makes every ``Trainer`` and ``Fabric`` run small on CPU ranks (``settings``): the script's own
  DDP-family strategy on ``devices=N`` CPU processes (gloo), ``limit_*_batches=K``, at most two
  epochs, logs and checkpoints in the scratch folder where the script names none; never
  ``fast_dev_run`` or ``barebones``, which turn off the callbacks and logging these bugs live in;
- maps CUDA requests to the CPU where that keeps the meaning (``.cuda()``, ``.to("cuda")``) and
  emulates the CUDA-only failure a mapping would hide (a CUDA generator drawn from on the CPU);
- records, per process, one JSON line per event in ``events-<pid>.jsonl``: every ``self.log`` (key,
  flags, hook, value, the user's line), every collective entered and left, every batch's indices
  (a hash), every ``random_split``, the keys callbacks monitor, uncaught exceptions, each mapping;
- lets the rehearsal ask for every thread's stack (``SIGUSR1``, ``faulthandler``) when it sees a hang.

What the script computes is not touched: the wrappers call the real functions with the same
arguments (but the ones listed as mapped) and only read their results.
"""

from __future__ import annotations

import os
import sys

OUT = os.environ.get("DDPFIX_REHEARSE_OUT")


def _load_users_sitecustomize() -> None:
    """The user's own ``sitecustomize`` (later on the path), which ours shadows."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


if OUT:
    import faulthandler
    import functools
    import hashlib
    import importlib.abc
    import importlib.machinery
    import inspect
    import json
    import signal
    import threading
    import time
    import traceback

    DEVICES = int(os.environ.get("DDPFIX_REHEARSE_DEVICES", "2"))
    BATCHES = int(os.environ.get("DDPFIX_REHEARSE_BATCHES", "2"))
    MAX_EPOCHS = int(os.environ.get("DDPFIX_REHEARSE_EPOCHS", "2"))
    ROOT = os.path.realpath(os.environ.get("DDPFIX_REHEARSE_ROOT", os.getcwd()))
    HERE = os.path.dirname(os.path.realpath(__file__))
    # Paths are shown relative to the folder the rehearsal was started from (as ddpfix shows them).
    SHOWN_FROM = os.environ.get("DDPFIX_REHEARSE_CWD", ROOT)
    DDP_FAMILY = {"ddp", "ddp_spawn", "ddp_fork", "ddp_notebook", "ddp_find_unused_parameters_true",
                  "ddp_find_unused_parameters_false", "ddp_spawn_find_unused_parameters_true",
                  "ddp_spawn_find_unused_parameters_false", "ddp_fork_find_unused_parameters_true",
                  "ddp_notebook_find_unused_parameters_true"}
    COLLECTIVES = ("all_reduce", "all_gather", "all_gather_into_tensor", "all_gather_object", "reduce",
                   "reduce_scatter", "reduce_scatter_tensor", "broadcast", "broadcast_object_list", "gather",
                   "gather_object", "scatter", "scatter_object_list", "barrier", "monitored_barrier", "all_to_all",
                   "all_to_all_single")

    class _Events:
        """This process's event file: one JSON object per line, flushed at once (a hang or a kill
        must not lose what came before it)."""

        def __init__(self) -> None:
            self.lock = threading.RLock()
            self.file = None
            self.pid = None

        def rank(self):
            dist = sys.modules.get("torch.distributed")
            try:
                if dist is not None and dist.is_available() and dist.is_initialized():
                    return dist.get_rank()
            except Exception:
                pass
            for name in ("RANK", "LOCAL_RANK"):
                if os.environ.get(name, "").isdigit():
                    return int(os.environ[name])
            return None

        def write(self, kind: str, **fields) -> None:
            with self.lock:
                if self.file is None or self.pid != os.getpid():  # a forked child writes its own file
                    self.pid = os.getpid()
                    self.file = open(os.path.join(OUT, f"events-{self.pid}.jsonl"), "a", encoding="utf-8", buffering=1)
                fields.update(event=kind, pid=self.pid, ppid=os.getppid(), rank=self.rank(), t=time.time())
                try:
                    self.file.write(json.dumps(fields, default=repr) + "\n")
                except Exception:
                    pass

    EVENTS = _Events()

    import sysconfig

    _LIBRARY = tuple(os.path.realpath(p) + os.sep for p in {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib")})

    def _users(path: str) -> bool:
        """Whether a (real) file path is the user's code: a real file outside the standard library,
        any installed package and this file (a sibling package of the script, wherever it lies, is
        the user's)."""
        return (os.path.isabs(path) and "site-packages" not in path and "dist-packages" not in path
                and not path.startswith(HERE) and not path.startswith(_LIBRARY))

    def _site():
        """The innermost frame of the user's code (under the rehearsal's root, outside any
        installed package and this file): ``(path, line, function)``, or None."""
        frame = sys._getframe(1)
        while frame is not None:
            path = os.path.realpath(frame.f_code.co_filename)
            if _users(path):
                return [os.path.relpath(path, SHOWN_FROM), frame.f_lineno, frame.f_code.co_name]
            frame = frame.f_back
        return None

    def _tb_site(tb):
        site = None
        while tb is not None:
            path = os.path.realpath(tb.tb_frame.f_code.co_filename)
            if _users(path):
                site = [os.path.relpath(path, SHOWN_FROM), tb.tb_lineno, tb.tb_frame.f_code.co_name]
            tb = tb.tb_next
        return site

    def _number(value):
        try:
            if hasattr(value, "numel") and value.numel() == 1:
                return float(value.detach().float().cpu().item())
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
        except Exception:
            return None
        return None

    # --- Trainer and Fabric: small, on CPU ranks --------------------------------------------------

    def _strategy(value, mapped):
        name = value if isinstance(value, str) else None
        if name is None and type(value).__name__ in ("FSDPStrategy", "DeepSpeedStrategy", "ModelParallelStrategy",
                                                      "XLAStrategy", "XLAFSDPStrategy", "DataParallelStrategy"):
            mapped.append(f"strategy={type(value).__name__}(...) -> 'ddp' (rehearsed as DDP: its sharding is not rehearsed)")
            return "ddp"
        if name is None and value is not None:  # a strategy object: gloo for an NCCL request
            backend = getattr(value, "_process_group_backend", None)
            if backend == "nccl":
                value._process_group_backend = "gloo"
                mapped.append("process_group_backend='nccl' -> 'gloo' (NCCL needs GPUs)")
            return value
        if name in (None, "auto") or name in DDP_FAMILY:
            return value
        mapped.append(f"strategy={name!r} -> 'ddp' (rehearsed as DDP: its sharding is not rehearsed)")
        return "ddp"

    def _precision(value, mapped):
        text = str(value) if value is not None else None
        if text in ("16", "16-mixed"):
            mapped.append(f"precision={value!r} -> 'bf16-mixed' (float16 autocast is GPU-only)")
            return "bf16-mixed"
        if text in ("16-true",):
            mapped.append(f"precision={value!r} -> 'bf16-true' (float16 on CPU)")
            return "bf16-true"
        return value

    def _small(arguments: dict, trainer: bool) -> list:
        mapped = []
        asked = {k: arguments.get(k) for k in ("accelerator", "devices", "strategy", "num_nodes")}
        if arguments.get("accelerator") not in (None, "cpu"):
            mapped.append(f"accelerator={arguments['accelerator']!r} -> 'cpu'")
        arguments["accelerator"] = "cpu"
        if arguments.get("devices") in (1, "1", [0], (0,), "cuda:0"):
            # One device asked for (Lightning's advice for testing after DDP): kept, one process.
            arguments["devices"] = 1
            return asked, mapped
        if arguments.get("devices") != DEVICES:
            mapped.append(f"devices={arguments.get('devices', 'auto')!r} -> {DEVICES} CPU processes")
        arguments["devices"] = DEVICES
        if arguments.get("num_nodes") not in (None, 1):
            mapped.append(f"num_nodes={arguments['num_nodes']!r} -> 1")
            arguments["num_nodes"] = 1
        if "strategy" in arguments:
            arguments["strategy"] = _strategy(arguments["strategy"], mapped)
        if "precision" in arguments:
            arguments["precision"] = _precision(arguments["precision"], mapped)
        if arguments.get("sync_batchnorm"):
            mapped.append("sync_batchnorm=True -> False (SyncBatchNorm runs on GPUs only; each rank normalises alone)")
            arguments["sync_batchnorm"] = False
        if trainer:
            for stage in ("train", "val", "test", "predict"):
                key = f"limit_{stage}_batches"
                given = arguments.get(key)
                if given == 0 or (isinstance(given, int) and not isinstance(given, bool) and given <= BATCHES):
                    continue
                arguments[key] = BATCHES
            epochs = arguments.get("max_epochs")
            if epochs is None or epochs == -1 or epochs > MAX_EPOCHS:
                arguments["max_epochs"] = MAX_EPOCHS
            steps = arguments.get("max_steps")
            if isinstance(steps, int) and steps > BATCHES * MAX_EPOCHS:
                arguments["max_steps"] = BATCHES * MAX_EPOCHS
            interval = arguments.get("val_check_interval")
            if isinstance(interval, int) and not isinstance(interval, bool) and interval > BATCHES:
                mapped.append(f"val_check_interval={interval} -> {BATCHES} (the rehearsal's batches per epoch)")
                arguments["val_check_interval"] = BATCHES
            every = arguments.get("check_val_every_n_epoch")
            if isinstance(every, int) and every > MAX_EPOCHS:
                mapped.append(f"check_val_every_n_epoch={every} -> 1 (so that validation runs)")
                arguments["check_val_every_n_epoch"] = 1
            if arguments.get("default_root_dir") is None:
                arguments["default_root_dir"] = os.path.join(OUT, "lightning")
            arguments["enable_progress_bar"] = False
            for key in ("fast_dev_run", "barebones"):
                if arguments.get(key):
                    mapped.append(f"{key}={arguments[key]!r} kept (it turns off the callbacks and logging these bugs live in)")
        return asked, mapped

    def _wrap_init(cls, trainer: bool) -> None:
        original = cls.__init__
        if getattr(original, "_ddpfix_rehearse", False):
            return
        signature = inspect.signature(original)

        @functools.wraps(original)
        def __init__(self, *args, **kwargs):
            site = _site()
            try:
                bound = signature.bind(self, *args, **kwargs)
            except TypeError:
                return original(self, *args, **kwargs)  # let Lightning say what is wrong with the call
            arguments = dict(bound.arguments)
            extra = arguments.pop(next((n for n, p in signature.parameters.items() if p.kind is p.VAR_KEYWORD), ""), {})
            asked, mapped = _small(arguments, trainer)
            strategy = arguments.get("strategy")
            if str(asked.get("accelerator")).lower() in ("gpu", "cuda") or getattr(strategy, "_process_group_backend", None) == "gloo" and any("nccl" in m for m in mapped):
                ASKED_GPU.append(True)
            EVENTS.write("trainer" if trainer else "fabric", site=site, asked=asked, mapped=mapped,
                         limits={k: arguments.get(k) for k in ("limit_train_batches", "max_epochs")})
            arguments.pop("self", None)
            original(self, **arguments, **extra)
            try:
                EVENTS.write("strategy", site=site, strategy=type(self.strategy).__name__,
                             backend=getattr(self.strategy, "_process_group_backend", None))
            except Exception:
                pass

        __init__._ddpfix_rehearse = True
        cls.__init__ = __init__

    def _wrap_fit(cls) -> None:
        for name in ("fit", "validate", "test"):
            original = getattr(cls, name, None)
            if original is None or getattr(original, "_ddpfix_rehearse", False):
                continue

            @functools.wraps(original)
            def run(self, *args, __original=original, __name=name, **kwargs):
                model = kwargs.get("model", args[0] if args else None)
                if model is not None:
                    MODELS.append(model)
                RUNNING.append(self)
                monitors = []
                for callback in getattr(self, "callbacks", []) or []:
                    monitor = getattr(callback, "monitor", None)
                    if isinstance(monitor, str):
                        monitors.append([type(callback).__name__, monitor])
                EVENTS.write("run", stage=__name, site=_site(), monitors=monitors)
                return __original(self, *args, **kwargs)

            run._ddpfix_rehearse = True
            setattr(cls, name, run)

    def _wrap_log(cls) -> None:
        original = cls.log
        if getattr(original, "_ddpfix_rehearse", False):
            return

        @functools.wraps(original)
        def log(self, name, value, *args, **kwargs):
            try:
                flags = inspect.signature(original).bind(self, name, value, *args, **kwargs).arguments
                trainer = getattr(self, "_trainer", None)
                EVENTS.write("log", key=name, value=_number(value), metric=type(value).__name__,
                             sync_dist=bool(flags.get("sync_dist", False)),
                             rank_zero_only=bool(flags.get("rank_zero_only", False)),
                             on_step=flags.get("on_step"), on_epoch=flags.get("on_epoch"),
                             hook=getattr(self, "_current_fx_name", None), site=_site(),
                             epoch=getattr(trainer, "current_epoch", None), step=getattr(trainer, "global_step", None))
            except Exception:
                pass
            return original(self, name, value, *args, **kwargs)

        log._ddpfix_rehearse = True
        cls.log = log

    # --- torch: collectives, data, CUDA requests ---------------------------------------------------

    MODELS: list = []  # the modules fit/validate/test ran: their plain tensor attributes stay on the CPU
    RUNNING: list = []  # the Trainers (and Fabrics) that have started: from then on tensors may be on a GPU
    ASKED_GPU: list = []  # set when a Trainer or Fabric asked for GPUs (or NCCL)

    def _plain_attribute(tensor):
        """The name of a plain (not parameter, not buffer) tensor attribute of a module being run
        that ``tensor`` is (or shares storage with): on GPUs it would still be on the CPU."""
        try:
            pointer = tensor.data_ptr()
        except Exception:
            return None
        for model in MODELS:
            for name, value in vars(model).items():
                if hasattr(value, "data_ptr") and not name.startswith("_") and type(value).__name__ == "Tensor":
                    try:
                        if value.numel() and value.data_ptr() == pointer:
                            return name
                    except Exception:
                        continue
        return None

    def _tensors(args, kwargs):
        for value in [*args, *kwargs.values()]:
            if isinstance(value, (list, tuple)):
                yield from (v for v in value if hasattr(v, "data_ptr"))
            elif hasattr(value, "data_ptr"):
                yield value

    # Lightning's and Fabric's all_gather (and broadcast) move the data to the rank's device before
    # the collective: a plain CPU attribute handed to them reaches NCCL on the GPU.
    MOVERS = {("core/module.py", "all_gather"), ("fabric/fabric.py", "all_gather"), ("fabric/fabric.py", "broadcast"),
              ("fabric/fabric.py", "all_reduce")}

    def _through_a_mover() -> bool:
        frame = sys._getframe(2)
        while frame is not None:
            path = frame.f_code.co_filename.replace(os.sep, "/")
            if any(path.endswith(tail) and frame.f_code.co_name == name for tail, name in MOVERS):
                return True
            frame = frame.f_back
        return False

    def _emulate_nccl(name, args, kwargs) -> None:
        """NCCL refuses CPU tensors, gloo takes them: a module's plain tensor attribute handed to a
        collective works here and fails on GPUs, so it fails here too, saying so."""
        if not ASKED_GPU or _through_a_mover():
            return
        for tensor in _tensors(args, kwargs):
            attribute = _plain_attribute(tensor)
            if attribute:
                message = "No backend type associated with device type cpu"
                EVENTS.write("emulated", what=f"self.{attribute}, a plain tensor attribute (not a buffer) Lightning leaves "
                             f"on the CPU, handed to {name} under NCCL", message=message, site=_site(), rule="DDP007")
                raise RuntimeError(message + " (emulated by ddpfix rehearse: NCCL raises this on GPUs; gloo would not)")

    def _wrap_collectives(dist) -> None:
        for name in COLLECTIVES:
            original = getattr(dist, name, None)
            if original is None or getattr(original, "_ddpfix_rehearse", False):
                continue

            @functools.wraps(original)
            def collective(*args, __original=original, __name=name, **kwargs):
                site = _site()
                shapes = [list(a.shape) for a in args if hasattr(a, "shape")][:2]
                _emulate_nccl(__name, args, kwargs)
                EVENTS.write("enter", op=__name, site=site, shapes=shapes, stack=_stack(), **_context())
                result = __original(*args, **kwargs)
                EVENTS.write("leave", op=__name, site=site)
                return result

            collective._ddpfix_rehearse = True
            setattr(dist, name, collective)

    def _stack():
        """The user's frames, innermost last, for a collective's report."""
        frames = []
        for frame, line in traceback.walk_stack(sys._getframe(2)):
            path = os.path.realpath(frame.f_code.co_filename)
            if _users(path):
                frames.append([os.path.relpath(path, SHOWN_FROM), line, frame.f_code.co_name])
        return frames[::-1][-4:]

    def _context() -> dict:
        """What Lightning was doing when it entered a collective: the logged key it syncs (a
        ``_ResultMetric``'s name), and the innermost framework function that called it."""
        found = {}
        frame = sys._getframe(2)
        while frame is not None:
            owner = frame.f_locals.get("self")
            if "key" not in found and type(owner).__name__ == "_ResultMetric":
                name = getattr(getattr(owner, "meta", None), "name", None)
                if isinstance(name, str):
                    found["key"] = name
            path = frame.f_code.co_filename.replace(os.sep, "/")
            if "via" not in found and "/torch/" not in path and not path.startswith(HERE):
                tail = path.split("/site-packages/")[-1]
                found["via"] = f"{tail}:{frame.f_code.co_name}"
            frame = frame.f_back
        return found

    def _stage():
        """What the running Trainer is doing (``train``, ``validate``, ``sanity_check``, ...), or
        None outside one (a loop of the script's own, a Fabric loop)."""
        for trainer in reversed(RUNNING):
            state = getattr(trainer, "state", None)
            stage = getattr(state, "stage", None)
            status = getattr(state, "status", None)
            if stage is not None and getattr(status, "value", status) == "running":
                return str(getattr(stage, "value", stage))
        return None

    def _subset_digest(dataset):
        """The indices a Subset (or a Subset of a Subset) takes: ranks that split the data by an
        unseeded draw (randperm, numpy, sklearn) hold different ones."""
        chain = []
        while type(dataset).__name__ == "Subset" and hasattr(dataset, "indices"):
            chain.append(list(dataset.indices)[:100000])
            dataset = dataset.dataset
        return _digest(chain) if chain else None

    def _digest(indices) -> str:
        return hashlib.sha1(json.dumps(indices, default=str).encode()).hexdigest()[:12]

    def _wrap_data(data) -> None:
        dataloader = sys.modules.get("torch.utils.data.dataloader")
        base = getattr(dataloader, "_BaseDataLoaderIter", None)
        loader_class = getattr(dataloader, "DataLoader", None)
        if loader_class is not None and not getattr(loader_class.__init__, "_ddpfix_rehearse", False):
            loader_init, get_iterator = loader_class.__init__, loader_class._get_iterator

            # functools.wraps: Lightning rebuilds a loader from the signature of its __init__
            # (to add a DistributedSampler): it must still see DataLoader's own.
            @functools.wraps(loader_init)
            def __init__(self, *args, **kwargs):
                loader_init(self, *args, **kwargs)
                self.__dict__["_ddpfix_site"] = _site()  # __dict__: DataLoader refuses some attributes once built

            @functools.wraps(get_iterator)
            def _get_iterator(self):
                iterator = get_iterator(self)
                site = iterator._ddpfix_site = self.__dict__.get("_ddpfix_site")
                try:
                    length = len(self)
                except Exception:
                    length = None
                EVENTS.write("loader", site=site, batches=length, sampler=type(self.sampler).__name__, stage=_stage(),
                             subset=_subset_digest(self.dataset))
                return iterator

            __init__._ddpfix_rehearse = True
            loader_class.__init__, loader_class._get_iterator = __init__, _get_iterator
        if base is not None and not getattr(base._next_index, "_ddpfix_rehearse", False):
            next_index = base._next_index

            @functools.wraps(next_index)
            def _next_index(self):
                index = next_index(self)
                loader = getattr(self, "_dataset", None)
                label = type(loader).__name__
                try:
                    label += f"[{len(loader)}]"
                except Exception:
                    pass
                EVENTS.write("batch", loader=label, digest=_digest(index), size=len(index) if hasattr(index, "__len__") else 1,
                             site=getattr(self, "_ddpfix_site", None))
                return index

            _next_index._ddpfix_rehearse = True
            base._next_index = _next_index
        for module in (data, sys.modules.get("torch.utils.data.dataset")):
            original = getattr(module, "random_split", None)
            if original is None or getattr(original, "_ddpfix_rehearse", False):
                continue

            @functools.wraps(original)
            def random_split(*args, __original=original, **kwargs):
                parts = __original(*args, **kwargs)
                EVENTS.write("split", site=_site(), sizes=[len(p) for p in parts],
                             digests=[_digest(list(getattr(p, "indices", []))) for p in parts])
                return parts

            random_split._ddpfix_rehearse = True
            module.random_split = random_split

    CUDA_GENERATORS: dict = {}

    def _is_cuda(device) -> bool:
        return str(device).startswith("cuda") if device is not None else False

    def _wrap_torch(torch) -> None:
        mapped_sites = set()

        def note(what):
            site = _site()
            key = (what, tuple(site) if site else None)
            if key not in mapped_sites:
                mapped_sites.add(key)
                EVENTS.write("mapped", what=what, site=site)

        tensor_to, module_to = torch.Tensor.to, torch.nn.Module.to
        tensor_cuda_, module_cuda_ = torch.Tensor.cuda, torch.nn.Module.cuda

        def to_cpu(args, kwargs):
            changed = False
            args = list(args)
            for i, arg in enumerate(args):
                if _is_cuda(arg) and isinstance(arg, (str, torch.device)):
                    args[i], changed = "cpu", True
            if _is_cuda(kwargs.get("device")):
                kwargs["device"], changed = "cpu", True
            return args, kwargs, changed

        # Before a Trainer or Fabric has moved anything, every tensor is on the CPU on GPUs too, and
        # moving one to CUDA copies it: the rehearsal copies too (an alias of a CPU weight kept as
        # a "starting point" would follow the weight). Later a tensor may already be on the GPU
        # there (a parameter, a batch), where .cuda() is the tensor itself: so it is here.
        def moved_to_cpu(original, what):
            @functools.wraps(original)
            def to(self, *args, **kwargs):
                args, kwargs, changed = to_cpu(args, kwargs)
                if changed:
                    note(f"{what}.to('cuda') -> CPU")
                    if what == "tensor" and not RUNNING:
                        kwargs["copy"] = True
                return original(self, *args, **kwargs)
            return to

        def kept_on_cpu(original, what):
            @functools.wraps(original)
            def cuda(self, *args, **kwargs):
                note(f"{what}.cuda() -> CPU")
                return self.clone() if what == "tensor" and not RUNNING else self
            return cuda

        torch.Tensor.to, torch.nn.Module.to = moved_to_cpu(tensor_to, "tensor"), moved_to_cpu(module_to, "module")
        torch.Tensor.cuda = kept_on_cpu(tensor_cuda_, "tensor")
        torch.nn.Module.cuda = kept_on_cpu(module_cuda_, "module")

        base = torch.Generator

        class _Kind(type(base)):
            def __instancecheck__(cls, obj):  # every generator is still a torch.Generator
                return isinstance(obj, base)

            def __subclasscheck__(cls, other):
                return issubclass(other, base)

        class Generator(base, metaclass=_Kind):
            """A CUDA generator, which a CPU-only run cannot make, made as a CPU one and marked: drawing
            from it for a CPU operation fails as it would on GPUs (``emulate``)."""

            def __new__(cls, device="cpu"):
                if _is_cuda(device):
                    generator = base()
                    CUDA_GENERATORS[id(generator)] = (generator, _site())
                    note("torch.Generator(device='cuda') -> CPU generator (CPU draws from it fail as on GPUs)")
                    return generator
                return base(device)

        torch.Generator = Generator

        def _surely_on_cpu(device_of, args, kwargs) -> bool:
            """A draw that is on the CPU on GPUs too: torch's data loading (samplers, the loader's
            base seed, random_split), or a factory given no device. A device taken from a tensor
            (``device=x.device``) or an in-place draw on a tensor may well be CUDA there."""
            frame = sys._getframe(2)
            while frame is not None:
                if "/torch/utils/data/" in frame.f_code.co_filename.replace(os.sep, "/"):
                    return True
                frame = frame.f_back
            return device_of is not None and "device" not in kwargs

        def emulate(name, original, device_of):
            @functools.wraps(original)
            def draw(*args, **kwargs):
                generator = kwargs.get("generator")
                if generator is not None and id(generator) in CUDA_GENERATORS and _surely_on_cpu(device_of, args, kwargs):
                    message = "Expected a 'cpu' device type for generator but found 'cuda'"
                    EVENTS.write("emulated", what=f"a CUDA generator drawn from by {name} on the CPU", message=message,
                                 site=CUDA_GENERATORS[id(generator)][1] or _site(), drawn_at=_site())
                    raise RuntimeError(message + " (emulated by ddpfix rehearse: this is what GPUs raise here)")
                result = original(*args, **kwargs)
                if generator is None and name == "torch.randperm":
                    site = _site()
                    if site is not None:  # the user's own permutation: a split or a shuffle of theirs
                        EVENTS.write("draw", what=name, site=site, digest=_digest(result.tolist()[:100000]))
                return result

            draw._ddpfix_rehearse = True
            return draw

        def on_cpu(name, original):
            """A factory asked for a CUDA tensor makes it on the CPU (said once per line)."""
            @functools.wraps(original)
            def make(*args, **kwargs):
                if _is_cuda(kwargs.get("device")):
                    kwargs["device"] = "cpu"
                    note(f"torch.{name}(..., device='cuda') -> CPU")
                return original(*args, **kwargs)

            make._ddpfix_rehearse = True
            return make

        for name in ("zeros", "ones", "empty", "full", "arange", "linspace", "eye", "tensor", "as_tensor",
                     "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like"):
            if hasattr(torch, name):
                setattr(torch, name, on_cpu(name, getattr(torch, name)))
        # The draws: the emulation sees the device asked for (a CUDA draw from a CUDA generator is
        # right on GPUs), then the mapping makes the tensor on the CPU.
        for name in ("randperm", "randint", "rand", "randn", "multinomial", "normal", "bernoulli"):
            original = on_cpu(name, getattr(torch, name))
            setattr(torch, name, emulate(f"torch.{name}", original, lambda a, k: k.get("device")))
        cuda = torch.cuda

        def no_op(what):
            def call(*args, **kwargs):
                note(f"torch.cuda.{what}() -> nothing (no GPU)")
            return call

        for name in ("set_device", "synchronize"):
            setattr(cuda, name, no_op(name))
        for name in ("random_", "uniform_", "normal_", "exponential_", "bernoulli_"):
            original = getattr(torch.Tensor, name)
            setattr(torch.Tensor, name, emulate(f"Tensor.{name}", original, None))

    # --- state set by prepare_data and setup ------------------------------------------------------

    def _wrap_hook_calls(call) -> None:
        """Lightning calls ``prepare_data`` on local rank 0 only (per node) and ``setup`` on every
        rank: record which public attributes each call sets on the data module or module."""
        for name, owner_of in (("_call_lightning_datamodule_hook", lambda trainer, kwargs: trainer.datamodule),
                               ("_call_lightning_module_hook",
                                lambda trainer, kwargs: kwargs.get("pl_module") or trainer.lightning_module)):
            original = getattr(call, name, None)
            if original is None or getattr(original, "_ddpfix_rehearse", False):
                continue

            @functools.wraps(original)
            def hook(trainer, hook_name, *args, __original=original, __owner=owner_of, **kwargs):
                if hook_name not in ("prepare_data", "setup"):
                    return __original(trainer, hook_name, *args, **kwargs)
                owner = __owner(trainer, kwargs)
                before = set(vars(owner)) if owner is not None else set()
                result = __original(trainer, hook_name, *args, **kwargs)
                if owner is not None:
                    method = getattr(type(owner), hook_name, None)
                    code = getattr(method, "__code__", None)
                    path = os.path.realpath(code.co_filename) if code else ""
                    site = [os.path.relpath(path, SHOWN_FROM), code.co_firstlineno, hook_name] if code and _users(path) else None
                    EVENTS.write("state", hook=hook_name, owner=type(owner).__name__, site=site,
                                 names=sorted(k for k in vars(owner) if k not in before and not k.startswith("_")))
                return result

            hook._ddpfix_rehearse = True
            setattr(call, name, hook)

    # --- when the modules load ------------------------------------------------------------------

    def _lightning(module) -> None:
        name = module.__name__
        if name.endswith(".trainer.trainer"):
            _wrap_init(module.Trainer, trainer=True)
            _wrap_fit(module.Trainer)
        elif name.endswith(".core.module"):
            _wrap_log(module.LightningModule)
        elif name.endswith(".fabric.fabric"):
            _wrap_init(module.Fabric, trainer=False)

    PATCHES = {
        "torch": _wrap_torch,
        "torch.distributed": _wrap_collectives,
        "torch.utils.data": _wrap_data,
        "lightning.pytorch.trainer.trainer": _lightning,
        "pytorch_lightning.trainer.trainer": _lightning,
        "lightning.pytorch.core.module": _lightning,
        "pytorch_lightning.core.module": _lightning,
        "lightning.fabric.fabric": _lightning,
        "lightning.pytorch.trainer.call": _wrap_hook_calls,
        "pytorch_lightning.trainer.call": _wrap_hook_calls,
        "lightning_fabric.fabric": _lightning,
    }

    class _AfterImport(importlib.abc.MetaPathFinder):
        """Patches a module of ``PATCHES`` right after it has run (before the importer sees it)."""

        def find_spec(self, name, path=None, target=None):
            if name not in PATCHES:
                return None
            spec = None
            for finder in sys.meta_path:
                if finder is not self and hasattr(finder, "find_spec"):
                    spec = finder.find_spec(name, path, target)
                    if spec is not None:
                        break
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            loader, patch = spec.loader, PATCHES[name]
            run = loader.exec_module

            def exec_module(module):
                run(module)
                try:
                    patch(module)
                except Exception as error:  # a patch that fails leaves the module as it was
                    EVENTS.write("problem", what=f"could not instrument {name}: {error!r}")

            loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _AfterImport())

    # --- process life -------------------------------------------------------------------------------

    def _excepthook(kind, value, tb, __original=sys.excepthook):
        try:
            EVENTS.write("exception", type=kind.__name__, message=str(value)[:2000], site=_tb_site(tb),
                         traceback="".join(traceback.format_exception(kind, value, tb))[-6000:])
        except Exception:
            pass
        __original(kind, value, tb)

    sys.excepthook = _excepthook
    _real_exit = sys.exit

    def _exit(status=None):
        """sys.exit with a failure status (a script that caught an error and ended itself)."""
        if status not in (None, 0):
            EVENTS.write("exit_status", status=status if isinstance(status, int) else 1, message=None if isinstance(status, int)
                         else str(status)[:500], site=_site())
        _real_exit(status)

    sys.exit = _exit
    _stack_file = open(os.path.join(OUT, f"stack-{os.getpid()}.txt"), "w", encoding="utf-8")
    faulthandler.register(signal.SIGUSR1, file=_stack_file, all_threads=True)
    EVENTS.write("start", argv=sys.argv, executable=sys.executable)

    import atexit

    atexit.register(lambda: EVENTS.write("exit"))

_load_users_sitecustomize()
