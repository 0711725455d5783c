"""Facts that cross files, gathered in one cheap pass before any file is fixed.

The model and the Trainer usually live in different files: a metric is monitored by an
``EarlyStopping`` in ``train.py`` but logged in ``model.py``; ``class Net(BaseModel)`` is a
LightningModule because ``BaseModel(L.LightningModule)`` is, two files away. Rules read these facts
from their context and never open other files themselves.

The pass uses ``ast`` (C speed) and only on files that mention the words it looks for.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import json
import os
import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ddpfix.analysis.ast_shapes import every_node, parent_map
from ddpfix.ast_walk import walk
from ddpfix.analysis.comments import without_comments
from ddpfix.analysis.attribute_access import FRAME_WRITES, NAMESPACE_WORDS, attribute_stores, dynamic_access
from ddpfix.lazy_regex import lazy_compile
from ddpfix.model.classes import Import, Kinds, class_bases, from_imports, module_key, resolve_kinds
from ddpfix.model.outside_code import may_reach_outside
from ddpfix.model.program import ProcessGroups, config_roots, imported_modules, program_root
from ddpfix.records import record

if TYPE_CHECKING:  # loaded where used: most runs never read another file's classes, a notebook or a pin
    from ddpfix.model.class_files import ClassFiles
    from ddpfix.model.versions import LightningVersion

#: Callbacks whose ``monitor`` decides through collectives on every rank, with the position of
#: ``monitor`` when given positionally (Lightning 2.x: ``EarlyStopping(monitor, ...)``,
#: ``ModelCheckpoint(dirpath, filename, monitor, ...)``; ``StochasticWeightAveraging`` takes none).
#: The Trainer keywords that turn Lightning's distributed sampler off (2.x, and 1.x's name).
SAMPLER_SWITCHES = frozenset({"use_distributed_sampler", "replace_sampler_ddp"})
#: Calls that build a Trainer from the command line or a configuration read at run time.
_ONLY_BEFORE_DURATIONS = frozenset({"from_argparse_args", "parse_argparser"})
_ARGUMENTS_FROM_OUTSIDE = frozenset({"LightningCLI", "from_argparse_args", "parse_argparser", "instantiate",
                                     "instantiate_class", "instantiate_classes"})
MONITORING_CALLBACKS = {"EarlyStopping": 0, "ModelCheckpoint": 2, "StochasticWeightAveraging": None}
#: The Trainer argument that may make validation run by the clock (a duration, Lightning 2.6).
CLOCK_SETTING = "val_check_interval"
# What makes the facts pass look closer (parse): a monitoring callback called by its name (spaces,
# comments or a line continuation may stand before the parenthesis), a string ``"monitor"`` (a dict
# key), ``seed_everything``, ``use_distributed_sampler``.
_FACT_WORDS = lazy_compile(
    # A comment runs to the end of its line (the lookahead): matched one way only, else a run of
    # comment lines full of ``#`` after the word took exponential time (found by the fuzz).
    rb"\b(?:EarlyStopping|ModelCheckpoint|StochasticWeightAveraging)(?:\s|\\|#[^\n]*(?=\n|\Z))*\(|monitor[\"'\s=]|seed_everything|use_distributed_sampler|replace_sampler_ddp|USE_DISTRIBUTED_SAMPLER|REPLACE_SAMPLER_DDP|LightningCLI|from_argparse_args|parse_argparser|instantiate|hydra|val_check_interval|VAL_CHECK_INTERVAL"
)
#: Literal words of _FACT_WORDS: searched first (memchr speed), since the regex, which starts with an
#: alternation, scans a file ten times slower and most files hold none of them. A file without any
#: contributes no seed, monitor or sampler fact to the other files of its run.
FACT_LITERALS = (b"EarlyStopping", b"ModelCheckpoint", b"StochasticWeightAveraging", b"monitor",
                  b"seed_everything", b"use_distributed_sampler", b"replace_sampler_ddp", b"USE_DISTRIBUTED_SAMPLER",
                  b"REPLACE_SAMPLER_DDP", b"LightningCLI",
                  b"from_argparse_args", b"parse_argparser", b"instantiate", b"hydra", b"val_check_interval",
                  b"VAL_CHECK_INTERVAL")
# Default-device switches (DDP002): where the default device is CUDA, samplers draw on CUDA and need
# a CUDA generator. Literal words first (memchr speed), then the ``with ... device`` regex, bounded so
# that a file of many ``with`` words without a colon stays linear.
_SWITCH_LITERALS = (b"set_default_device", b"set_default_tensor_type", b"init_module", b"init_tensor", b"DeviceContext",
                    b"__enter__", b"enter_context")
# ``with torch.device(...)``, ``with self.device:``: a ``with`` statement (checked: at its line's
# start) whose items, before any colon, hold a name with "device" or "Device" in it.
_WITH_DEVICE = lazy_compile(rb"with\b[^:#]{0,300}?[Dd]evice\w*[ \t]*(?:[(:,)]|as\b)")
_INDENT = lazy_compile(rb"[ \t]*(?:async[ \t]+)?")
_DEVICE_ALIAS = lazy_compile(rb"device[ \t]+as[ \t]+\w+[ \t]*(?:[,)\r\n#;]|\Z)")  # ``from torch import device as D``
# A ``with`` statement starts a line (a compound statement never follows ``:`` or ``;``). Its items
# are read from the text: one that is not plainly a call (``with lock:``, ``with cfg.device:``) may
# hold a torch.device, so the file is parsed; a header the scan cannot read is parsed too.
# Found as the word, then its line's start checked: ``^...with`` under re.M tries every line of a
# big tree (ten times slower on torch's sources, where it was a fifth of the scan).
_WITH_WORD = lazy_compile(rb"with\b")
_WITH_INDENT = lazy_compile(rb"[ \t\f]*(?:async[ \t\f]+)?")
# An item's text with its brackets' contents taken out: a call is ``name.name()``, ``f()()``, ``f().g()``.
_CALL_SHAPE = lazy_compile(rb"[ \t]*[A-Za-z_][\w.]*[ \t]*\(\)(?:[ \t]*(?:\.[ \t]*[A-Za-z_]\w*[ \t]*)?\(\))*[ \t]*")
_AS_TARGET = lazy_compile(rb"[ \t]as\b")
SWITCH_FUNCTIONS = frozenset({"set_default_device", "set_default_tensor_type"})
SWITCH_CONTEXTS = frozenset({"init_module", "init_tensor", "DeviceContext"})  # Lightning's, torch's
#: Context managers known not to enter a device, by name (a ``with`` over any other call may enter
#: the ``torch.device`` the call returns: review helper-42, g01): files, gradients and precision,
#: profiling, warnings and output, temporary files, progress bars, pools and locks, mocks, DDP's own.
NON_DEVICE_CONTEXTS = frozenset({
    "open", "no_grad", "enable_grad", "inference_mode", "set_grad_enabled", "autocast", "profile",
    "record_function", "catch_warnings", "suppress", "redirect_stdout", "redirect_stderr", "ExitStack",
    "nullcontext", "closing", "TemporaryDirectory", "NamedTemporaryFile", "TemporaryFile", "tqdm", "trange",
    "Pool", "ThreadPoolExecutor", "ProcessPoolExecutor", "Lock", "RLock", "Semaphore", "patch", "raises", "warns",
    "deprecated_call", "chdir", "ZipFile", "TarFile", "no_sync", "join", "sdpa_kernel", "sdp_kernel", "stream",
    "detect_anomaly", "set_detect_anomaly", "Timer", "timer", "capture_output",
})
#: Hazards a safe fix must rule out in the whole project, not only in the file it rewrites (a
#: callback is usually named in the training script, a dataset in a data module): the words of each,
#: anywhere in a file (code, string or comment: a cheap over-approximation).
#: - "weight averaging": Lightning's WeightAveraging/EMAWeightAveraging and torch's AveragedModel
#:   average buffers too, which a bool or int buffer cannot take (DDP007);
#: - "iterable data": Lightning does not shard an iterable dataset, so a batch is not proven to be
#:   this rank's own (DDP004);
#: - "batches made by the program": a ``collate_fn`` or data batched before the loader
#:   (``batch_size=None``) may make each batch an object of its own class, whose tensors
#:   Lightning's move leaves where they are (DDP004);
#: - "custom batching": a ``collate_fn``, a ``batch_sampler``, data batched before the loader
#:   (``batch_size=None``), a batch hook that may filter or reshape it (``on_before_batch_transfer``)
#:   or a class deriving from ``DistributedSampler`` (Lightning keeps it; its shards may differ in length)
#:   may make batches whose first tensor is not one row per sample (flattened tokens and offsets) or
#:   whose sizes differ between ranks; Lightning infers a log's batch size from that tensor and syncs
#:   the summed sizes as integers, so a synced epoch mean is proven right only with a literal
#:   ``batch_size=`` (DDP004);
#: - "truncated back-propagation": Lightning 1.x then passes ``hiddens`` as a step's third argument,
#:   where it otherwise passes the optimizer's index, the same on every rank (DDP004).
PROJECT_HAZARDS = {
    "weight averaging": r"WeightAverag|AveragedModel|swa_utils|SWALR|\bupdate_bn\b|_avg_fn\b|ModelEma|\bEMA\w*",
    # a library's stream (HF ``load_dataset(..., streaming=True)``, webdataset, MosaicML, torchdata)
    # is as unsharded as one's own IterableDataset
    "iterable data": r"IterableDataset|IterDataPipe|DataPipe|WebDataset|webdataset|StreamingDataset|streaming|to_iterable_dataset",
    "custom batching": r"collate_fn|batch_sampler|BatchSampler|batch_size|batch_transfer|DistributedSampler",
    # a batch of the program's own making may be an object of its class, which Lightning's move
    # (into collections and dataclasses, or an object's own ``to``) does not enter (DDP004)
    "batches made by the program": r"collate_fn|batch_size",
    "truncated back-propagation": r"truncated_bptt|tbptt",
    # Lightning before 2.4 leaves the LR finder's logged keys on the CPU (PL#19813); 1.x's
    # ``move_metrics_to_cpu=True`` keeps every logged key there: NCCL then refuses their sync
    "learning-rate finder": r"lr_find|auto_lr_find|LearningRateFinder",
    "metrics moved to the CPU": r"move_metrics_to_cpu",
    # a batch sampler of the program (bucketing by length, dropping short buckets) or a sampler
    # deriving from DistributedSampler, which Lightning keeps: each rank's number of batches is the
    # program's own, and may be none
    "uneven batches": r"batch_sampler|BatchSampler|DistributedSampler|Unrepeated",
    # code that reads the rank (manual sharding by rank, rank-gated data): with Lightning's sampler
    # off, the ranks' data may then differ in length
    # (``\brank\b``: ``rank_zero_only.rank``, a ``rank`` parameter or attribute; ``rank_zero_only``:
    # code that runs on rank 0 alone; review rounds 13 and 14)
    "rank-dependent data": r"global_rank|local_rank|get_rank|LOCAL_RANK|NODE_RANK|\bRANK\b|world_size|WORLD_SIZE"
                           r"|get_world_size|num_replicas|SLURM_PROCID|PMI_RANK|OMPI_COMM_WORLD_RANK|is_global_zero"
                           r"|\brank\b|rank_zero_only",
    # what ``seed_everything`` does not make alike on every rank: Python's string ``hash`` (salted
    # per process), a generator made without a seed (``np.random.default_rng()``, ``random.Random()``)
    "a draw no seed makes alike": r"hash|default_rng|Random|RandomState|SeedSequence",
    # Lightning runs ``prepare_data`` on local rank 0 alone: what it keeps on ``self`` (a split, a
    # vocabulary) exists on that rank only, so the ranks' data may differ (``model.rank_reads``)
    "state set on one rank": r"prepare_data",
}
#: Where a hazard's words are not enough, the shape they must take: ``batch_size`` counts only as
#: ``batch_size=None`` (data batched before the loader, in a call, a dict or a config; not a
#: dataset's ``.map(..., batch_size=None)`` on its line), not a plain ``batch_size=32``; a batch hook
#: that may reshape the batch (``on_before_batch_transfer``) and a class deriving from
#: ``DistributedSampler`` (Lightning keeps it: its shards may differ in length) count too.
_HAZARD_SHAPES = {
    # (``UnrepeatedDistributedSamplerWrapper``: a sampler that does not pad, kept by Lightning)
    "uneven batches": r"batch_sampler|BatchSampler|class[ \t]+\w+[ \t]*\([^)]*DistributedSampler|Unrepeated",
    # (``batch_size=None`` handed to a ``.map(...)``, Hugging Face datasets' one batch per call, is
    # not the loader's: ``_mapped_batch_sizes``)
    "batches made by the program": r"collate_fn|\bbatch_size['\"]?[ \t]*[:=][ \t]*None\b",
    "custom batching": r"collate_fn|batch_sampler|BatchSampler"
                       r"|class[ \t]+\w+[ \t]*\([^)]*DistributedSampler"
                       r"|def[ \t]+on_(?:before|after)_batch_transfer\b"
                       r"|\bbatch_size['\"]?[ \t]*[:=][ \t]*None\b",
    # Python's ``hash`` of a string is salted per process (``hash(name)``, ``map(hash, names)``,
    # ``name.__hash__()``); a generator made without a seed draws from the OS's entropy
    "state set on one rank": r"def[ \t]+prepare_data\b",
    "a draw no seed makes alike": r"\bhash\b|__hash__|\b(?:default_rng|Random|RandomState|SeedSequence)[ \t]*\("
                                  r"[ \t]*(?:seed[ \t]*=[ \t]*None[ \t]*)?\)",
}
_HAZARDS = {name: lazy_compile(_HAZARD_SHAPES.get(name, pattern).encode(), re.M) for name, pattern in PROJECT_HAZARDS.items()}


def hazard_pattern(name: str) -> str:
    """The regular expression by which the facts pass finds hazard ``name`` in a file's text."""
    return _HAZARDS[name].pattern.decode()


def _needles(pattern: str) -> tuple[bytes, ...]:
    """The words one of which a text must hold for ``pattern`` (an alternation of words, with
    ``\\b`` and ``\\w*`` around them) to match: ``bytes in`` finds them a hundred times faster
    than the regex engine scans a large file for an alternation with no literal prefix."""
    words = tuple(re.sub(r"\\b|\\w\*", "", part) for part in pattern.split("|"))
    if any(re.escape(word) != word or not word for word in words):
        raise ValueError(f"a hazard pattern must be words: {pattern!r}")
    return tuple(word.encode() for word in words)


_HAZARD_NEEDLES = {name: _needles(pattern) for name, pattern in PROJECT_HAZARDS.items()}


@record(frozen=True)
class Monitor:
    metric: str
    path: str
    line: int
    by: str  # "EarlyStopping", "ModelCheckpoint", "configure_optimizers"

    def describe(self) -> str:
        return f"{self.by} ({self.path}:{self.line})"


@record(frozen=True)
class DeviceSwitch:
    """A place that may make CUDA the default device of the process (DDP002)."""

    path: str  # the real path of the file
    line: int
    what: str  # "torch.set_default_device('cuda')", "with torch.device(...)", "with ....init_module()"
    cuda: bool  # the device is a literal CUDA device (else: not CUDA for sure, or decided at run time)
    scoped: bool  # a ``with`` block (only what runs inside it), not a switch of the whole process


@record
class FileFacts:
    """What one file contributes."""

    monitors: list[Monitor] = field(default_factory=list)
    #: Monitors whose metric is not a literal (``monitor=args.monitor``, ``EarlyStopping(**cfg)``,
    #: ``dict(monitor=name)``, a LightningCLI whose callbacks come from YAML): any metric may be one.
    unknown_monitors: list[Monitor] = field(default_factory=list)
    classes: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (name, base names)
    #: Its ``from ... import`` names where they may re-export a class (a file with classes, a package
    #: ``__init__``): ``model.classes``.
    imports: list[Import] = field(default_factory=list)
    #: The last parts of the modules it imports, and whether it imports modules named at run time
    #: (``model.program.imported_modules``): which files may run in one process with it.
    modules: tuple[str, ...] = ()
    dynamic: tuple[str, ...] = ()  # packages it may import from at run time ("": any)
    seeds: list[int] = field(default_factory=list)  # literal seeds passed to seed_everything
    #: A Trainer(use_distributed_sampler=False) in this file (1.x: replace_sampler_ddp=False), as a
    #: keyword of any call (``dict(...)``, ``partial(Trainer, ...)``) or a key of a dict literal.
    sampler_off: bool = False
    #: A Trainer's sampler switch the file names with what is not a literal True (a name, a config's
    #: entry, an argparse option or a string key of that name): it may be off.
    sampler_unknown: bool = False
    #: The file's text names a way to bring in code from outside the program (``sys.path``,
    #: ``run_path``...): ``model.outside_code`` reads it when a proof asks.
    may_reach_outside: bool = False
    #: A Trainer whose arguments the file takes from outside its text (``Trainer(**config)``,
    #: LightningCLI, hydra, ``from_argparse_args``): the command line may turn the sampler off.
    sampler_outside: bool = False
    #: The file names ``val_check_interval`` with what is not a number (a ``timedelta``, a
    #: ``"DD:HH:MM:SS"`` string, a dict, a name, an argparse option): validation may run by the clock.
    validation_clock: bool = False
    #: A Trainer whose every argument the command line may set (LightningCLI, hydra), not only the
    #: options the program's text defines.
    command_line: bool = False
    pin: tuple[str, LightningVersion | None] | None = None  # (path, the Lightning version it runs with) for finder users
    folder: str = ""  # where the file lives (absolute)
    lightning: bool = False  # the file mentions Lightning
    default_devices: list[DeviceSwitch] = field(default_factory=list)
    #: Its ``default_devices`` were left to be read from ``path`` when a rule asks
    #: (``file_facts(..., defer=True)``): they needed a parse of their own.
    switches_deferred: bool = False
    #: The PROJECT_HAZARDS the file names, each with the line of its first mention; None where left
    #: to be read when a rule asks (``file_facts(..., defer=True)``: ten needles through every byte
    #: of a big tree).
    hazards: dict[str, int] | None = field(default_factory=dict)
    path: str = ""  # the file's path, as the run named it


@record(frozen=True)
class ProjectFacts:
    monitored: dict[str, tuple[Monitor, ...]] = field(default_factory=dict)
    #: LightningModule subclasses anywhere in the run: class name -> the module keys (the defining
    #: file's stem, a package that re-exports it) by which a file can import one, so
    #: ``from timm.layers import Block`` is not taken for the run's own ``Block`` (``model.classes``).
    lightning_modules: dict[str, frozenset[str]] = field(default_factory=dict)
    seeds: dict[str, frozenset[int]] = field(default_factory=dict)  # folder of a seed_everything call -> seeds
    sampler_off: frozenset[str] = frozenset()  # files with a Trainer(use_distributed_sampler=False)
    pins: dict[str, LightningVersion | None] = field(default_factory=dict)
    uses_lightning: bool = False  # some file of the run mentions Lightning
    #: Monitors of the run whose metric is not a literal (``FileFacts.unknown_monitors``).
    unknown_monitors: tuple[Monitor, ...] = ()
    #: The facts come from the whole project (every file of it was read), not from part of it: one
    #: file named, stdin, an editor buffer, staged files. Where they are partial, what they do not
    #: hold (no monitor names a metric, no file switches the default device to CUDA) is unknown, so
    #: a decision resting on such an absence is never safe (design.md, "Sound by default").
    whole: bool = False
    #: Places anywhere in the run that may make CUDA the default device (DDP002), file by file:
    #: a file's switches, or its path where they are still to be read (``default_devices``).
    switch_parts: tuple[tuple[DeviceSwitch, ...] | str, ...] = ()
    #: Files of the run whose hazards are still to be read (``read_later``), in order.
    hazard_sources: tuple[str, ...] = ()
    #: Files that name a Trainer's sampler switch with what is not a literal (``FileFacts.sampler_unknown``).
    sampler_unknown: frozenset[str] = frozenset()
    #: Files whose Trainer takes its arguments from outside the text (``FileFacts.sampler_outside``).
    sampler_outside: frozenset[str] = frozenset()
    #: Files whose text names a way to bring in code from outside the program (``FileFacts.may_reach_outside``).
    outside_candidates: frozenset[str] = frozenset()
    #: Files that may set a time-based ``val_check_interval`` (``FileFacts.validation_clock``).
    validation_clock: frozenset[str] = frozenset()
    #: Files whose Trainer's every argument the command line may set (``FileFacts.command_line``).
    command_line: frozenset[str] = frozenset()
    #: Every kind of ``model.classes.KINDS`` (LightningModules, DataModules, Callbacks, Metrics...).
    kinds: dict[str, Kinds] = field(default_factory=dict)
    #: What each file with a monitor imports (``from X import Y``): the modules its callbacks may watch.
    monitor_imports: dict[str, tuple[Import, ...]] = field(default_factory=dict)
    #: Every place a PROJECT_HAZARD is named (``path:line``, the file's real path beside it).
    hazard_places: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    #: Per file of the run (real path): its module key, the modules it imports, whether at run time.
    process_files: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    #: The last part of each base class named in the run -> the real paths of the files with a class
    #: deriving from a class of that name (``subclass_place``).
    subclasses: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: What ``read_later`` answered, path by path: each file is read at most once per run.
    _read: dict = field(default_factory=dict, compare=False, repr=False)

    def _later(self, path: str) -> FileFacts | None:
        if path not in self._read:
            self._read[path] = read_later(path)
        return self._read[path]

    @functools.cached_property
    def default_devices(self) -> tuple[DeviceSwitch, ...]:
        """Places anywhere in the run that may make CUDA the default device (DDP002). A file whose
        switches were deferred is read now, by ``read_later``: in a big tree most files that
        hold a ``with`` statement are never asked about (torch: 1,200 parses saved)."""
        found: list[DeviceSwitch] = []
        for part in self.switch_parts:
            if isinstance(part, str):
                read = self._later(part)
                found += read.default_devices if read is not None else _unread_switches(part)
            else:
                found += part
        return tuple(found)

    @functools.cached_property
    def processes(self) -> ProcessGroups:
        """Which files of the run may run in one process (``model.program.ProcessGroups``)."""
        return ProcessGroups(self.process_files)

    @functools.cached_property
    def class_files(self) -> ClassFiles:
        """The classes of the program's other files, by the names a file imports them under
        (``model.class_files``): parsed when a rule asks."""
        from ddpfix.model.class_files import ClassFiles

        return ClassFiles(list(self.process_files), self.may_run_with)

    def _place(self, path: str) -> tuple[str, str | None]:
        """(program root, process group) of a file, kept per path: the group is None for a file the
        run did not read (it may run with anything of its program)."""
        key = ("place", path)
        if key not in self._read:
            real = os.path.realpath(path)
            self._read[key] = (program_root(path), self.processes.group(real))
        return self._read[key]

    def _partial(self, path: str | None) -> str | None:
        """Why the facts may not hold all the code that runs with ``path`` (None: they do): the run
        did not read the whole project, or a file that may run with it imports or runs code from
        folders outside the program (``_reaches_outside``)."""
        if not self.whole:
            return "the run did not read the whole project"
        return self._reaches_outside(path)

    def _reaches_outside(self, path: str | None) -> str | None:
        """Where code that may run with ``path`` (any file of the run where None) may import or run
        code from folders outside its program, which no fact covers (``model.outside_code``): a
        changed ``sys.path``, a file run or loaded by its path, ``PYTHONPATH`` set by a launcher of
        the program (review helper-44, c03/c11/c12/c16/c17): ``file:line: what``."""
        from ddpfix.model.outside_code import reach_in_file, reach_in_launcher  # asked by the proofs only

        key = ("outside", None if path is None else self._place(path))
        if key not in self._read:
            found = None
            here = None if path is None else program_root(path)
            for other in sorted(self.outside_candidates):
                # In the process: any way in. Elsewhere in the program: a ``PYTHONPATH`` it gives
                # the processes it starts (a Python launcher, as a shell script would).
                joined = path is None or self.may_run_with(path, other)
                if not joined and program_root(other) != here:
                    continue
                key_of_file = ("reach", other, not joined)
                if key_of_file not in self._read:  # each file read once, whichever group asks
                    data = _code_bytes(other)
                    self._read[key_of_file] = None if data is None else reach_in_file(
                        other, data, program_root(other), launch_only=not joined,
                        named_elsewhere=lambda name, other=other: self._named_in_another_file(name, other))
                reach = self._read[key_of_file]
                if reach is not None:
                    found = f"{reach[1]} ({os.path.relpath(other)}:{reach[0]}) may bring in code the run does not read"
                    break
            roots = [] if found is not None else sorted(
                {program_root(path)} if path is not None else {program_root(p) for p in self.process_files})
            for root in roots:
                launchers = (*_launch_scripts(root, b"pythonpath"),
                             *((p, d) for p, d in config_files(root) if p is not None and b"PYTHONPATH" in d))
                for launcher, data in launchers:
                    reach = reach_in_launcher(launcher, data, root)
                    if reach is not None:
                        found = f"{reach[1]} ({os.path.relpath(launcher)}:{reach[0]}) may bring in code the run does not read"
                        break
                if found is not None:
                    break
            self._read[key] = found
        return self._read[key]

    def may_run_with(self, path: str, other: str) -> bool:
        """The file at ``other`` may run in one process with the file at ``path``: joined by imports
        (within a program, or across programs of the run), or of the same program and one of them
        not read (unknown)."""
        root, group = self._place(path)
        other_root, other_group = self._place(other)
        if group is not None and group == other_group:
            return True  # joined by imports, across programs too (a package of the run installed beside)
        return root == other_root and (group is None or other_group is None)

    def default_devices_for(self, path: str) -> tuple[DeviceSwitch, ...]:
        """``default_devices`` that may run in one process with ``path``'s code (its program, joined by
        imports: an unrelated script's switch is not this one's). Kept per process group."""
        key = ("switches", self._place(path))
        if key not in self._read:
            found = [switch for switch in self.default_devices if self.may_run_with(path, switch.path)]
            # A loader of what configuration files name (hydra's ``call``/``instantiate``, LightningCLI)
            # runs a ``_target_: torch.set_default_device`` of its program's YAML or JSON too (review
            # helper-42, g02).
            loaders = [loader for loader in self.processes.loaders if self.may_run_with(path, loader)]
            for root in dict.fromkeys(root for loader in loaders for root in config_roots(loader)):
                found += config_switches(root)
            # Hydra also reads configurations from folders its command line names (``--config-dir``,
            # ``hydra.searchpath``): what they call is not read (review helper-44, c13/c20).
            for loader in loaders:
                if self._names_in(loader) is not None and _HYDRA_CALLS.search(self._read[("bytes", loader)]):
                    found.append(DeviceSwitch(loader, 0, f"a configuration that {os.path.relpath(loader)} may read "
                                              "through hydra from a folder its command line names (`--config-dir`, "
                                              "`hydra.searchpath`)", False, False))
                    break
            outside = self._reaches_outside(path)
            if outside is not None:
                found.append(DeviceSwitch(path, 0, f"code from outside the program ({outside})", False, False))
            self._read[key] = tuple(found)
        return self._read[key]

    def hazard(self, name: str, path: str | None = None, excused: Callable[[str], bool] | None = None) -> str | None:
        """Why a fix resting on the absence of hazard ``name`` from the project is not proven: the
        facts are partial, or a file of the run names it (one that may run in one process with
        ``path``, where given); None where it is proven absent. ``excused(real_path)``: every
        mention in that file is known to be harmless (read by the caller), or None."""
        if (partial := self._partial(path)) is not None:
            return f"{partial}, so {name} elsewhere cannot be ruled out"
        for place, real in self.hazard_places.get(name, ()):
            if (path is None or self.may_run_with(path, real)) and not (excused is not None and excused(real)):
                return f"{place} names {name}"
        # A loader of classes named in configuration files (LightningCLI's class_path, hydra's
        # _target_) runs what the program's YAML and JSON files name.
        read_roots: set[str] = set()
        for loader in self.processes.loaders:
            if path is None or self.may_run_with(path, loader):
                for root in set(config_roots(loader)) - read_roots:
                    read_roots.add(root)
                    found = config_hazards(root).get(name)
                    if found is not None:
                        return f"{found} names {name} (a configuration file: {os.path.relpath(loader)} loads what they name)"
        for source in self.hazard_sources:  # read now: most runs of a big tree never ask
            if path is not None and not self.may_run_with(path, source):
                continue  # a file that never runs with this one, as for the files read at once
            read = self._later(source)
            if read is None:
                return f"{source} could not be read again"
            if read.hazards is None:
                return f"{source} may name {name} (not read)"
            if name in read.hazards and not (excused is not None and excused(os.path.realpath(source))):
                return f"{source}:{read.hazards[name]} names {name}"
        return None

    def of_kind(self, kind: str, path: str | None = None) -> dict[str, frozenset[str]]:
        """The project's classes of ``kind`` (``model.classes.KINDS``) -> the module keys a file can
        import one by; for the file at ``path``, less the names it imports by a relative import from
        a file whose class of that name is not of the kind."""
        found = self.kinds.get(kind)
        if found is None:
            return {} if kind != "LightningModule" else dict(self.lightning_modules)
        shadowed = found.shadowed.get(os.path.realpath(path), frozenset()) if path is not None else frozenset()
        if not shadowed:
            return found.reach
        return {name: keys for name, keys in found.reach.items() if name not in shadowed}

    def for_program(self, path: str) -> ProjectFacts:
        """The facts with only the monitors that may watch ``path``'s code: those of its program
        (``model.program.program_root``: a run that names two projects keeps each one's callbacks)
        whose file may run in one process with it (``may_run_with``: an unrelated script of the same
        folder trains another model). Kept per process group."""
        key = ("program", self._place(path))
        if key not in self._read:
            def mine(monitor: Monitor) -> bool:
                return self.may_run_with(path, monitor.path)
            monitored = {name: kept for name, found in self.monitored.items() if (kept := tuple(filter(mine, found)))}
            # A callback a configuration builds (hydra's ``_target_``, LightningCLI's ``class_path``)
            # monitors what its ``monitor:`` names (review helper-45, c12).
            for monitor in config_monitors(program_root(path)):
                monitored[monitor.metric] = (*monitored.get(monitor.metric, ()), monitor)
            # With several loaders Lightning suffixes each key: ``val_loss/dataloader_idx_0`` is the
            # ``val_loss`` a step logs (review helper-45, c14).
            for name in list(monitored):
                logged = _DATALOADER_SUFFIX.sub("", name)
                if logged != name:
                    monitored[logged] = (*monitored.get(logged, ()), *monitored[name])
            unknown = tuple(filter(mine, self.unknown_monitors))
            same = len(unknown) == len(self.unknown_monitors) and monitored.keys() == self.monitored.keys() and all(
                len(monitored[name]) == len(found) for name, found in self.monitored.items()) and all(
                len(found) == len(self.monitored[name]) for name, found in monitored.items())
            self._read[key] = self if same else dataclasses.replace(self, monitored=monitored, unknown_monitors=unknown)
        return self._read[key]

    def ties(self, monitor: Monitor, path: str, class_names: Iterable[str]) -> bool:
        """The monitor's file is known to drive the module defined at ``path`` (one of
        ``class_names``): it is that file, or it imports that module or one of those classes."""
        if os.path.realpath(monitor.path) == os.path.realpath(path):
            return True
        key = module_key(path)
        names = set(class_names)
        return any(module.rsplit(".", 1)[-1] == key or name in names or local in names
                   for module, name, local in self.monitor_imports.get(monitor.path, ()))

    def sampler_off_for(self, path: str) -> bool:
        """A Trainer that may run with ``path``'s code turns Lightning's distributed sampler off: one
        in a file that may run in one process with it (``may_run_with``: the training script usually
        lives in another folder than the data module it drives, ``scripts/train.py`` importing
        ``src/data/``), or the program's config. An unrelated script of the same program that turns
        it off for its own loaders says nothing of this file's."""
        return (any(self.may_run_with(path, where) for where in self.sampler_off)
                or config_turns_sampler_off(program_root(path)) is not None)

    def sampler_unknown_for(self, path: str) -> str | None:
        """Where a file that may run with ``path``'s code names the sampler switch with what is not a
        literal True (``use_distributed_sampler=cfg.x``, ``add_argument("--use_distributed_sampler")``):
        the file; None where none does."""
        return next((where for where in sorted(self.sampler_unknown) if self.may_run_with(path, where)), None)

    def sampler_outside_for(self, path: str) -> str | None:
        """Where a Trainer that may run with ``path``'s code takes its arguments from outside the
        program's text (``Trainer(**config)``, LightningCLI, hydra): the file; None where none does."""
        return next((where for where in sorted(self.sampler_outside) if self.may_run_with(path, where)), None)

    def several_nodes_for(self, path: str) -> str | None:
        """Where the run of ``path``'s code may span several nodes (a rank counted within a node
        then holds on each node's first process; review helper-45, c01/c02): a file that may run with
        it names ``num_nodes`` with what is not a literal 1, a configuration or launch script sets
        several nodes (``num_nodes: 2``, ``--nnodes``, ``#SBATCH --nodes``), or the command line may
        set any Trainer argument. None where one node is proven."""
        if (partial := self._partial(path)) is not None:
            return f"{partial}, so a Trainer on several nodes elsewhere cannot be ruled out"
        where = self.text_in_program(_SEVERAL_NODES, path)
        if where is not None:
            return f"{where} names `num_nodes` with what may be more than 1"
        where = _setting_in_files(program_root(path), b"node", _CONFIG_NODES, _SCRIPT_NODES)
        if where is not None:
            return f"{where} may run on several nodes"
        where = self.sampler_outside_for(path)
        if where is not None:
            return f"{os.path.relpath(where)} takes the Trainer's arguments from outside the program (`num_nodes` too)"
        return None

    def validation_clock_for(self, path: str) -> str | None:
        """Where validation during ``fit`` may run by the clock for ``path``'s code: a file that may
        run with it names ``val_check_interval`` with what is not a number, a configuration or launch
        script of the program sets it so, or the command line may set any Trainer argument (LightningCLI,
        hydra). Lightning 2.6 added durations: each rank then validates when its own clock
        says, at a step of its own; nothing syncs that decision. None where none may."""
        if (partial := self._partial(path)) is not None:
            return f"{partial}, so a time-based `val_check_interval` elsewhere cannot be ruled out"
        where = next((where for where in sorted(self.validation_clock) if self.may_run_with(path, where)), None)
        if where is not None:
            return f"{where} sets `val_check_interval` to what may be a duration"
        where = config_sets_a_clock(program_root(path))
        if where is not None:
            return f"{where} sets `val_check_interval` to what may be a duration"
        # ``Trainer(**cfg)`` takes what the program's text, configurations or launch scripts hold (read
        # above): argparse refuses options the program does not define. LightningCLI and hydra let
        # the command line set any argument.
        where = next((where for where in sorted(self.command_line) if self.may_run_with(path, where)), None)
        if where is not None:
            return f"the command line of {where} may set any Trainer argument, and `val_check_interval` to a duration"
        return None

    def subclass_place(self, name: str, path: str) -> str | None:
        """Why a method of the class ``name`` defined in ``path`` may not be the one that runs: a
        class that may run with it derives from a class of that name (by the last part of the base's
        name: over-approximated), and may define the method again; or the facts are partial. None
        where no file of the project can."""
        if (partial := self._partial(path)) is not None:
            return f"{partial}, so a subclass elsewhere cannot be ruled out"
        for real in self.subclasses.get(name, ()):
            if self.may_run_with(path, real):
                return f"a class in {os.path.relpath(real, program_root(path))} derives from `{name}`"
        return None

    def named_elsewhere(self, name: str, path: str) -> str | None:
        """Where another file that may run with ``path`` names ``name`` as an attribute
        (``module.name``) or a string (``getattr(module, "name")``): ``file:line``, the first such
        place (its code may call a method of that name of ``path``'s objects); a reason where the
        facts are partial; None where no such file does. Each file is read once per run, and only
        when a rule asks (a helper whose callers a proof follows)."""
        if (partial := self._partial(path)) is not None:
            return f"{partial}, so another file may call it"
        real = os.path.realpath(path)
        root = program_root(path)
        index = self._index()
        for other in self._candidates(index.names.get(name.encode(), ()), index.dynamic, index.unread):
            # A file of another project of the run may import this one (a monorepo's shared
            # callbacks): only within one project do the imports tell which files run together.
            if other == real or (self._place(other)[0] == root and not self.may_run_with(path, other)):
                continue
            names = self._names_in(other)
            if names is None:
                return f"{os.path.relpath(other, root)} could not be read"
            data = self._read[("bytes", other)]
            if name.encode() in names:
                found = _name_use(name).search(data)
                line = data.count(b"\n", 0, found.start()) + 1 if found else 1
                return f"{os.path.relpath(other, root)}:{line}"
            key = ("dynamic", other)
            if key not in self._read:
                found = _DYNAMIC_NAME.search(data)
                self._read[key] = None if found is None else data.count(b"\n", 0, found.start()) + 1
                tree = self._tree_in(other, data) if found is not None else None
                if tree is not None:  # the text may be a name of argparse's namespace (``vars(args)``)
                    node = dynamic_access(tree)
                    self._read[key] = None if node is None else node.lineno
            if self._read[key] is not None:
                return f"{os.path.relpath(other, root)}:{self._read[key]} reaches attributes by a name made at run time"
        for config, data in config_files(root):
            if config is None:
                return "the project has more configuration files than are read"
            found = re.search(rb"\b" + re.escape(name.encode()) + rb"\b", data)
            if found is not None:
                line = data.count(b"\n", 0, found.start()) + 1
                return f"{os.path.relpath(config, root)}:{line}"
        return None

    def _named_in_another_file(self, name: str, path: str) -> bool:
        """A file of the run other than ``path`` names ``name`` (a file that could not be read may)."""
        pattern = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
        real = os.path.realpath(path)
        for other in self.process_files:
            if other != real and (self._names_in(other) is None or pattern.search(self._read[("bytes", other)])):
                return True
        return False

    def _texts_with(self, path: str, itself: bool = True):
        """(real path, its code's bytes) of each file of the run that may run with ``path`` (``path``
        itself too where ``itself``), in the run's order; bytes None for a file that could not be read."""
        real = os.path.realpath(path)
        for other in self._candidates(list(self.process_files)):
            if (other == real and not itself) or not self.may_run_with(path, other):
                continue
            yield other, (None if self._names_in(other) is None else self._read[("bytes", other)])

    def constructions(self, name: str, path: str, tree: ast.Module, cls: ast.ClassDef | None = None):
        """Every call of the program that builds the class ``name`` defined in ``path`` (its tree
        given), as (real path, tree, imports, call), the file's own first; else where the class may
        be built unseen or changed (``model.constructions.class_uses``), as ``file:line``, or why the
        facts cannot tell. A file that may run with ``path`` is read when its text names the class;
        a configuration file that names it (a ``_target_``, a ``class_path``) may build it."""
        from ddpfix.model.constructions import class_uses  # asked by a proof that follows a handed module

        if (partial := self._partial(path)) is not None:
            return f"{partial}, so it may be built elsewhere"
        real, root = os.path.realpath(path), program_root(path)
        loader = next((p for p in self.processes.loaders if self.may_run_with(path, p)), None)
        if loader is not None:
            return f"{os.path.relpath(loader, root)} may build classes named at run time (or unpickle objects)"
        calls, other_use = class_uses(tree, name, cls)
        if other_use is not None:
            return f"{os.path.basename(path)}:{other_use.lineno} names `{name}` otherwise than to build it"
        found = [(real, tree, None, call) for call in calls]
        word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
        # A notebook is no module: only a file that names it (``%run train.ipynb``) runs its classes.
        notebook = os.path.basename(path).encode() if path.endswith(".ipynb") else None
        for other, data in self._texts_with(path, itself=False):
            if data is None:
                return f"{os.path.relpath(other, root)} could not be read"
            if notebook is not None and notebook[:-len(b".ipynb")] not in data:
                continue
            unnamed = _BUILDS_UNNAMED.search(data)
            if unnamed is not None:  # ``type(model)(...)`` builds a class it does not name
                return f"{os.path.relpath(other, root)}:{_line_at(data, unnamed.start())} builds an object's own class"
            match = word.search(data)
            if match is None:
                continue
            parsed = self.class_files.parsed(other)
            if parsed is None:
                return f"{os.path.relpath(other, root)}:{_line_at(data, match.start())} names `{name}`"
            other_tree, imports = parsed
            if self._means_another_class(other, other_tree, name, real, cls):
                continue  # its ``LitClassifier(...)`` builds another class of that name
            calls, other_use = class_uses(other_tree, name, cls)
            if other_use is not None:
                return f"{os.path.relpath(other, root)}:{other_use.lineno} names `{name}` otherwise than to build it"
            found += [(other, other_tree, imports, call) for call in calls]
        for config, data in config_files(root):
            if config is None:
                return "the project has more configuration files than are read"
            match = word.search(data)
            if match is not None:
                return f"{os.path.relpath(config, root)}:{_line_at(data, match.start())} names `{name}`"
        return found

    def part_changed_elsewhere(self, name: str, path: str, leaves: frozenset[str], check=None,
                               plain: frozenset[str] = frozenset()) -> str | None:
        """Where a file that may run with ``path`` (itself included) may change a module through an
        attribute ``name`` of another object than a class's own ``self`` (``lm.model.register_forward_hook(f)``,
        ``freeze(lm.model)``, ``backbone = lm.model``, ``lm.model.fc = m``, ``getattr(lm, "model")``),
        or through every attribute at once (``lm.modules()``, ``vars(lm)``, ``lm.__dict__``, a name
        made at run time): ``file:line``; a reason where the facts are partial; None where none does.
        The text screens: calling it (``lm.model(x)``), one of ``leaves`` on it (``lm.model.eval()``)
        and reading one of its ``plain`` attributes (``cfg.model.config``) pass. Any other use is
        asked of ``check(real path, tree, imports, attribute node)`` (None: it leaves the module as
        built) on the parsed file, where given. ``self.<name>`` counts only outside a class's methods
        (a function's parameter may be called ``self``)."""
        if (partial := self._partial(path)) is not None:
            return f"{partial}, so another file may change it"
        from ddpfix.model.constructions import applies_initialisers_only, in_a_method, names_an_attribute

        root = program_root(path)
        key = ("part uses", name, self._place(path))
        if key not in self._read:
            self._read[key] = self._part_uses(name, path, leaves, plain)
        for other, line, kind in self._read[key]:
            place = f"{os.path.relpath(other, root)}" + (f":{line}" if line is not None else " could not be read")
            parsed = self.class_files.parsed(other) if check is not None and line is not None else None
            if parsed is None or kind == "every":
                return place
            tree, imports = parsed
            if kind == "dynamic":
                # (an instance's own namespace stored into by known names other than ``name``, where
                # no code may write a frame's namespace that ``locals()`` would then give)
                found = dynamic_access(tree, name if self.text_in_program(FRAME_WRITE_TEXT, path) is None else None)
                if found is not None:
                    return f"{os.path.relpath(other, root)}:{found.lineno}"
                continue
            if kind == "string":
                found = names_an_attribute(tree, name)
                if found is not None:
                    return f"{os.path.relpath(other, root)}:{found.lineno}"
                continue
            if kind == "apply":
                found = next((n for n in every_node(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                              and n.func.attr == "apply" and not (isinstance(n.func.value, ast.Name) and n.func.value.id == "self"
                                                                  and in_a_method(tree, n))
                              and (self.defines_a_fill(path) is not None
                                   or not applies_initialisers_only(tree, n, self._stored_anywhere(path)))), None)
                if found is not None:
                    return f"{os.path.relpath(other, root)}:{found.lineno}"
                continue
            nodes = [n for n in every_node(tree) if isinstance(n, ast.Attribute) and n.attr == name
                     and n.end_lineno >= line >= n.value.end_lineno
                     and not (isinstance(n.value, ast.Name) and n.value.id == "self" and in_a_method(tree, n))]
            if any(check(other, tree, imports, n) is not None for n in nodes):
                return place
        return None

    def _stored_anywhere(self, path: str):
        """``stored_elsewhere`` for ``path``'s program, as a function of the name."""
        return lambda name: self.stored_elsewhere(name, path)

    def _part_uses(self, name: str, path: str, leaves: frozenset[str], plain: frozenset[str]):
        """(file, line, kind) of each place ``part_changed_elsewhere`` reads further, in the files
        that may run with ``path``: ``"use"``, an attribute ``name`` used otherwise than the text
        clears; ``"string"``, the name written as a string (``getattr(x, "model")``?); ``"dynamic"``,
        an attribute reached by a name made at run time or a namespace (``getattr(x, n)``,
        ``x.__dict__``, ``vars(x)``)?; ``"every"``, code that reaches every part of a module or hooks
        every module; (file, None, "every") for a file that could not be read. Kept per process
        group: every class that holds a ``.name`` asks."""
        word = re.escape(name.encode())
        use = re.compile(rb"\.[ \t]*" + word + rb"\b(?P<after>(?:[ \t]*\.[ \t]*(?P<attr>\w+))*[ \t]*"
                         rb"(?P<next>\(|\[|=(?!=)|[-+*/%&|^@]=|[),\]}:\r\n#]|$))", re.M)
        string = re.compile(rb"['\"]" + word + rb"\\?['\"]")
        found: list[tuple[str, int | None, str]] = []
        for other, data in self._texts_with(path):
            if data is None:
                found.append((other, None, "every"))
                continue
            if b"torch" in data or b"lightning" in data:
                reaching = _REACHES_EVERY_PART.search(data)
                if reaching is not None:  # ``lm.modules()``, ``lm.apply(f)``, a hook on every module
                    found.append((other, _line_at(data, reaching.start()), "every"))
                    continue
                dynamic = _DYNAMIC_NAME.search(data) or re.search(rb"__dict__", data)
                if dynamic is not None:
                    found.append((other, _line_at(data, dynamic.start()), "dynamic"))
                applied = _APPLY.search(data)
                if applied is not None:
                    found.append((other, _line_at(data, applied.start()), "apply"))
            if name.encode() not in data:
                continue
            quoted = string.search(data)
            if quoted is not None:
                found.append((other, _line_at(data, quoted.start()), "string"))
            # ``self.model`` is a class's own attribute only in its methods; a function of the file
            # whose parameter is called ``self`` is read like any other.
            free_self = _FREE_SELF.search(data) is not None
            for match in use.finditer(data):
                if not free_self and data[max(0, match.start() - 4):match.start()] == b"self" and (
                        match.start() < 5 or not (data[match.start() - 5:match.start() - 4].isalnum()
                                                  or data[match.start() - 5:match.start() - 4] in b"_.")):
                    continue
                attr, after = match.group("attr"), match.group("next")
                if after == b"(" and (attr is None or attr.decode() in leaves) and not _CHAINED_CALL.match(data, match.end()):
                    continue  # called, or a method that leaves its code (its result not used further)
                if attr is not None and attr.decode() in plain and after not in (b"(", b"[", b"=") \
                        and not after.endswith(b"="):
                    continue  # a plain attribute of it read (``lm.model.config``)
                found.append((other, _line_at(data, match.start()), "use"))
        return found

    def text_in_program(self, pattern: re.Pattern[bytes], path: str, itself: bool = True,
                        outside: bool = True, unless: Callable[[str, int], bool] | None = None,
                        needles: tuple[bytes, ...] = ()) -> str | None:
        """The first ``file:line`` where a file that may run with ``path`` (itself included, unless
        ``itself`` is False) matches ``pattern`` (bytes); a reason where the facts are partial; None
        where none does. ``outside``: code brought in from outside the program makes the answer
        partial too (False where the question is about the program's own files alone).
        ``unless(real path, line)``: a match there does not count (a function or a ``partial`` of one,
        whose ``__qualname__`` is part of the key: what else it is given must follow from ``pattern``).
        ``needles``: words one of which every match holds; a file with none is not searched (nor the
        pattern compiled, for a lone file: start-up time)."""
        if (partial := self._partial(path) if outside else None if self.whole else
                "the run did not read the whole project") is not None:
            return f"{partial}"
        root = program_root(path)
        key = ("text", pattern.pattern, self._place(path), None if itself else os.path.realpath(path),
               None if unless is None else getattr(unless, "func", unless).__qualname__)
        if key not in self._read:
            self._read[key] = None
            for other, data in self._texts_with(path, itself=itself):
                if data is None:
                    self._read[key] = f"{os.path.relpath(other, root)} could not be read"
                    break
                if needles and not any(needle in data for needle in needles):
                    continue
                found = next((m for m in pattern.finditer(data)
                              if unless is None or not unless(other, _line_at(data, m.start()))), None)
                if found is not None:
                    self._read[key] = f"{os.path.relpath(other, root)}:{_line_at(data, found.start())}"
                    break
        return self._read[key]

    def notebook_run_as_script(self, path: str) -> str | None:
        """Where the program may run the notebook at ``path`` as a script, outside a kernel (review
        helper-44 c21, helper-45 c06): a ``.py`` twin beside it (``train.ipynb`` and ``train.py``), a
        jupytext pairing in its metadata, or a file of the program (a Makefile, a shell script, a CI
        workflow, a Python script) that exports notebooks to scripts (``nbconvert --to script``,
        ``jupytext --to py``, ``PythonExporter``): ``file:line``, or a reason where the program is not
        all read; None where nothing does."""
        twin = os.path.splitext(path)[0] + ".py"
        if os.path.exists(twin):
            return f"{os.path.relpath(twin)} (its script twin)"
        try:
            with open(path, "rb") as handle:
                own = handle.read(4_000_000)
        except OSError:
            own = b""
        if _JUPYTEXT_PAIRED.search(own):
            return f"{os.path.relpath(path)} (a jupytext pairing with a script)"
        name = os.path.basename(path).encode()
        for found, line, text in _script_exports(program_root(path)):
            if found is None:
                return text
            if _exports_this_notebook(text, 0, name):
                return f"{os.path.relpath(found)}:{line}"
        # (the program's own files export its notebooks: code brought in from elsewhere does not)
        return self.text_in_program(_EXPORTS_TO_SCRIPT, path, itself=False, outside=False)

    def imported_elsewhere(self, path: str) -> str | None:
        """Where another file that may run with ``path`` imports it as a module (by any name it can
        be imported by, or a relative import of its name), or may load it by a name made at run time
        (a loader: ``importlib.import_module(name)``, hydra): ``file:line`` or ``file``; a reason where
        the facts are partial; None where no file does (review helper-45, c15: a module with a
        top-level ``fit`` that a guarded sweep imports is not only run as a script)."""
        if (partial := self._partial(path)) is not None:
            return f"{partial}, so another file may import it"
        from ddpfix.model.program import ANY_MODULE, module_paths

        real, root = os.path.realpath(path), program_root(path)
        names = {".".join(parts) for parts in module_paths(os.path.relpath(real, root))}
        stem = os.path.splitext(os.path.basename(real))[0]
        for other, data in self._texts_with(path, itself=False):
            if data is None:
                return f"{os.path.relpath(other)} could not be read"
            modules, dynamic = imported_modules(data)
            # (over-read: a module of another package ending in the same name counts too)
            if any(m.lstrip(".") in names or m.lstrip(".").split(".")[-1] == stem for m in modules):
                return os.path.relpath(other)
            if ANY_MODULE in dynamic:
                return f"{os.path.relpath(other)} (it loads modules named at run time)"
        return None

    def global_imported_elsewhere(self, name: str, path: str) -> str | None:
        """Where another file that may run with ``path`` may reach the global ``name`` of that
        file (``from train import model``, ``train.model``): a file whose text imports the module
        by its file's name and names ``name``, as ``file:line``; a reason where the facts are
        partial; None where none does. A notebook is never imported."""
        if path.endswith(".ipynb"):
            return None
        if (partial := self._partial(path)) is not None:
            return f"{partial}, so another file may import it"
        root = program_root(path)
        stem = os.path.splitext(os.path.basename(path))[0]
        if stem == "__init__":  # a package's globals: imported by its folder's name
            stem = os.path.basename(os.path.dirname(path))
        stem = re.escape(stem.encode()) + rb"|sys\.modules"  # ``sys.modules["__main__"]`` names no file
        imports = re.compile(rb"\b(?:import|from)\b[^\n]*\b(?:" + stem + rb")\b|sys\.modules")
        word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
        for other, data in self._texts_with(path, itself=False):
            if data is None:
                return f"{os.path.relpath(other, root)} could not be read"
            found = imports.search(data)
            if found is not None and word.search(data):
                return f"{os.path.relpath(other, root)}:{_line_at(data, found.start())}"
        return None

    def stored_elsewhere(self, name: str, path: str, tree: ast.Module | None = None) -> str | None:
        """Where a file that may run with ``path`` (itself included, through ``tree``) stores an
        attribute ``name`` on anything (``Head.forward = f``, ``setattr(obj, "forward", f)``):
        ``file:line``; a reason where the facts are partial; None where none does."""
        if (partial := self._partial(path)) is not None:
            return f"{partial}, so another file may replace it"
        if tree is not None:
            stores = tree.__dict__.get("_ddpfix_attribute_stores")
            if stores is None:
                stores = tree._ddpfix_attribute_stores = attribute_stores(tree)
            line = stores.get(name, stores.get("*"))
            if line is not None:
                return f"{os.path.basename(path)}:{line}"
        real, root = os.path.realpath(path), program_root(path)
        key = ("stored", name, root, self._place(path))  # read once per name for the files that run together
        if key not in self._read:
            self._read[key] = self._stores_in_other_files(name, root, path)
        return next((found for other, found in self._read[key] if other != real), None)

    def _stores_in_other_files(self, name: str, root: str, path: str) -> list[tuple[str, str]]:
        """(file, where) of the first two files that may run with ``path`` and store ``name`` (or
        could not be read): the first of them that is not the asking file is the answer."""
        index = self._index()
        found_in: list[tuple[str, str]] = []
        for other in self._candidates(index.stored.get(name.encode(), ()), index.setattr, index.unread):
            if len(found_in) == 2:
                break
            if self._place(other)[0] == root and not self.may_run_with(path, other):
                continue
            if self._names_in(other) is None:
                found_in.append((other, f"{os.path.relpath(other, root)} could not be read"))
                continue
            data = self._read[("bytes", other)]
            # A file read once for its stores answers every name asked (a regex per name and file
            # cost more than the parse); its text decides where it is not Python as it stands.
            stores = self._stores_in(other, data)
            if stores is None:
                # ``x.name = ...`` on anything but a class's own ``self`` (another class's attribute).
                found = re.search(rb"(?<!\bself)\.[ \t]*" + re.escape(name.encode()) + rb"[ \t]*=(?!=)|setattr|__dict__|\bvars\b"
                                  rb"|sys\.modules\b|\bf_(?:globals|locals)\b|__import__|meta_path|path_hooks", data)
                line = None if found is None else data.count(b"\n", 0, found.start()) + 1
            else:
                line = stores.get(name, stores.get("*"))
            if line is not None:
                found_in.append((other, f"{os.path.relpath(other, root)}:{line}"))
        return found_in

    def defines_elsewhere(self, name: str | Iterable[str], path: str, lines: tuple[int, int],
                          unless: Callable[[str, ast.Module, ast.FunctionDef | ast.AsyncFunctionDef], bool] | None = None,
                          assigned: bool = False) -> str | None:
        """Where a file that may run with ``path`` (itself included, outside ``lines``: the asking
        class) defines a function or method ``name`` (a Callback's ``on_validation_batch_end``), or
        one of several names: ``file:line``; a reason where the facts are partial; None where none
        does. ``assigned``: an indented assignment of the name counts too (a class's
        ``transfer_batch_to_device = move_inputs``). ``unless(path, tree, definition)``: a ``def`` it
        proves harmless does not count (the file is then parsed, once per run; an assignment in a
        class's body always counts)."""
        if (partial := self._partial(path)) is not None:
            return f"a class the run does not read ({partial})"  # read as ``{place} defines ...``
        real, root = os.path.realpath(path), program_root(path)
        names = [name] if isinstance(name, str) else sorted(name)
        alternatives = b"|".join(re.escape(n.encode()) for n in names)
        # (also a tuple of targets, ``a, transfer_batch_to_device = ...``, and an indented import of it
        # under that name: review helper-48, c05/c05b)
        assignment = (rb"|^[ \t]+(?:[\w \t,()\[\]*]*[ \t,(\[*])?(?:" + alternatives + rb")\b[\w \t,()\[\]*]*(?::[^=\n]*)?=(?!=)"
                      rb"|^[ \t]+(?:from[ \t]|import[ \t])[^\n]*\bas[ \t]+(?:" + alternatives + rb")\b") if assigned else b""
        pattern = rb"^[ \t]*(?:async[ \t]+)?def[ \t]+(?:" + alternatives + rb")[ \t]*\(" + assignment
        needles = [n.encode() for n in names]
        for other in self.process_files:
            if other != real and not self.may_run_with(path, other):
                continue
            if self._names_in(other) is None:
                return f"{os.path.relpath(other, root)} could not be read"
            data = self._read[("bytes", other)]
            if not any(needle in data for needle in needles):
                continue  # (the pattern is compiled only for a file that names one: start-up time)
            for found in re.finditer(pattern, data, re.M):
                line = data.count(b"\n", 0, found.start()) + 1
                if other != real or not lines[0] <= line <= lines[1]:
                    place = f"{os.path.relpath(other, root)}:{line}"
                    if unless is not None:
                        place = self._unproven_definition(other, data, set(names), unless,
                                                          lines if other == real else None, place)
                    if place is not None:
                        return place
                    break  # every definition of the file is proven harmless
        return None

    def _unproven_definition(self, path: str, data: bytes, names: set[str], unless, lines: tuple[int, int] | None,
                             place: str) -> str | None:
        """The place of the first definition of ``names`` in the file (outside ``lines``) that
        ``unless`` does not prove harmless, or ``place`` where the file does not parse (a
        notebook's lines are its text's: ``place`` then stands for any failure); None where every
        one is proven."""
        tree = self._tree_in(path, data)
        if tree is None:
            return place
        for node in walk(tree):
            if lines is not None and lines[0] <= getattr(node, "lineno", 0) <= lines[1]:
                continue
            unproven = False
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                unproven = node.name in names and not unless(path, tree, node)
            elif isinstance(node, ast.ClassDef):
                from ddpfix.analysis.lightning import names_bound_by  # (asked of a class's body only)

                # ``transfer_batch_to_device = move_inputs`` in a class's body binds the method too, as
                # does an unpacking or an import under that name.
                unproven = any(not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
                               and names_bound_by(statement) & names for statement in node.body)
            if unproven:
                return place if path.endswith(".ipynb") else f"{place.rsplit(':', 1)[0]}:{node.lineno}"
        return None

    def _means_another_class(self, other: str, tree: ast.Module, name: str, real: str, cls: ast.ClassDef | None) -> bool:
        """Every ``name`` the file at ``other`` reads means another class of that name than the asked
        one (``cls`` of ``real``): the file binds the name once, by a class of its own or by an
        import of another file's class (``from project.lit_mnist import LitClassifier`` beside
        ``lit_image_classifier.py``'s), and reaches no class of that name otherwise (``lit.Model``,
        ``import Model as LitModel``, a string of the name: review helper-51, b01/b02)."""
        from ddpfix.model.class_files import bound_once

        if cls is None or not bound_once(tree, name):
            return False
        own = [s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == name]
        if not own:
            meant = self.class_files.class_of(other, tree, name)
            if meant is None or (os.path.realpath(meant[0]) == real and meant[3].lineno == cls.lineno):
                return False
        for node in every_node(tree):
            if isinstance(node, ast.Attribute) and node.attr == name or isinstance(node, ast.alias) and (
                    node.name.rsplit(".", 1)[-1] == name and node.asname not in (None, name)) \
                    or isinstance(node, ast.Constant) and node.value == name:
                return False
        return True

    def mixed_into(self, name: str, path: str) -> str | None:
        """Where a class of the program derives from the class ``name`` (of ``path``), directly or
        through subclasses, together with another base (``class Geo(Data, OtherModule)``): Python's
        method order may then put that other base's methods between ``name``'s and those of its
        own bases, so ``super()`` in ``name`` may reach them. ``file``; a reason where the facts
        are partial; None where no class does. Read by name, through the imports' aliases."""
        if (partial := self._partial(path)) is not None:
            return f"{partial}, so a class elsewhere may derive from it"
        root = program_root(path)
        names, todo = {name}, [name]
        while todo:
            current = todo.pop()
            for other in sorted(set(self.subclasses.get(current, ()))):
                if not self.may_run_with(path, other):
                    continue
                if self._names_in(other) is None:
                    return f"{os.path.relpath(other, root)} could not be read"
                for derived, bases in class_bases(self._read[("bytes", other)]):
                    if current not in bases:
                        continue
                    if len(bases) > 1:
                        return f"{os.path.relpath(other, root)}: `{derived}` derives from `{current}` and another base"
                    if derived not in names:
                        names.add(derived)
                        todo.append(derived)
        return None

    def word_elsewhere(self, word: str, path: str) -> str | None:
        """Where another file that may run with ``path`` names ``word`` at all (``from train import
        run``, ``train.run``, ``"run"``): ``file:line``; a reason where the facts are partial;
        None where none does."""
        if (partial := self._partial(path)) is not None:
            return f"{partial}"
        root = program_root(path)
        pattern = re.compile(rb"\b" + re.escape(word.encode()) + rb"\b")
        for other, data in self._texts_with(path, itself=False):
            if data is None:
                return f"{os.path.relpath(other, root)} could not be read"
            found = pattern.search(data)
            if found is not None:
                return f"{os.path.relpath(other, root)}:{_line_at(data, found.start())}"
        return None

    def unread_data(self, path: str, tree: ast.Module | None = None, module: ast.ClassDef | None = None) -> str | None:
        """Why data that a file which may run with ``path`` hands Lightning may be a data module
        whose hooks are not read (``model.handed_data``): ``file:line: why``; a reason where the
        facts are partial; None where every piece is known. ``tree``: ``path``'s own, as the rule
        read it (a notebook's magics masked). ``module``: ``path``'s class whose batches are asked
        about (a call that provably trains another model is left out). Kept per process group and
        class."""
        if (partial := self._partial(path)) is not None:
            return f"{partial}, so data handed to Lightning elsewhere is not read"
        key = ("handed data", self._place(path), None if module is None else (module.name, module.lineno))
        if key not in self._read:
            from ddpfix.model.handed_data import unread_data  # asked by DDP004's proof only
            from ddpfix.imports import ImportTable

            found = None
            root = program_root(path)
            asking = None if module is None else (os.path.realpath(path), module.name, _logging_methods(module))
            if asking is not None and asking[2]:
                # A logging method read off anything but ``self`` (``test_protocol = Student.test_step``)
                # may run on another model with its batches (review helper-48, c04): no pairing.
                names = b"|".join(re.escape(n.encode()) for n in sorted(asking[2]))
                escaping = re.compile(rb"(?<!\bself)(?<!\bsuper\(\))\.[ \t]*(?:" + names + rb")\b"
                                      rb"|['\"](?:" + names + rb")['\"]")  # (``getattr(Student, "test_step")``: c19)
                if self.text_in_program(escaping, path, unless=functools.partial(_no_method_read_at, self, asking[2])) is not None:
                    asking = None
                # A method reached by a name made at run time (``getattr(Model, f"{stage}_step")``,
                # ``vars(Model)[name]``), anywhere: in a helper, a decorator, a table, a callback
                # (review helper-51 e01/e02, helper-52 f3a-f3f).
                elif self.text_in_program(_DYNAMIC_REACH, path, unless=functools.partial(_no_dynamic_reach_at, self)) is not None:
                    asking = None
            # A hand-off is spelled ``<x>.fit``, or made by ``getattr`` in a file that names a Trainer.
            mentions = re.compile(rb"\.[ \t]*(?:fit|validate|test|predict)\b|LightningCLI")
            dynamic = re.compile(rb"\bgetattr\b")
            trainer = re.compile(rb"[Tt]rainer")
            for other, data in self._texts_with(path):
                where = os.path.relpath(other, root)
                if data is None:
                    found = f"{where} could not be read"
                    break
                if mentions.search(data) is None and not (dynamic.search(data) and trainer.search(data)):
                    continue
                parsed = self.class_files.parsed(other)
                if parsed is None and tree is not None and other == os.path.realpath(path):
                    parsed = (tree, ImportTable.from_tree(tree))
                if parsed is None:
                    found = f"{where} could not be parsed"
                    break
                found = unread_data(other, parsed[0], parsed[1], self.class_files, where,
                                    lambda name, other=other: self.word_elsewhere(name, other),
                                    lambda name, other=other, tree=parsed[0]: self.stored_elsewhere(name, other, tree),
                                    asking, frames_kept=self.text_in_program(FRAME_WRITE_TEXT, path) is None)
                if found is not None:
                    break
            self._read[key] = found
        return self._read[key]

    def defines_a_fill(self, path: str) -> str | None:
        """Where a file that may run with ``path`` defines a function or method named like a tensor
        fill (``model.constructions.TENSOR_FILLS``: ``def zero_(self)``): ``nn.init.zeros_(x)`` or
        ``x.data.zero_()`` may then run it; a reason where the facts are partial; None where none
        does. Kept per process group."""
        from ddpfix.model.constructions import TENSOR_FILLS

        key = ("fills", self._place(path))
        if key not in self._read:
            self._read[key] = self.defines_elsewhere(TENSOR_FILLS, path, (0, 0))
        return self._read[key]

    def _stores_in(self, path: str, data: bytes) -> dict[str, int] | None:
        """``attribute_stores`` of another file of the run, when a question first finds a store in
        its text; None where it does not parse."""
        key = ("stores", path)
        if key not in self._read:
            tree = self._tree_in(path, data)
            self._read[key] = None if tree is None else attribute_stores(tree)
        return self._read[key]

    def _tree_in(self, path: str, data: bytes) -> ast.Module | None:
        """Another file of the run parsed, once per run, when a question needs more than its text;
        None where it does not parse (a notebook's magics: the text then decides)."""
        key = ("tree", path)
        if key not in self._read:
            source = data
            if path.endswith(".ipynb"):
                from ddpfix.ipython_syntax import notebook_module  # loaded for notebooks only

                source = notebook_module(path)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self._read[key] = None if source is None else ast.parse(source)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._read[key] = None
        return self._read[key]

    def _index(self) -> _NameIndex:
        """Which files of the run name each word, attribute or string, read once per run when a
        proof first asks (each question then reads only the files that name what it asks about)."""
        key = ("index",)
        if key not in self._read:
            index = _NameIndex({}, {}, [], [], [], {})
            for position, path in enumerate(self.process_files):
                index.order[path] = position
                names = self._names_in(path)
                if names is None:
                    index.unread.append(path)
                    continue
                for name in names:
                    index.names.setdefault(name, []).append(path)
                data = self._read[("bytes", path)]
                if _DYNAMIC_NAME.search(data):
                    index.dynamic.append(path)
                if b"setattr" in data or b"__dict__" in data or any(word in data for word in NAMESPACE_WORDS):
                    index.setattr.append(path)
                for stored in set(_STORED.findall(data)):
                    index.stored.setdefault(stored, []).append(path)
            self._read[key] = index
        return self._read[key]

    def _candidates(self, *groups) -> list[str]:
        """The files of ``groups``, once each, in the run's order."""
        order = self._index().order
        return sorted({path for group in groups for path in group}, key=lambda p: order.get(p, 0))

    def _names_in(self, path: str) -> frozenset[bytes] | None:
        """The attribute names (``x.name``) and identifier-like strings (``"name"``) of a file."""
        key = ("names", path)
        if key not in self._read:
            data = _code_bytes(path)
            if data is None:
                self._read[key] = None
                return None
            self._read[("bytes", path)] = data
            self._read[key] = frozenset(m for pair in _NAME_USES.findall(data) for m in pair if m)
        return self._read[key]

    def subclass_sources(self, name: str, path: str, tree: ast.Module):
        """The classes of the program that derive from the class ``name`` defined in ``path`` (its
        tree given), each read (``ClassFiles.subclasses_of``); else why one may and is not read
        (partial facts among them)."""
        if (partial := self._partial(path)) is not None:
            return f"{partial}, so a subclass elsewhere cannot be ruled out"
        candidates = [real for real in self.subclasses.get(name, ()) if self.may_run_with(path, real)]
        return self.class_files.subclasses_of(path, tree, name, list(dict.fromkeys(candidates)))

    def seeds_for(self, path: str) -> frozenset[int]:
        """Seeds passed to seed_everything by scripts in ``path``'s folder or above it: the script
        and the code it drives usually share a project folder, and two projects in one run keep
        their own seeds."""
        found: set[int] = set()
        for where, seeds in self.seeds.items():
            if _within(path, where):
                found |= seeds
        return frozenset(found)

    @classmethod
    def merge(cls, parts: Iterable[FileFacts], whole: bool = False) -> ProjectFacts:
        monitored: dict[str, list[Monitor]] = {}
        classes: list = []
        subclasses: dict[str, list[str]] = {}
        monitor_imports: dict[str, tuple[Import, ...]] = {}
        seeds: dict[str, set[int]] = {}
        sampler_off: set[str] = set()
        sampler_unknown: set[str] = set()
        outside_candidates: set[str] = set()
        sampler_outside: set[str] = set()
        validation_clock: set[str] = set()
        command_line: set[str] = set()
        pins: dict[str, LightningVersion | None] = {}
        uses_lightning = False
        unknown_monitors: list[Monitor] = []
        switch_parts: list[tuple[DeviceSwitch, ...] | str] = []
        hazard_places: dict[str, list[tuple[str, str]]] = {}
        process_files: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        hazard_sources: list[str] = []
        for part in parts:
            uses_lightning |= part.lightning
            if part.hazards is None:
                hazard_sources.append(part.path)
            else:
                for name, line in part.hazards.items():
                    hazard_places.setdefault(name, []).append((f"{part.path}:{line}", os.path.realpath(part.path)))
            if part.path:
                process_files[os.path.realpath(part.path)] = (part.modules, part.dynamic)
            unknown_monitors += part.unknown_monitors
            if part.switches_deferred:
                switch_parts.append(part.path)
            elif part.default_devices:
                switch_parts.append(tuple(part.default_devices))
            for monitor in part.monitors:
                monitored.setdefault(monitor.metric, []).append(monitor)
            if part.monitors or part.unknown_monitors:
                monitor_imports[part.path] = tuple(part.imports)
            if part.classes or part.imports:
                classes.append((part.path, part.classes, part.imports))
            for _name, bases in part.classes:
                for base in bases:
                    subclasses.setdefault(base.rsplit(".", 1)[-1], []).append(os.path.realpath(part.path))
            if part.seeds:
                seeds.setdefault(part.folder, set()).update(part.seeds)
            if part.sampler_off:
                sampler_off.add(part.path)
            if part.sampler_unknown:
                sampler_unknown.add(part.path)
            if part.sampler_outside:
                sampler_outside.add(part.path)
            if part.may_reach_outside:
                outside_candidates.add(os.path.realpath(part.path))
            if part.validation_clock:
                validation_clock.add(part.path)
            if part.command_line:
                command_line.add(part.path)
            if part.pin is not None:
                pins[part.pin[0]] = part.pin[1]
        kinds = resolve_kinds(classes)
        return cls(
            {k: tuple(v) for k, v in monitored.items()}, kinds["LightningModule"].reach,
            {k: frozenset(v) for k, v in seeds.items()}, frozenset(sampler_off), pins, uses_lightning,
            tuple(unknown_monitors), whole, switch_parts=tuple(switch_parts), hazard_sources=tuple(hazard_sources), kinds=kinds,
            monitor_imports=monitor_imports, hazard_places={k: tuple(v) for k, v in hazard_places.items()},
            process_files=process_files, subclasses={k: tuple(v) for k, v in subclasses.items()},
            sampler_unknown=frozenset(sampler_unknown), sampler_outside=frozenset(sampler_outside),
            validation_clock=frozenset(validation_clock), command_line=frozenset(command_line),
            outside_candidates=frozenset(outside_candidates),
        )


#: A configuration's sampler switch set to anything but a literal true: YAML 1.1's falsy spellings
#: (``off``, ``No``, ``FALSE``), an interpolation, an empty value; JSON's ``false``.
_CONFIG_SAMPLER_OFF = lazy_compile(
    rb"(?:^|[{,])[ \t]*[\"']?(?:use_distributed_sampler|replace_sampler_ddp)[\"']?[ \t]*:"
    rb"(?![ \t]*(?:true|True|TRUE|yes|Yes|YES|on|On|ON|y|Y)[ \t]*(?:[#,}\r\n]|$))", re.M)
#: ``Trainer(**...)``: keyword arguments unpacked into a Trainer call (the facts pass then parses the file),
#: also past calls among its arguments (``Trainer(logger=make_logger(), **cfg)``) and into a callee
#: named for a trainer (``trainer_cls(**cfg)``, ``build_trainer(**cfg)``). Also a Trainer under another
#: name: imported as (``import Trainer as T``), bound (``T = pl.Trainer``), subclassed, reached by its
#: name (``getattr(pl, "Trainer")``), or made by ``partial(Trainer, ...)``.
_TRAINER_UNPACKED = lazy_compile(
    rb"[Tt]rainer\w*\s*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\*\*|\bTrainer[ \t]+as[ \t]+\w"
    rb"|partial[ \t]*\([ \t]*[\w.]*Trainer\b|=[ \t]*[\w.]*Trainer\b|class[ \t]+\w+[ \t]*\([^)]*Trainer\b"
    rb"|['\"]Trainer['\"]")
#: Exporting notebooks to scripts (then run outside a kernel): ``jupyter nbconvert --to script``,
#: ``jupytext --to py`` or a pairing with a script (``--set-formats ipynb,py``), nbconvert's exporters,
#: ``ipynb-py-convert``, ``p2j -r``.
_EXPORTS_TO_SCRIPT = lazy_compile(
    rb"nbconvert[^\n]*--to[ \t=]*[\"']?(?:script|python)\b|jupytext[^\n]*(?:--to[ \t=]*[\"']?(?:py|python|script)\b"
    rb"|--set-formats[^\n]*\bpy\b)|\b(?:PythonExporter|ScriptExporter)\b|ipynb-py-convert|\bp2j[ \t]+-r\b")
@functools.lru_cache(maxsize=None)
def _script_exports(root: str) -> tuple[tuple[str | None, int, bytes], ...]:
    """(file, line, the line's text) of each export of notebooks to scripts in the program's
    configurations and launch scripts (read once per program); a last ``(None, 0, reason)`` where
    not all were read."""
    found: list[tuple[str | None, int, bytes]] = []
    for path, data in (*config_files(root), *_launch_scripts(root, b"")):
        if path is None:
            found.append((None, 0, f"{root}: more than {MAX_CONFIG_FILES} configuration files, not all read"))
            break
        for match in _EXPORTS_TO_SCRIPT.finditer(data):
            start = data.rfind(b"\n", 0, match.start()) + 1
            end = data.find(b"\n", match.start())
            found.append((path, _line_at(data, match.start()), data[start:end if end >= 0 else len(data)]))
    return tuple(found)


def _exports_this_notebook(data: bytes, at: int, name: bytes) -> bool:
    """The export command at ``at`` may take the notebook named ``name``: its line names no
    notebook (a variable, a folder), a pattern (``*.ipynb``), or that notebook."""
    line = data[data.rfind(b"\n", 0, at) + 1:data.find(b"\n", at) if data.find(b"\n", at) >= 0 else len(data)]
    named = re.findall(rb"[\w.*/-]*\.ipynb", line)
    return not named or any(b"*" in n or n.rsplit(b"/", 1)[-1] == name for n in named)


#: A notebook's jupytext metadata pairing it with a script (``"formats": "ipynb,py:percent"``).
_JUPYTEXT_PAIRED = lazy_compile(rb"\"formats\"[ \t]*:[ \t]*\"[^\"]*\bpy\b")
#: ``num_nodes`` named in code with what is not a literal 1 (``Trainer(num_nodes=2)``,
#: ``num_nodes=args.nodes``, ``add_argument("--num_nodes")``).
_SEVERAL_NODES = lazy_compile(rb"num_nodes(?![\"']?[ \t]*[=:][ \t]*1\b)")
#: ``num_nodes:`` in a configuration, set to what is not 1.
_CONFIG_NODES = lazy_compile(rb"num_nodes[\"']?[ \t]*:(?![ \t]*1[ \t]*(?:[#,}\r\n]|$))", re.M)
#: A launch script that may start several nodes: a Trainer flag, torchrun's ``--nnodes``, SLURM's nodes.
_SCRIPT_NODES = lazy_compile(rb"--(?:trainer\.)?num_nodes|--nnodes[ \t=]+(?!1\b)|NUM_NODES|#SBATCH[ \t]+(?:-N|--nodes)[ \t=]*(?!1\b)")
#: A file that calls what hydra's configurations name: ``instantiate``/``call`` (or any use of
#: ``hydra.utils``).
_HYDRA_CALLS = lazy_compile(rb"\bhydra\b[\s\S]*?(?:\binstantiate\b|\bcall[ \t]*\()")
_CONFIG_SKIPPED = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", "build", "dist",
                             "site-packages", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints", ".cache",
                             ".eggs", ".nox"})
MAX_CONFIG_FILES = 2000


def config_files(root: str):
    """(path, its first megabyte) of each YAML/JSON configuration file of the program, in a stable
    order; then, past ``MAX_CONFIG_FILES``, one last ``(None, b"")``: not all were read."""
    seen = 0
    for folder, folders, names in os.walk(root):
        folders[:] = sorted(f for f in folders if f not in _CONFIG_SKIPPED)
        for name in sorted(names):
            if not name.endswith((".yaml", ".yml", ".json")):
                continue
            seen += 1
            if seen > MAX_CONFIG_FILES:
                yield None, b""
                return
            try:
                with open(os.path.join(folder, name), "rb") as handle:
                    yield os.path.join(folder, name), handle.read(1_000_000)
            except OSError:
                continue


@functools.lru_cache(maxsize=None)
def config_turns_sampler_off(root: str) -> str | None:
    """Where a YAML configuration of the program (LightningCLI's ``--config``, hydra's
    ``configs/trainer/*.yaml``) sets ``use_distributed_sampler: false`` (1.x ``replace_sampler_ddp``),
    as ``path:line``; None where none does. Read when a rule asks, at most ``MAX_CONFIG_FILES`` files
    (past them: not proven, said)."""
    return _setting_in_files(root, b"sampler", _CONFIG_SAMPLER_OFF, _SCRIPT_SAMPLER_OFF)


def _setting_in_files(root: str, word: bytes, in_config, in_script) -> str | None:
    """The first ``path:line`` where a configuration of the program (a key of Trainer's arguments
    ``in_config``, or Lightning's environment default in an env block: docker-compose, a CI job, a
    Kubernetes spec) or a launch script (``in_script``) sets a Trainer argument so; files without
    ``word`` are not searched. Past ``MAX_CONFIG_FILES`` configurations: not proven, said."""
    for path, data in config_files(root):
        if path is None:
            return f"{root}: more than {MAX_CONFIG_FILES} configuration files, not all read"
        if word not in data.lower():
            continue
        match = in_config.search(data) or in_script.search(data)
        if match is not None:
            line = data.count(b"\n", 0, match.start()) + 1
            return f"{path}:{line}"
    for path, data in _launch_scripts(root, word):
        match = in_script.search(data)
        if match is not None:
            line = data.count(b"\n", 0, match.start()) + 1
            return f"{path}:{line}"
    return None


#: A launch script's switch: Lightning's environment default (``PL_TRAINER_USE_DISTRIBUTED_SAMPLER=0``,
#: ``ENV ...`` in a Dockerfile, ``PL_TRAINER_...: "0"`` in a YAML env block) or a LightningCLI argument
#: (``--trainer.use_distributed_sampler false``), named without being set to a literal true.
_SCRIPT_SAMPLER_OFF = lazy_compile(
    rb"(?:PL_TRAINER_(?:USE_DISTRIBUTED_SAMPLER|REPLACE_SAMPLER_DDP)|--trainer\.(?:use_distributed_sampler|replace_sampler_ddp))"
    rb"(?![ \t]*[=:]?[ \t]*[\"']?(?:1|true|True|TRUE)\b)")


#: Extensions of files that hold data or code of other kinds, never a run's environment.
_NOT_LAUNCHERS = (".py", ".pyc", ".ipynb", ".md", ".rst", ".txt", ".csv", ".tsv", ".png", ".jpg", ".jpeg", ".gif",
                  ".pdf", ".pt", ".pth", ".ckpt", ".bin", ".npy", ".npz", ".pkl", ".h5", ".zip", ".gz", ".tar", ".so",
                  ".parquet", ".arrow", ".safetensors", ".onnx", ".wav", ".mp3", ".mp4", ".lock", ".yaml", ".yml",
                  ".json", ".html", ".css", ".js", ".svg")


def _may_launch(name: str) -> bool:
    """A file that may export a run's Trainer settings or pass them on a command line: a shell or
    job script (``.sh``, ``.sbatch``...), a Makefile, justfile or Dockerfile, an ``.env*`` file, and
    any file without an extension (``bin/train``, ``scripts/run``; review round 16). YAML and JSON are
    read as configurations."""
    if name.endswith((".sh", ".bash", ".zsh", ".env", ".slurm", ".sbatch", ".pbs", ".job", ".toml", ".cfg", ".ini", ".conf")):
        return True
    if name in ("Makefile", "makefile", "GNUmakefile", "justfile", "Justfile", "Procfile", ".envrc") \
            or name.startswith((".env", "Dockerfile", "Containerfile")):
        return True
    return "." not in name.lstrip(".") and not name.endswith(_NOT_LAUNCHERS)


def _launch_scripts(root: str, word: bytes = b"sampler"):
    """(path, its first megabyte) of each shell script, ``.env`` file and Makefile of the program
    (``MAX_CONFIG_FILES`` at most), where a run's Trainer settings may be exported or passed, that
    names ``word`` (in any case)."""
    seen = 0
    for folder, folders, names in os.walk(root):
        folders[:] = sorted(f for f in folders if f not in _CONFIG_SKIPPED)
        for name in sorted(names):
            if not _may_launch(name):
                continue
            seen += 1
            if seen > MAX_CONFIG_FILES:
                return
            try:
                with open(os.path.join(folder, name), "rb") as handle:
                    data = handle.read(1_000_000)
            except OSError:
                continue
            if word in data.lower():
                yield os.path.join(folder, name), data


#: ``val_check_interval`` in a configuration, set to what is not a plain number (a duration string, a
#: mapping, an interpolation, an empty value).
_CONFIG_CLOCK = lazy_compile(
    rb"(?:^|[{,])[ \t]*[\"']?val_check_interval[\"']?[ \t]*:(?![ \t]*-?[0-9][0-9._eE+-]*[ \t]*(?:[#,}\r\n]|$))", re.M)
#: Lightning's environment default or a LightningCLI argument for it, not followed by a plain number.
_SCRIPT_CLOCK = lazy_compile(
    rb"(?:PL_TRAINER_VAL_CHECK_INTERVAL|--trainer\.val_check_interval)(?![ \t]*[=:]?[ \t]*[\"']?-?[0-9][0-9._eE+-]*[\"']?(?:[ \t\r\n;\\]|$))")


@functools.lru_cache(maxsize=None)
def config_sets_a_clock(root: str) -> str | None:
    """Where a configuration (YAML/JSON) or a launch script of the program sets ``val_check_interval``
    to what may be a duration, as ``path:line``; None where none does (past ``MAX_CONFIG_FILES``:
    not proven, said)."""
    return _setting_in_files(root, b"val_check_interval", _CONFIG_CLOCK, _SCRIPT_CLOCK)


@functools.lru_cache(maxsize=64)
def config_hazards(root: str) -> dict[str, str]:
    """The PROJECT_HAZARDS the program's configuration files name (``class_path:
    lightning.pytorch.callbacks.WeightAveraging``), each as its first ``path:line``; past
    ``MAX_CONFIG_FILES`` every hazard is taken as named."""
    found: dict[str, str] = {}
    for path, data in config_files(root):
        if path is None:
            return {name: f"{root} (more than {MAX_CONFIG_FILES} configuration files, not all read)"
                    for name in _HAZARDS}
        for name, pattern in _HAZARDS.items():
            if name not in found:
                match = pattern.search(data)
                if match is not None:
                    line = data.count(b"\n", 0, match.start()) + 1
                    found[name] = f"{os.path.relpath(path)}:{line}"
    return found


#: Lightning's suffix of a key logged with several dataloaders.
_DATALOADER_SUFFIX = lazy_compile(r"/dataloader_idx_\d+$")
#: ``monitor: val_acc`` in a YAML or JSON configuration.
_CONFIG_MONITOR = lazy_compile(rb"[\"']?monitor[\"']?[ \t]*:[ \t]*[\"']?([A-Za-z_][\w/.\-]*)", re.M)


@functools.lru_cache(maxsize=None)
def config_monitors(root: str) -> tuple[Monitor, ...]:
    """The metrics the program's YAML and JSON configurations name as a callback's ``monitor``."""
    found: list[Monitor] = []
    for path, data in config_files(root):
        if path is None or b"monitor" not in data:
            continue
        for match in _CONFIG_MONITOR.finditer(data):
            metric = match.group(1).decode("utf-8", "replace")
            if metric not in ("null", "None", "none", "true", "false"):
                found.append(Monitor(metric, os.path.realpath(path), data.count(b"\n", 0, match.start()) + 1,
                                     "a configuration's `monitor:`"))
    return tuple(found)


def config_switches(root: str) -> list[DeviceSwitch]:
    """The places where the program's configuration files name a function that switches the
    default device (``_target_: torch.set_default_device``): what a loader may call. Past
    ``MAX_CONFIG_FILES``, one switch that says they were not all read."""
    found: list[DeviceSwitch] = []
    for path, data in config_files(root):
        if path is None:
            found.append(DeviceSwitch(root, 0, f"a configuration file (more than {MAX_CONFIG_FILES}, not all read)",
                                      False, False))
            break
        for name in SWITCH_FUNCTIONS:
            at = data.find(name.encode())
            if at >= 0:
                found.append(DeviceSwitch(os.path.realpath(path), data.count(b"\n", 0, at) + 1,
                                          f"`{name}` named in a configuration", False, False))
    return found


#: An attribute (``.name``) or an identifier-like string (``"name"``; ``\\"name\\"`` in a notebook's JSON).
_NAME_USES = lazy_compile(rb"\.[ \t]*([A-Za-z_]\w*)|['\"]([A-Za-z_]\w*)\\?['\"]")


@record
class _NameIndex:
    names: dict[bytes, list[str]]  # attribute names and identifier-like strings -> files
    stored: dict[bytes, list[str]]  # attribute names stored on anything but ``self`` -> files
    dynamic: list[str]  # files that reach attributes by names made at run time
    setattr: list[str]  # files that name setattr, __dict__ or vars (they may store any attribute)
    unread: list[str]  # files that could not be read
    order: dict[str, int]  # the run's order of its files


def _code_bytes(path: str) -> bytes | None:
    """A file's code as bytes: the file, or for a notebook its code cells one after the other (its
    outputs, often megabytes of images, hold no code); None where it cannot be read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if not path.endswith(".ipynb"):
        return data
    try:
        cells = json.loads(data).get("cells", [])
        return "\n".join("".join(c.get("source", "")) if isinstance(c.get("source"), list) else str(c.get("source", ""))
                         for c in cells if isinstance(c, dict) and c.get("cell_type") == "code").encode()
    except (ValueError, AttributeError, TypeError, RecursionError):
        return data
#: ``x.name = ...`` on anything but ``self``: the name.
_STORED = lazy_compile(rb"(?<!\bself)\.[ \t]*([A-Za-z_]\w*)[ \t]*=(?!=)")
#: ``getattr(x, name)`` with a name that is not a literal, ``attrgetter``/``methodcaller``,
#: ``__getattribute__``, ``inspect.getmembers``, ``vars(...)`` (of a class, it holds the methods; from
#: bytes alone an argparse namespace cannot be told apart): an attribute reached by a name made at
#: run time.
_DYNAMIC_NAME = lazy_compile(rb"getattr[ \t]*\([^,()]+,[ \t\r\n]*(?![ \t\r\n])(?!['\"][A-Za-z_]\w*['\"][ \t]*[,)])"
                             rb"|attrgetter|methodcaller|__getattribute__|getmembers|\bvars[ \t]*\(")


def _name_use(name: str) -> re.Pattern[bytes]:
    word = re.escape(name.encode())
    return re.compile(rb"\.[ \t]*" + word + rb"\b|['\"]" + word + rb"\\?['\"]")


#: Code that reaches every part of a module it is handed (``lm.modules()``, ``lm.apply(f)``,
#: ``lm.get_submodule("model")``) or hooks every module at once (``register_module_forward_hook``):
#: any held module may change through it (a class's own ``self.apply(...)`` is read with the class).
_REACHES_EVERY_PART = lazy_compile(rb"(?<!\bself)\.[ \t]*(?:modules|children|named_modules|named_children"
                                   rb"|get_submodule|_modules)\b[ \t]*[(\[.]|register_module_forward")
#: ``x.apply(f)``: every part of ``x`` handed to ``f`` (read: an initialiser of weights leaves them).
_APPLY = lazy_compile(rb"(?<!\bself)\.[ \t]*apply[ \t]*\(")
#: A function at a file's top level with a parameter called ``self`` (not a method).
_FREE_SELF = lazy_compile(rb"^(?:async[ \t]+)?def[ \t]+\w+[ \t]*\([ \t]*self\b", re.M)
#: After a method call's opening parenthesis: the call's result used further (``m.eval().register_...``).
_CHAINED_CALL = lazy_compile(rb"[^()\n]*\)[ \t]*[.\[]")

#: ``type(x)``, ``x.__class__`` taken otherwise than to read its name or compare it (``type(x)(...)``,
#: ``klass = type(self)``): an object's class, which may then be built without being named;
#: ``__subclasses__()``, ``inspect.getmembers``: classes found by looking, then built by any name.
_BUILDS_UNNAMED = lazy_compile(
    rb"(?<![.\w])type[ \t]*\([^()\n]*\)(?![ \t]*(?:\.[ \t]*__(?:name|qualname|module|doc)__|is\b|==|!=))"
    rb"|__class__(?![ \t]*(?:\.[ \t]*__(?:name|qualname|module|doc)__|is\b|==|!=))|__subclasses__|getmembers")


def _logging_methods(cls: ast.ClassDef) -> frozenset[str]:
    """The names of the class's methods that log (``self.log``/``self.log_dict``), or call one that
    does through ``self`` (a hook and the helpers on the way to its log): another object calling
    one of them may run a log of the class."""
    methods = {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    calls = {name: {n.func.attr for n in ast.walk(method) if isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                    and n.func.value.id == "self"} for name, method in methods.items()}
    found = {name for name, called in calls.items() if called & {"log", "log_dict"}}
    while True:
        more = {name for name, called in calls.items() if called & found} - found
        if not more:
            return frozenset(found)
        found |= more


#: Code that may write another frame's namespace (what a ``locals()`` there then gives), or trace every frame.
FRAME_WRITE_TEXT = lazy_compile(FRAME_WRITES)
#: Where an attribute may be reached by a name made at run time (read further by ``dynamic_access``).
_DYNAMIC_REACH = lazy_compile(rb"\b(?:getattr(?:_static)?|attrgetter|methodcaller|__getattribute__|getmembers|vars)\b"
                              rb"|__dict__")


def _no_dynamic_reach_at(facts: ProjectFacts, path: str, line: int) -> bool:
    """Whether the file at ``path`` reaches no attribute by a name made at run time
    (``analysis.attribute_access.dynamic_access``: a literal ``getattr`` and argparse's namespace do
    not count); a notebook, or a file that does not parse, may."""
    parsed = facts.class_files.parsed(path) if path.endswith(".py") else None
    if parsed is None:
        return False
    key = ("dynamic reach", path)  # (a question of the whole file: asked once, whatever the line)
    if key not in facts._read:
        facts._read[key] = dynamic_access(parsed[0]) is None
    return facts._read[key]


def _no_method_read_at(facts: ProjectFacts, names: frozenset[str], path: str, line: int) -> bool:
    """Whether the text that names one of ``names`` at ``line`` of the program's file at ``path``
    is no code that reads such a method off an object: a comment or a docstring's words
    (``LightningModule.training_step`` in bolts' ``data_monitor.py``), not an attribute read off
    anything but ``self``/``super()``, nor a string of that name. A notebook is taken as reading."""
    parsed = facts.class_files.parsed(path) if path.endswith(".py") else None
    if parsed is None:
        return False
    parents = parent_map(parsed[0])
    for node in every_node(parsed[0]):
        if not getattr(node, "lineno", 0) <= line <= (getattr(node, "end_lineno", None) or 0):
            continue
        if isinstance(node, ast.Attribute) and node.attr in names and not (
                isinstance(node.value, ast.Name) and node.value.id == "self"
                or isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) and node.value.func.id == "super"):
            return False
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value and (
                not isinstance(parents.get(id(node)), ast.Expr) or ">>>" in node.value) \
                and re.search(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b", node.value):
            return False  # a string naming it, ``"model.Model.validation_step"`` too (``pydoc.locate``:
            # review helper-50, c30); not a docstring or another bare string, which nothing reads,
            # unless it holds examples ``pytest --doctest-modules`` runs (review helper-51)
    return True


def _line_at(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _within(path: str, folder: str) -> bool:
    here = os.path.dirname(os.path.abspath(path))
    return here == folder or here.startswith(folder.rstrip(os.sep) + os.sep)


def is_lightning_code(data: bytes, facts: ProjectFacts | None) -> bool:
    """The file imports Lightning, or subclasses a LightningModule the run defines elsewhere."""
    if b"lightning" in data:
        return True
    if not facts or not facts.lightning_modules or b"class" not in data:
        return False
    return any(set(bases) & facts.lightning_modules.keys() for _, bases in class_bases(data))


def defines_subclass(data: bytes, facts: ProjectFacts | None, kinds=frozenset({"LightningModule"})) -> bool:
    """A class of the file derives from one of ``kinds`` (a LightningModule, a Callback...: here, or
    through a class of the run)."""
    if b"class" not in data:
        return False
    known = set(kinds)
    for kind in kinds:
        known |= set(facts.of_kind(kind)) if facts else set()
    return any(known.intersection(bases) for _, bases in class_bases(data))


def _unread_switches(path: str) -> tuple[DeviceSwitch, ...]:
    """Where no reader is installed, a deferred file may switch the default device anywhere."""
    return (DeviceSwitch(os.path.realpath(path), 0, "a `with` block of this file (not read)", False, True),)


def _not_read(path: str) -> FileFacts | None:
    return None


#: The whole facts of a file whose facts deferred some (``file_facts(..., defer=True)``), or None
#: where it cannot be read: the runner, which reads files, installs its reader (facts never open
#: files themselves). Asked by ``ProjectFacts`` only when a rule needs what was deferred.
read_later = _not_read


def file_facts(path: str, data: bytes, defer: bool = False) -> FileFacts:
    """What ``data`` (the file at ``path``) contributes. ``defer``: in a file that does not mention
    Lightning, leave what costs most on a big tree and is seldom asked (the hazards; default-device
    switches that would need a parse of their own) to be read from ``path`` again if a rule asks
    (``read_later``). A Lightning file is read at once: in a Lightning project the rules ask, and
    every worker would read it again."""
    facts = FileFacts(
        path=path,
        folder=os.path.dirname(os.path.abspath(path)),
        lightning=b"lightning" in data,
    )
    if b"class" in data:
        facts.classes.extend(class_bases(data))
    if facts.classes or path.endswith("__init__.py"):
        facts.imports.extend(from_imports(data))
    facts.modules, facts.dynamic = imported_modules(data)
    facts.may_reach_outside = may_reach_outside(data)
    defer = defer and not facts.lightning
    facts.hazards = None if defer else _hazards_in(data)
    # DDP009's trigger words include "Trainer": one scan rules most files out, not three.
    if b"Trainer" in data and any(word in data for word in FINDER_WORDS):
        facts.pin = (path, lightning_pin(path, data))
    fact_words = (any(word in data for word in FACT_LITERALS) and _FACT_WORDS.search(data) is not None) \
        or (b"Trainer" in data and _TRAINER_UNPACKED.search(data) is not None)
    switch_words = any(word in data for word in _SWITCH_LITERALS) or _with_device(data) or _may_enter_a_name(data)
    if not fact_words and not switch_words:
        return facts
    if defer and not fact_words:
        facts.switches_deferred = True
        return facts
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data, path)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return facts  # the fix pass reports it
    nodes = list(walk(tree))  # walked once: the switches and the facts below each read every node
    if switch_words:
        facts.default_devices.extend(default_device_switches(tree, os.path.realpath(path), nodes))
    if not fact_words:
        return facts
    trainers = _trainer_names(nodes)
    # A dict display's literal sampler entries are read as entries, not as strings naming the switch.
    switch_keys = {id(key) for node in nodes if isinstance(node, ast.Dict) for key, value in zip(node.keys, node.values)
                   if _constant_str(key) in SAMPLER_SWITCHES and isinstance(value, ast.Constant) and isinstance(value.value, bool)}
    # ... and its literal ``val_check_interval`` entries that are numbers.
    number_keys = {id(key) for node in nodes if isinstance(node, ast.Dict) for key, value in zip(node.keys, node.values)
                   if _constant_str(key) == CLOCK_SETTING and _a_number(value)}
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in number_keys \
                and CLOCK_SETTING in node.value.lower():
            # ``add_argument("--val_check_interval")``, ``cfg["val_check_interval"] = "00:00:10:00"``
            facts.validation_clock = True
        elif isinstance(node, ast.keyword) and node.arg == CLOCK_SETTING and not _a_number(node.value):
            facts.validation_clock = True  # ``Trainer(val_check_interval=timedelta(minutes=5))``, a name
        elif isinstance(node, ast.Attribute) and node.attr == CLOCK_SETTING and isinstance(node.ctx, ast.Store):
            facts.validation_clock = True  # ``args.val_check_interval = ...``: set at run time
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and not (node.value is not None and _a_number(node.value)) \
                and any(isinstance(t, ast.Name) and t.id == CLOCK_SETTING
                        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])):
            # a config's field (``val_check_interval: str = "00:00:10:00"`` in a dataclass handed on
            # with ``**asdict(cfg)``), a local handed to the Trainer by name (review round 16)
            facts.validation_clock = True
        if isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if callee == "seed_everything" and node.args and isinstance(node.args[0], ast.Constant):
                if isinstance(node.args[0].value, int) and not isinstance(node.args[0].value, bool):
                    facts.seeds.append(node.args[0].value)
            for keyword in node.keywords:
                if keyword.arg in SAMPLER_SWITCHES and isinstance(keyword.value, ast.Constant) and keyword.value.value is False:
                    facts.sampler_off = True
                elif keyword.arg in SAMPLER_SWITCHES and not (isinstance(keyword.value, ast.Constant) and keyword.value.value is True):
                    facts.sampler_unknown = True  # a name, a config's entry, an expression: it may be False
                # ``Trainer(**config)``: the dict may hold the switch; only a dict display shows it does not.
                if keyword.arg is None and _builds_a_trainer(node, callee, trainers) and not (
                        isinstance(keyword.value, ast.Dict) and None not in keyword.value.keys
                        and all(isinstance(k, ast.Constant) for k in keyword.value.keys)) \
                        and not any(k.arg in SAMPLER_SWITCHES for k in node.keywords):  # one given: ``**`` cannot hold it
                    facts.sampler_outside = True
            if callee in _ARGUMENTS_FROM_OUTSIDE or (callee == "main" and isinstance(node.func, ast.Attribute)
                                                     and isinstance(node.func.value, ast.Name) and node.func.value.id == "hydra"):
                facts.sampler_outside = True  # the command line may set any Trainer argument
                # (``from_argparse_args``/``parse_argparser`` are 1.x's alone, which has no durations)
                facts.command_line |= callee not in _ONLY_BEFORE_DURATIONS
            if callee in MONITORING_CALLBACKS:
                metric = _monitor_argument(node, MONITORING_CALLBACKS[callee])
                if metric is not None:
                    facts.monitors.append(Monitor(metric, path, node.lineno, callee))
                elif _may_pass_a_monitor(node, MONITORING_CALLBACKS[callee]):
                    facts.unknown_monitors.append(Monitor("?", path, node.lineno, callee))
            elif callee == "dict":
                for keyword in node.keywords:
                    if keyword.arg not in ("monitor", None):
                        continue
                    metric = _constant_str(keyword.value) if keyword.arg == "monitor" else None
                    found = facts.monitors if metric is not None else facts.unknown_monitors
                    found.append(Monitor(metric or "?", path, node.lineno, "dict"))
            elif callee == "LightningCLI":
                facts.unknown_monitors.append(Monitor("?", path, node.lineno, "LightningCLI (its configuration)"))
            else:
                # ``monitor=`` in any other call: a subclass's ``super().__init__(monitor="val_acc")``,
                # a factory, a pruning callback. Read as a monitor; one that is not a literal is unknown.
                for keyword in node.keywords:
                    if keyword.arg == "monitor":
                        metric = _constant_str(keyword.value)
                        found = facts.monitors if metric is not None else facts.unknown_monitors
                        found.append(Monitor(metric or "?", path, node.lineno, f"`{callee or '...'}(monitor=...)`"))
            if callee == "setattr" and len(node.args) >= 2 and _constant_str(node.args[1]) == "monitor":
                # ``setattr(ckpt, "monitor", name)``: a monitor set from outside, never read here.
                facts.unknown_monitors.append(Monitor("?", path, node.lineno, "setattr(..., \"monitor\", ...)"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in switch_keys \
                and any(switch in node.value.lower() for switch in SAMPLER_SWITCHES):
            # ``add_argument("--use_distributed_sampler")``, ``cfg["use_distributed_sampler"] = flag``,
            # ``setattr(args, "replace_sampler_ddp", ...)``: a value set at run time (a dict display's
            # literal entry is read below).
            facts.sampler_unknown = True
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            # ``ckpt.monitor = "val_loss"``: a callback's monitor set after it is made.
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for part in walk(target):
                    if isinstance(part, ast.Attribute) and part.attr == "monitor" and isinstance(part.ctx, ast.Store):
                        # a literal assigned to it alone; else (a name, ``+=``, a tuple target) unknown
                        metric = _constant_str(node.value) if not isinstance(node, ast.AugAssign) and target is part else None
                        found = facts.monitors if metric is not None else facts.unknown_monitors
                        found.append(Monitor(metric or "?", path, node.lineno, f"`{_dotted(part)} = ...`"))
                    elif isinstance(part, ast.Attribute) and part.attr in SAMPLER_SWITCHES and isinstance(part.ctx, ast.Store) \
                            and not (isinstance(node.value, ast.Constant) and node.value.value is True):
                        facts.sampler_unknown = True  # ``args.use_distributed_sampler = flag``
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if _constant_str(key) in SAMPLER_SWITCHES and isinstance(value, ast.Constant) and value.value is False:
                    facts.sampler_off = True
                elif _constant_str(key) in SAMPLER_SWITCHES and not (isinstance(value, ast.Constant) and value.value is True):
                    facts.sampler_unknown = True
                if _constant_str(key) == "monitor":
                    if _constant_str(value) is not None:
                        facts.monitors.append(Monitor(_constant_str(value), path, node.lineno, "configure_optimizers"))
                    else:
                        facts.unknown_monitors.append(Monitor("?", path, node.lineno, "a \"monitor\" entry"))
    if (facts.monitors or facts.unknown_monitors) and not facts.imports:
        facts.imports.extend(from_imports(data))  # which modules its callbacks may watch (``ties``)
    return facts


def _trainer_names(nodes: list[ast.AST]) -> set[str]:
    """The names the file may bind to Lightning's Trainer or a class deriving from it: imported as
    (``from lightning import Trainer as T``), bound to an expression naming one (``trainer_cls =
    pl.Trainer``, ``T = Trainer if fast else MyTrainer``, ``getattr(pl, "Trainer")``), or a class
    whose bases name one (``class MyTrainer(pl.Trainer)``: built with ``**cfg``, it hands them on)."""
    names = {"Trainer"} | {a.asname for n in nodes if isinstance(n, ast.ImportFrom) for a in n.names
                           if a.name == "Trainer" and a.asname}

    def names_one(expression: ast.AST) -> bool:
        return any((isinstance(part, ast.Name) and part.id in names) or (isinstance(part, ast.Attribute) and part.attr in names)
                   or (isinstance(part, ast.Constant) and part.value == "Trainer") for part in ast.walk(expression))

    while True:  # a binding of a binding (``Base = pl.Trainer``, then ``class Mine(Base)``)
        found = set(names)
        for node in nodes:
            if isinstance(node, ast.ClassDef) and any(names_one(base) for base in node.bases):
                found.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and names_one(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found.update(t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name))
        if found == names:
            return names
        names = found


def _a_number(node: ast.expr) -> bool:
    """A literal int or float (``0.25``, ``-1``), never a bool: not a duration."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _builds_a_trainer(call: ast.Call, callee: str | None, trainers: set[str]) -> bool:
    """``Trainer(...)`` under any name the file may bind it to, a callee named for a trainer
    (``trainer_cls(...)``, ``build_trainer(...)``: a factory may hand its arguments on), or
    ``partial(Trainer, ...)``."""
    if callee in trainers or (callee is not None and "trainer" in callee.lower()):
        return True
    first = call.args[0] if call.args else None
    name = first.attr if isinstance(first, ast.Attribute) else first.id if isinstance(first, ast.Name) else None
    return callee == "partial" and name in trainers


def _hazards_in(data: bytes) -> dict[str, int]:
    """The PROJECT_HAZARDS the text names, each with the line of its first mention in code: a
    comment's words are none (a tutorial's "we define a `collate_fn` for our data loader" in a
    markdown cell of a jupytext script), a string's are (``**{"collate_fn": f}``, ``exec``). The
    patterns are asked of the code with its comments blanked (``analysis.comments``): a comment in
    a class's base list, or one that repeats the words, neither hides a mention nor makes one
    (review helper-56 h2, helper-57 u1)."""
    found = {}
    code: bytes | None = None
    mapped: list = []  # the ``batch_size`` keywords of its batched dataset calls, parsed once where asked
    for name, pattern in _HAZARDS.items():
        if not any(needle in data for needle in _HAZARD_NEEDLES[name]):
            continue
        if code is None:
            code = without_comments(data) if b"#" in data or data.startswith(b"\xef\xbb\xbf") else data
        for match in pattern.finditer(code):
            if code.startswith(b"batch_size", match.start()) and match.start() in _mapped_batch_sizes(code, mapped):
                continue
            found[name] = code.count(b"\n", 0, match.start()) + 1
            break
    return found


def _mapped_batch_sizes(code: bytes, kept: list) -> set[int]:
    """The offsets of each ``batch_size`` keyword of a Hugging Face ``datasets`` call in the file's
    ``code`` (``analysis.comments``): ``ds.map(tokenize, batched=True, batch_size=None)`` or
    ``.filter(...)`` on a dataset of that library (``_library_datasets``): the size of one call's
    batch, not a loader's (helper-56, h3). What a ``.map`` is called on decides, not its spelling: a
    ``map`` of the program's own may hand its options to a ``DataLoader`` (helper-57, m1). Parsed
    once, only for a file that names ``batch_size``; none where it does not parse. ``kept``: an
    empty list the first time."""
    if not kept:
        offsets: set[int] = set()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        if tree is not None:
            from ddpfix.imports import ImportTable

            datasets = _library_datasets(tree, ImportTable.from_tree(tree))
            starts = [0]
            for line in code.splitlines(keepends=True):
                starts.append(starts[-1] + len(line))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr in ("map", "filter") and datasets(node.func.value):
                    for keyword in node.keywords:
                        if keyword.arg == "batch_size" and keyword.lineno < len(starts):
                            offsets.add(starts[keyword.lineno - 1] + keyword.col_offset)  # (UTF-8 bytes)
        kept.append(offsets)
    return kept[0]


#: The methods of a ``datasets`` Dataset or DatasetDict that hand back another of them.
_DATASET_METHODS = frozenset({"map", "filter", "select", "shuffle", "sort", "flatten", "cast", "cast_column",
                              "rename_column", "rename_columns", "remove_columns", "select_columns",
                              "train_test_split", "with_format", "shard"})


def _library_datasets(tree: ast.Module, imports) -> Callable[[ast.expr], bool]:
    """Whether an expression of the file is a Hugging Face ``datasets`` object: a call of that
    library (``load_dataset(...)``, ``Dataset.from_dict(...)``), one of its methods that hands back
    another (``_DATASET_METHODS``) or a split (``ds["train"]``) of such an object, or a variable
    every assignment of its scope binds to one (``imdb = load_dataset("imdb")``; a ``del`` binds
    nothing; any other binding, a loop, a parameter, an import, ``global``, makes it unknown). A
    variable is its scope's (``analysis.ast_shapes.scope_map``): a function's ``ds`` is not another's."""
    from ddpfix.analysis.ast_shapes import scope_map
    from ddpfix.analysis.names import names_bound_at

    scopes = scope_map(tree)
    values: dict[tuple[int, str], list[ast.expr] | None] = {}
    assigned: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            for target in node.targets:
                assigned.add(id(target))
                key = (id(scopes.get(id(target), tree)), target.id)
                if values.get(key, []) is not None:
                    values.setdefault(key, []).append(node.value)
    unknown: set[str] = set()  # (``global``/``nonlocal``: bound in another scope than it stands in)
    for node in ast.walk(tree):
        if id(node) in assigned or isinstance(node, ast.Name) and isinstance(node.ctx, ast.Del):
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            unknown.update(node.names)
        for name in names_bound_at(node):
            if name == "*":
                return lambda expression: False  # (a star import may rebind the library's names)
            values[(id(scopes.get(id(node), tree)), name)] = None
    known: set[tuple[int, str]] = set()

    def key_of(use: ast.Name) -> tuple[int, str] | None:
        """The variable a read of a name reads: its scope's, else an enclosing function's or the file's."""
        scope, inside_function = scopes.get(id(use), tree), False
        while True:
            if not (inside_function and isinstance(scope, ast.ClassDef)) and (id(scope), use.id) in values:
                return (id(scope), use.id)
            if scope is tree:
                return None
            inside_function = inside_function or isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            scope = scopes.get(id(scope), tree)

    def library(expression: ast.expr, names: set[tuple[int, str]]) -> bool:
        while isinstance(expression, ast.Subscript) or (
                isinstance(expression, ast.Call) and isinstance(expression.func, ast.Attribute)
                and expression.func.attr in _DATASET_METHODS):
            expression = expression.value if isinstance(expression, ast.Subscript) else expression.func.value
        if isinstance(expression, ast.Name):
            return expression.id not in unknown and key_of(expression) in names
        return isinstance(expression, ast.Call) and (imports.qualify(expression.func) or "").startswith("datasets.")

    changed = True
    while changed:  # (a variable bound from another: ``tokenized = imdb.map(...)``)
        changed = False
        for key, bound in values.items():
            # (each binding a library value, the variable's own earlier value too; one of them from
            # elsewhere: ``ds = ds.map(...)`` alone binds nothing known)
            if key not in known and bound and all(library(value, known | {key}) for value in bound) \
                    and any(library(value, known) for value in bound):
                known.add(key)
                changed = True
    return lambda expression: library(expression, known)


def _may_enter_a_name(data: bytes) -> bool:
    """Some ``with`` statement of the text may have an item that is not a call, or a call not known
    to enter no device (``default_device_switches`` counts those): False only where every ``with``
    header reads as calls of ``NON_DEVICE_CONTEXTS`` alone."""
    if b"with" not in data:
        return False
    for match in _WITH_WORD.finditer(data):
        line_start = data.rfind(b"\n", 0, match.start()) + 1
        if _WITH_INDENT.fullmatch(data, line_start, match.start()):
            callees = _calls_only(data, match.end())
            if callees is None or any(_bound_by_the_program(data, callee) for callee in callees):
                return True
    return False


def _bound_by_the_program(data: bytes, callee: bytes) -> bool:
    """The text may bind ``callee`` (``no_grad``, ``utils.no_grad``: a context manager
    ``NON_DEVICE_CONTEXTS`` lists by its last name) to code of the program: a ``def``/``class`` or an
    assignment of the name, or an import of it (or of the module it is reached through) from a
    module that is not a listed library (``from utils import no_grad``, ``import utils``);
    ``_own_names`` reads the same from the tree."""
    dotted = callee.replace(b" ", b"").replace(b"\t", b"")
    name = dotted.split(b".", 1)[0]
    word = re.escape(name)
    if b"." not in dotted:
        # Any use of the name besides ``with`` headers and imports from a listed library may bind it
        # (``a, no_grad = ...``, ``for timer in ...``, a parameter): as the tree reads every store.
        for found in re.finditer(rb"\b" + word + rb"\b", data):
            line_start = data.rfind(b"\n", 0, found.start()) + 1
            line = data[line_start:data.find(b"\n", found.start()) if b"\n" in data[found.start():] else len(data)]
            stripped = line.lstrip()
            if stripped.startswith((b"with ", b"async with ")):
                continue
            library = re.match(rb"from[ \t]+([\w.]+)[ \t]+import\b", stripped)
            if library and library.group(1).split(b".")[0].decode("ascii", "replace") in _CONTEXT_LIBRARIES:
                continue
            return True
    for found in re.finditer(rb"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import\b[^\n]*\b" + word + rb"\b", data, re.M):
        module = found.group(1).decode("ascii", "replace")
        if module.startswith(".") or module.split(".", 1)[0] not in _CONTEXT_LIBRARIES:
            return True
    for found in re.finditer(rb"^[ \t]*import[ \t]+([^\n#;]*)", data, re.M):
        for part in found.group(1).split(b","):
            words = part.split()
            if words and (words[-1] if len(words) == 3 and words[1] == b"as" else words[0].split(b".")[0]) == name \
                    and words[0].split(b".")[0].decode("ascii", "replace") not in _CONTEXT_LIBRARIES:
                return True
    return False


def _calls_only(data: bytes, start: int) -> list[bytes] | None:
    """The callees (``torch.no_grad``) of the ``with`` header from ``start`` to its colon, where it holds only
    items that are calls of ``NON_DEVICE_CONTEXTS`` (each maybe ``as`` a target); None otherwise.
    Brackets' contents are skipped; a string, a comment or a header longer than 2000 bytes is not
    read (None), nor a string outside brackets or one the scan cannot close."""
    items, current, depth = [], bytearray(), 0
    end = min(len(data), start + 2000)
    index = start
    while True:
        if index >= end:
            return None
        char = data[index]
        if char in b"\"'" and depth:  # a string inside brackets (``open("a.txt")``): skipped
            close = data.find(bytes([char]), index + 1, end)
            if close < 0 or close == index + 1 or b"\n" in data[index:close] or b"\\" in data[index:close]:
                return None  # an empty string may open a triple-quoted one; a newline or an escape: not read
            index = close + 1
            continue
        if char in b"\"'#":
            return None
        if char == 0x5C:  # a backslash: the header goes on on the next line
            index += 2
            current += b" "
            continue
        if char in b"([{":
            depth += 1
            if depth == 1:
                current.append(char)
        elif char in b")]}":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                current.append(char)
        elif depth == 0:
            if char == 0x0A or char == 0x0D:
                return None  # no colon on the line: not a header the scan reads
            if char in b",:":
                items.append(bytes(current))
                current = bytearray()
                if char == 0x3A:
                    break
            else:
                current.append(char)
        index += 1
    names = []
    for item in items:
        expression = _AS_TARGET.split(item, 1)[0]
        if not _CALL_SHAPE.fullmatch(expression):
            return None  # a name, an attribute, a subscript, ``(a, b)``, or not plainly a call
        called = expression.strip()[:-2].strip()
        if called.rsplit(b".", 1)[-1].strip().decode("ascii", "replace") not in NON_DEVICE_CONTEXTS:
            return None  # ``with gpu():`` may enter the torch.device its call returns (read as a switch)
        names.append(called)
    return names or None


def _may_pass_a_monitor(call: ast.Call, position: int | None) -> bool:
    """A monitoring callback whose ``monitor`` is there but not a literal, or may hide in ``*args`` /
    ``**kwargs`` (without any, the callback's default monitor applies: none, or a known one)."""
    if any(keyword.arg == "monitor" for keyword in call.keywords):
        return True
    if any(keyword.arg is None for keyword in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return True
    return position is not None and len(call.args) > position


def _with_device(data: bytes) -> bool:
    """The words of a ``with`` block that may switch the default device (``default_device_switches``)."""
    if b"evice" not in data:
        return False
    match = _WITH_DEVICE.search(data)
    while match is not None:
        if _INDENT.fullmatch(data, data.rfind(b"\n", 0, match.start()) + 1, match.start()):
            return True
        match = _WITH_DEVICE.search(data, match.start() + 1)
    return _DEVICE_ALIAS.search(data) is not None


def default_device_switches(tree: ast.Module, path: str, nodes: list[ast.AST] | None = None) -> list[DeviceSwitch]:
    """Where the file may make CUDA the default device: ``set_default_device`` and
    ``set_default_tensor_type`` called (under any name the file imports them as) or handed around,
    and ``with`` blocks of ``torch.device(...)``, a device held in a name, ``torch.utils._device.DeviceContext``,
    Lightning's ``init_module()`` / ``init_tensor()`` (the root device). Read by names, without an import
    table: a function of another library with one of these names counts too (a cost to safety only)."""
    functions, devices = {name: name for name in SWITCH_FUNCTIONS}, {"device"}
    nodes = list(walk(tree)) if nodes is None else nodes  # ``walk(tree)``, read three times
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.asname and alias.name in SWITCH_FUNCTIONS:
                    functions[alias.asname] = alias.name
                elif alias.asname and alias.name == "device":
                    devices.add(alias.asname)
    found: list[DeviceSwitch] = []
    called: set[int] = set()
    own_names, own_modules = _own_names(nodes)
    for node in nodes:
        if isinstance(node, ast.Call):
            name = _last_name(node.func)
            if name in functions:
                called.add(id(node.func))
                kind = _switch_kind(functions[name], node)
                if kind is not None:
                    found.append(DeviceSwitch(path, node.lineno, f"{_dotted(node.func)}(...)", kind == "cuda", False))
            elif name == "__enter__" and isinstance(node.func, ast.Attribute):
                inner = node.func.value  # ``torch.device("cuda").__enter__()``, ``ctx.__enter__()``
                found.append(_entered(path, node.lineno, inner, devices, "{}.__enter__()"))
            elif name == "enter_context" and node.args:
                found.append(_entered(path, node.lineno, node.args[0], devices, "enter_context({})"))
            elif name == "enter_context" or (name == "__enter__" and not isinstance(node.func, ast.Attribute)):
                found.append(DeviceSwitch(path, node.lineno, f"{_dotted(node.func)}(...)", False, False))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                context = item.context_expr
                if isinstance(context, ast.Call):
                    kind = _context_kind(context, devices)
                    if kind is None and (_last_name(context.func) not in NON_DEVICE_CONTEXTS or (
                            context.func.id in own_names if isinstance(context.func, ast.Name)
                            else _root_name(context.func) in own_modules)):
                        kind = "unknown"  # ``with accelerator_device():`` may enter the torch.device it returns
                    if kind is not None:
                        found.append(DeviceSwitch(path, node.lineno, f"with {_dotted(context.func)}(...)", kind == "cuda", True))
                else:  # ``with device:``, ``with ctx:``, ``with lock:``: a torch.device may be held in any name
                    found.append(DeviceSwitch(path, node.lineno, f"with {_shown_expression(context)}", False, True))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and any(f in node.value for f in SWITCH_FUNCTIONS):
            # ``getattr(torch, "set_default_device")(...)``: reached by its name as a string
            found.append(DeviceSwitch(path, node.lineno, repr(node.value) if len(node.value) < 40 else "a string naming "
                                      + next(f for f in SWITCH_FUNCTIONS if f in node.value), False, False))
    for node in nodes:  # ``set = torch.set_default_device``: handed around, called who knows how
        if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in called and _last_name(node) in SWITCH_FUNCTIONS:
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)):
                found.append(DeviceSwitch(path, node.lineno, _dotted(node), False, False))
    found.sort(key=lambda switch: switch.line)
    return found


def _entered(path: str, line: int, inner: ast.expr, devices: set[str], shape: str) -> DeviceSwitch:
    """A context entered by hand (``x.__enter__()``, ``stack.enter_context(x)``): whatever ``x`` is, it
    may be a device context; known to be CUDA only for ``torch.device("cuda")`` itself."""
    if isinstance(inner, ast.Call):
        cuda = _last_name(inner.func) in devices and _device_kind(inner) == "cuda"
        return DeviceSwitch(path, line, shape.format(f"{_dotted(inner.func)}(...)"), cuda, False)
    return DeviceSwitch(path, line, shape.format(_shown_expression(inner)), False, False)


def _shown_expression(node: ast.expr) -> str:
    if isinstance(node, (ast.Name, ast.Attribute)):
        return _dotted(node)
    text = ast.unparse(node)
    return text if len(text) < 40 else text[:37] + "..."


#: Libraries whose context managers ``NON_DEVICE_CONTEXTS`` names (``torch.no_grad``,
#: ``contextlib.suppress``, ``tqdm``, ``unittest.mock.patch``...).
_CONTEXT_LIBRARIES = frozenset({
    "torch", "lightning", "pytorch_lightning", "lightning_fabric", "contextlib", "warnings", "tempfile", "tqdm",
    "multiprocessing", "concurrent", "threading", "unittest", "pytest", "zipfile", "tarfile", "os", "io", "timeit",
    "time", "codetiming", "IPython", "numpy", "builtins",
})


def _own_names(nodes: list[ast.AST]) -> tuple[frozenset[str], frozenset[str]]:
    """(names the file binds to code of its own or of a module that is not a listed library: a
    ``def``/``class``/assignment of the name, an import from a relative module or another package,
    ``from utils import no_grad``; the names of such modules, ``import utils``). A context manager of
    the program named ``no_grad`` may return a ``torch.device``: its name proves nothing. (A method
    reached through an object, ``model.no_sync()``, is still read by its name.)"""
    names: set[str] = set()
    modules: set[str] = set()
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.ImportFrom):
            if node.level or (node.module or "").split(".", 1)[0] not in _CONTEXT_LIBRARIES:
                bound = {alias.asname or alias.name for alias in node.names}
                names.update(bound)
                modules.update(bound)  # ``from pkg import utils``: maybe a module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".", 1)[0] not in _CONTEXT_LIBRARIES:
                    modules.add((alias.asname or alias.name).split(".", 1)[0])
    return frozenset(names), frozenset(modules)


def _root_name(node: ast.AST) -> str | None:
    """``utils`` of ``utils.ctx.no_grad``; the name itself for a name."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _last_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else "..."


def _context_kind(call: ast.Call, devices: set[str]) -> str | None:
    """A context manager that may make CUDA the default device: "cuda", "unknown", or None (a
    ``torch.device`` of a literal non-CUDA device such as ``"meta"``, or no device context at all)."""
    name = _last_name(call.func)
    if name in SWITCH_CONTEXTS:
        return "unknown"
    return _device_kind(call) if name in devices else None


def _switch_kind(name: str, call: ast.Call) -> str | None:
    """"cuda", "unknown", or None where the call surely makes no CUDA default."""
    if name == "set_default_tensor_type":
        value = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "t"), None)
        text = _dotted(value) if isinstance(value, ast.Attribute) else _constant_str(value)
        if text is None or "..." in text:
            return "unknown"
        if text.startswith("torch.cuda."):
            return "cuda"
        # ``torch.FloatTensor``, ``"torch.DoubleTensor"``: a CPU type
        return None if text.startswith("torch.") and text.count(".") == 1 and text.endswith("Tensor") else "unknown"
    return _device_kind(call)


def _device_kind(call: ast.Call) -> str | None:
    """The device of ``set_default_device(x)`` / ``torch.device(x)``: "cuda", "unknown", or None (not CUDA)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return "unknown"
    value = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in ("device", "type")), None)
    if value is None:
        return "unknown"
    if isinstance(value, ast.Constant):
        if value.value is None:
            return None
        if isinstance(value.value, int) and not isinstance(value.value, bool):
            return "cuda"
        if isinstance(value.value, str):
            return "cuda" if value.value.split(":", 1)[0].strip() == "cuda" else None
        return "unknown"
    if isinstance(value, ast.Call) and _last_name(value.func) == "device":
        return _device_kind(value)
    return "unknown"


def _constant_str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _monitor_argument(call: ast.Call, position: int | None) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == "monitor":
            return _constant_str(keyword.value)
    if position is not None and len(call.args) > position:
        return _constant_str(call.args[position])
    return None


# --- the Lightning version a file runs with (DDP009) -------------------------------------------

FINDER_WORDS = (b"lr_find", b"LearningRateFinder", b"auto_lr_find")


def lightning_pin(path: str, data: bytes | None = None) -> LightningVersion | None:
    """The Lightning version the file at ``path`` runs with (``model.versions``), judged by the
    package its text imports."""
    from ddpfix.model.versions import imported_package, version_in_force

    return version_in_force(path, imported_package(data) if data is not None else None)
