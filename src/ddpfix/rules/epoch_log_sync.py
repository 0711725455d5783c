"""DDP004 epoch-log-sync: epoch-level ``self.log`` without ``sync_dist=True`` logs rank 0's shard only."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ddpfix.ast_walk import child_nodes, kept_on, walk
from ddpfix.analysis.ast_shapes import a_method_calls_self_log, every_node
from ddpfix import edits
from ddpfix.edits import Span
from ddpfix.analysis import call_paths
from ddpfix.analysis.attribute_access import names_stored_on_self_at
from ddpfix.analysis import lightning as tree_lightning
from ddpfix.analysis.ranks import TreeRankTests, rank_words
from ddpfix.analysis.ranks import only_returns as tree_only_returns
from ddpfix.analysis.ranks import gated_statements as tree_gated_statements
from ddpfix.lazy_regex import lazy_compile
from ddpfix.rules.base import Rule, RuleContext

if TYPE_CHECKING:  # the proofs load when the rule first checks a file: a run loads every rule
    from ddpfix.analysis import values as values_mod
    from ddpfix.rules._epoch_log_sync_safety import ClassFacts

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
LOG_METHODS = frozenset({"log", "log_dict"})
# Hooks whose self.log defaults to on_epoch=True (Lightning's logger connector).
EPOCH_HOOKS = frozenset({
    "validation_step", "test_step",
    "on_validation_batch_start", "on_validation_batch_end", "on_test_batch_start", "on_test_batch_end",
    "on_train_epoch_start", "on_train_epoch_end", "on_validation_epoch_start", "on_validation_epoch_end",
    "on_test_epoch_start", "on_test_epoch_end", "on_train_start", "on_validation_start", "on_test_start",
})
#: Lightning 1.x's epoch-end hooks (their argument: the steps' outputs). Lightning 2.x refuses to run
#: a module that defines one (``configuration_validator``: "Support for `validation_epoch_end` has been
#: removed in v2.0.0"), so a module that has one runs under 1.x, where they log per epoch.
V1_EPOCH_HOOKS = frozenset({"training_epoch_end", "validation_epoch_end", "test_epoch_end"})
EPOCH_DEFAULT = EPOCH_HOOKS | V1_EPOCH_HOOKS
# Hooks whose self.log defaults to on_step=True, on_epoch=False.
STEP_DEFAULT = frozenset({
    "training_step", "on_train_batch_start", "on_train_batch_end", "on_before_backward", "on_after_backward",
    "on_before_optimizer_step", "on_before_zero_grad",
})
LOGGING_HOOKS = EPOCH_DEFAULT | STEP_DEFAULT


class EpochLogSync(Rule):
    """
    # DDP004 epoch-log-sync

    ## What it does
    Adds `sync_dist=True` to `self.log` / `self.log_dict` calls of a LightningModule that log per
    epoch and say nothing about `sync_dist`: in `validation_step`, `test_step`, the `on_*_epoch_*`
    hooks and the other hooks where `on_epoch` defaults to True, anywhere with `on_epoch=True`, and
    in the methods those hooks reach through `self.<method>(...)` calls of the class (and of the
    classes of the file it derives from): a log in `_shared_step` called from `validation_step` is
    per epoch. A hook reaches a log of such a method only through a call whose literal arguments
    let it: `self._shared_step(batch, "train")` from `training_step` does not reach the log under
    `if stage == "val":` (the parameter bound to a literal, or to its literal default, and never
    bound again in the method; `==`, `!=`, `in`, `not in`, `not`, `and`, `or` on literals; any
    other test may go either way). Where one log is reached from hooks with different defaults
    (`training_step`, per step, and `validation_step`, per epoch), the finding names both. It also reports
    `log = partial(self.log, ...)` then `log(...)`, Lightning 1.x's `validation_epoch_end(self,
    outputs)` / `training_epoch_end` / `test_epoch_end` (Lightning 2.x refuses to run a module that
    defines one, so such a module runs under 1.x, where they log per epoch: the finding says so),
    and a Callback's `pl_module.log(...)` in its epoch-level hooks (the `Callback` base resolved
    through the imports and the classes of the file).

    It does not report a value that is already the same on every rank, where rank 0's value is the
    global one and `sync_dist` is meaningless or ignored: the result of `self.all_gather(x)` or of
    `trainer.strategy.reduce/all_gather/broadcast(x)` (no sub-`group`), a tensor handed to
    `torch.distributed.all_reduce` / `broadcast` (or the list `all_gather` fills) before the log on
    every path, `metric.compute()` of a torchmetrics object (also kept in a local), torchmetrics
    `Metric` and `MetricCollection` objects (`MetricCollection(...)`, `.clone(prefix=...)`, a
    `ModuleDict` of them, a dict of them given to `log_dict`, a container that starts empty and into
    which only they are put, item by item, and each of them in a loop over its `items()` or
    `values()`; a container into which anything else is put, a tensor too, is not one of them), and what known pure operations make
    of these (`gathered.sum()`, `acc.item()`, `total / 2`). Nor a value the same on every rank at each
    step, where the epoch's mean, max or min is too: a number written out (`self.log("kl", 0.0)`),
    Lightning's epoch counter (`self.current_epoch`, `self.trainer.current_epoch`, a Callback's
    `trainer.current_epoch`; not where a class of the file defines `current_epoch` or `trainer`),
    and arithmetic of these, where its key gets no other value (no other log of the program writes
    that key, nor one built at run time: `1.0` in one branch and `0.0` in another is a per-rank
    value); with `reduce_fx="sum"` such a value counts this rank's steps, a shard, and is reported. Values are followed through the hook's
    locals in order and through attributes every assignment of which builds a metric
    (`ddpfix.analysis.values`). What is not proven global is reported: an attribute whose class is
    not resolved (`self.acc = build_metric()`) may be a tensor, a Metric or anything; a Metric built
    with `sync_on_compute=False` or a `process_group` computes per rank; a gather over a `group=`,
    an `all_reduce` under an `if` or after the log, and `gathered[self.global_rank]` are not global.

    ## Why it breaks under DDP
    Each rank reduces its own shard of the epoch; without `sync_dist=True` the value logged (and
    seen by `ModelCheckpoint`, `EarlyStopping` and schedulers) is rank 0's shard only, and Lightning
    warns: "It is recommended to use `self.log('val_loss', ..., sync_dist=True)` when logging on
    epoch level in distributed setting to accumulate the metric across devices." Without a DDP
    strategy `sync_dist=True` costs nothing (with `strategy="ddp"` it syncs even on one device).

    ## Before
    ```python
    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.loss(batch))
    ```

    ## After
    ```python
    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.loss(batch), sync_dist=True)
    ```

    A value that may be a CPU tensor makes the fix unsafe: a synced value is all-reduced on its own
    device, and NCCL refuses CPU tensors ("No backend type associated with device type cpu"). It
    may be one where it comes from `.cpu()`, `.numpy()` or `.tolist()`; from `.to(...)` or
    `.type(...)` to anything not proven to be the rank's GPU (proven: a dtype, `self.device` or any
    `x.device`, `"cuda"`, a name the method binds only to these; not proven: `"cpu"`, a numbered
    GPU such as `"cuda:0"`, which is GPU 0 on every rank, `self.eval_device`, a parameter); or
    from a `torch` function not known to follow its inputs' device (`torch.tensor`, `torch.eye`, `torch.hann_window`...; known: math, reductions,
    `stack`/`cat`, comparisons, `*_like`) without such a device, or a torchmetrics function that
    makes one of its own on some path (`binary_calibration_error` returns `torch.tensor(0)` when
    there is no error; also the fairness, log-AUC, fixed-recall/precision, Jensen-Shannon and
    Kendall functions, read from torchmetrics 1.9's sources). The value is followed through every
    binding of the method (`=`, `x: T =`, `+=`, `:=`, `for`), the class's helpers it calls,
    `self(...)`'s `forward`, a module class of the file it holds, `on_after_batch_transfer` and, for
    a batch-end or 1.x epoch-end hook, the step's returns and locals. A class that moves its batches
    itself (`transfer_batch_to_device`) may leave any of them on the CPU, and so may the module's
    batch-start hook (handed the same batch first), a data module's `on_before_batch_transfer`,
    `on_after_batch_transfer` or `transfer_batch_to_device` (bound by a `def`, an assignment in a
    class or a store on a class or an instance, a store by a name made at run time too: `setattr(self,
    key, value)` or `self.__dict__.update(config)` in any class, whose methods may run on a module,
    a data module or a callback in ways the text does not show; not one whose names are known and
    name no hook: `self.__dict__.update(locals())` in an `__init__` stores its parameters), a batch class's own `to`
    (Lightning calls it), a strategy's `batch_to_device`, a data module Lightning is handed that is
    not read up to `LightningDataModule` (a library's, a class of the program deriving from
    one, data the text does not show: a parameter another file may fill, a configuration's), and a
    batch read as an object (`batch.y`: Lightning's move enters only collections and dataclasses,
    and calls an object's own `to`). What `fit`, `validate`, `test` and `predict` are handed is
    followed through names, unpacking, the program's functions and their parameters
    (`model.handed_data`; a data module built by Lightning's `from_argparse_args` or
    `load_from_checkpoint` is one of the class it is called on); a call whose model is provably of
    another class (read up to Lightning's, a class a function defines too) hands this module none
    of its data (a module the checkout lacks may still be imported: a gitignored folder, a build's
    output, an extension module). A data module's
    `transfer_batch_to_device` is proven to move it all where it is a
    straight run of `del batch["names"]`, moves and returns of Lightning's own move of the batch or
    of a field of it (`super().transfer_batch_to_device(batch, device, dataloader_idx)`), in a class
    deriving from Lightning's alone through undecorated classes of its file that bind the name by
    `def` only, and no class of the program mixes it with another base. Its `on_before_batch_transfer`
    is proven harmless where every return is a tensor (`torch.from_numpy(x).float()`), a part of a
    batch only read (by no nested function either), a number, a string or None, or a dict, list or
    tuple written of these: Lightning's move then enters it whole. What a Python number is
    made of (`.item()`, `float(...)`, `len(...)`) does not count, and a logged number needs no batch
    proof at all: Lightning puts a number on the module's device. Nor does what a held module's
    `__init__` makes only to register as a buffer or parameter (a positional encoding's table):
    it moves with the module.

    ## When it does not fix
    Never touches a call that passes `sync_dist` at all (even `False`: you decided), one with
    `rank_zero_only=True` or `*args`/`**kwargs`, one under a rank guard (DDP003's case) or under any
    `if` whose test mentions a rank (a synced log that only some ranks reach hangs), or a helper
    whose only calls from hooks are under such a guard.
    Step-level logging (`training_step` without `on_epoch=True`, and helpers only it reaches) is left
    alone. A call whose comments sit where the new argument would go (`self.log("x", v,  # why` then
    a next line) is reported, not rewritten: the comment would be repeated or lost.

    ## Fix safety
    A safe fix also needs the whole project read with no iterable dataset named in any file of it
    (Lightning does not shard one, so a batch is not proven to be this rank's own): in a partial view
    (stdin without `--stdin-filename`, an unsaved editor buffer) the fix is **unsafe**.

    `sync_dist=True` turns a log into collectives that Lightning runs per key, in the order in which
    each rank first logged its keys: a rank that skips a synced key hangs the others, and keys first
    logged in another order average values of different keys together. Adding it is **safe** only
    when all of this is proven, and **unsafe** (applied with `--unsafe-fixes`, the reason shown)
    otherwise:

    - **Every rank makes the call, in the same order.** The call is a statement of its own in
      `validation_step`, `test_step`, `training_step`, an `on_{train,validation,test}_batch_{start,end}`
      hook, an epoch/start hook or Lightning 1.x's `training_epoch_end` / `validation_epoch_end` /
      `test_epoch_end` (a module that defines one runs under 1.x, whose loops call it on every rank
      once per epoch; its `outputs` are known when every `return` of the step is), with no decorator
      but grad mode's, not defined twice: Lightning calls these on every rank, the same number of times (its
      DistributedSampler gives every rank the same number of batches). The file's own code may call
      the hook only as `self.<hook>(...)` from another such hook of the class, reached there on
      every call, with arguments that are that rank's own (`return self.validation_step(batch,
      batch_idx)` in `test_step`). Only `with torch.no_grad()` / `inference_mode()` /
      `enable_grad()` / `set_grad_enabled()` / `autocast()` may enclose it, and an `if` whose test
      every rank decides alike: built by operators from constants, `self.current_epoch`,
      `self.global_step` and the loop index Lightning passes the hook by position (a step's third
      argument: 1.x's `optimizer_idx`, the evaluation's `dataloader_idx`; a batch-end hook's fourth;
      not where a file of the program names truncated back-propagation, whose `hiddens` 1.x passes
      there). A
      `return` or `raise` before it must stand under such `if`s only. Any other `if`, `for`,
      `while`, `try` or `match` makes it unsafe. `batch_idx` is not taken as rank-invariant, nor is
      a guard held in a variable or a property. A log in a helper method (one Lightning does not
      call) is proven through its callers: every call of the helper is `self.<helper>(...)` in such
      a hook or in such a helper, a statement of its own (or the whole value of a `return` or an
      assignment) reached there on every call, with that rank's own values (none of them a CPU
      tensor); the helper is a plain method of the class (not decorated but for grad mode, not a
      generator, constant defaults, not a name Lightning or torch calls, not defined again, not
      replaced at run time); nothing else reads its name: not the file (`partial(self._report)`,
      `model._report(...)`, `super()._report()`, a string `"_report"` that `getattr` may take) and
      not another file of the program (a callback's `pl_module._report(...)`:
      `ProjectFacts.named_elsewhere`). An `if` in the helper may test a parameter every call fills
      alike (a constant: `self._report(loss, verbose=True)`, or the caller's loop index). A log
      reached from `training_step` too (where it logs per step) gets `sync_dist=<test>` instead,
      where one parameter of the helper tells the calls apart, every call reaching the log passing
      it a string literal and the training ones values no epoch-level one passes:
      `sync_dist=stage != "train"` syncs the epoch-level calls and leaves each training step's
      value as it was. Without such a parameter the fix is unsafe (`sync_dist=True` would sync
      every training step's value as well; so is a log with `on_epoch=True` in a training hook,
      which logs each step's value too unless `on_step=False`), as is one through a `partial(self.log, ...)`, and a Callback's
      `pl_module.log` (which modules it is attached to, and whether every rank reaches it in the
      same order, is not read).
    - **Keys every rank shares.** `self.log`'s name is a string literal, or an f-string, `+` or `%`
      of literals and values every rank shares at that call (a helper's parameter every caller
      passes a literal: `f"{stage}_loss"`; a hook's loop index); `self.log_dict`'s argument is a
      dict display with such keys. Loop variables (even over a literal tuple), dict comprehensions
      and MetricCollections are unsafe.
    - **A number, or a per-rank value.** A value logged once per epoch (an epoch-level hook, no
      batch) that is a Python or NumPy number whenever the program gets past it (`x.item()` where
      no class of the program defines `item`, `float(...)`, `int(...)`, `len(...)`, a `math`
      function that converts its argument to a float (not `prod`, `floor`), arithmetic of numbers,
      `sum` of a local list of numbers, `np.mean` and NumPy's other reductions of a local list, a
      local name bound only to such) needs no more: Lightning makes it a tensor on the module's
      device, and the reductions let through (a mean, max or min) of a number every rank already
      shares is that number. Per batch it does not hold: Lightning weighs the epoch mean by each
      rank's summed batch sizes, synced as integers, and where they differ (a dataset the program
      shards, drawn at random) a shared number comes out scaled. Any other value must be this rank's own,
      built from the hook's arguments (the batch, its index; a
      batch-end hook's `outputs` only when every `return` of the step is itself per-rank) and
      constants, through operators, subscripts, comprehensions, `torch.*` functions one level deep
      (not `torch.load`), `torch.nn.functional`, `torch.linalg`/`special`/`fft`,
      `torchmetrics.functional`, NumPy's one-level functions (not those that load, save or change an
      argument), a list of tensor methods (`mean`, `argmax`, `float`, `item`, `chunk`, ...), such a
      function kept on the module (`self.loss_fn = F.mse_loss`), the class's own helper methods
      (`loss, acc = self._evaluate(batch)`: followed into their body when they are plain methods
      (not decorated, no generator, constant defaults), every `return` is known the same way and
      the helper changes none of its arguments in place), the module's own `forward` (`self(x)`),
      read the same way (and unsafe if it names a collective), and the modules it holds
      (`self.head(x)`, a local `criterion = nn.CrossEntropyLoss()`, a module built and called at once:
      `nn.CrossEntropyLoss()(logits, y)`) where every assignment builds
      a known module, directly or through a factory method of the class whose every `return` does
      (`self.head = self.build_head()`) or a function of the file whose every `return` does,
      directly or through a local built by a known call and left as built (`model =
      resnet18(num_classes=10)`, `model.fc = nn.Identity()`, `return model`), or stores a parameter of the class's `__init__`
      (`self.model = model`) that every construction of the class in the program hands a known
      module: a call that builds one (`Lit(nn.Linear(4, 2))`), or a name every binding of which
      builds one and every use of which leaves it as built (handing it to the class, calling it,
      copying it with `copy.deepcopy`,
      `parameters()`, `eval()`, `to(...)`, `load_state_dict(...)` and `nn.Module`'s other methods
      that leave its code alone, on it or a part of it, as statements where they return the module
      itself (`backbone.eval()`); another known module put in a part's place; a function of the file,
      or a plain class of the file keeping it, that uses it only so; a file whose name means
      another class of that name, its own or one it imports from another file, and that reaches
      this one no other way, builds that one). Such a class must be named only by calls that
      build it (no subclass, `load_from_checkpoint`, alias or string of its name; no
      `type(m)(...)`, `klass = type(self)`: an object's class taken but to read its name or compare it), in a program with no loader of classes named at run time or of pickled
      objects (LightningCLI, hydra, `pickle.load`) and no configuration file naming it. Nothing may
      change such a module after it is built (no method
      called on it in the class but those that read it or set its training mode, so no
      `self.head.append(m)` or `self.head.cpu()`; no `self.head[0] = m` or `self.head.fc = m`; no
      file of the program storing a `.head` on anything: `model.head = Other()`, nor using a `.head`
      of another object than `self` otherwise than by calling it, calling a method that leaves its
      code or reading an attribute of it: `lm.head.register_forward_hook(f)`, `freeze(lm.head)`;
      no other way to it in the class, `self.first = self.head[0]`, nor to every part at once,
      `self.modules()`, `lm.modules()`, a global module hook, `apply(f)` but with a function of the
      file or a plain method of the class that only initialises weights: `isinstance` tests,
      `nn.init.xavier_uniform_(m.weight)`, `m.bias.data.zero_()`; in the class too, a part of it
      filled so in a statement of its own, `nn.init.zeros_(self.head.weight)`; either only where no
      code of the program defines a method of a fill's name, `def zero_(self)`, which the call
      might run instead of torch's). A library's model
      is known only where the program adds nothing to the library's registry (`@register_model`,
      `AutoModel.register(...)`), and a torch layer only where no file replaces a `forward` or
      `__call__`, patches a torch function (`F.linear = f`, `nn.Module._call_impl = g`, a
      `__code__`) or intercepts them all (a `TorchFunctionMode`, `__torch_function__`).
      A known module is a `torch.nn` layer; a container
      (`nn.Sequential`, `ModuleList`, `ModuleDict`, a transformer stack) only of known modules,
      written in its arguments or appended to a list of the function (`nn.Sequential(*layers)`);
      a known module given torch's weight or spectral normalisation (`weight_norm(nn.Conv1d(...))`);
      a class taken from a registry of the file (`MODELS[name](...)`, a global dict every binding
      and store of which holds module classes of the program read whole, no other file importing it);
      a model of a well-known library built from constants alone (`transformers` model classes'
      `from_pretrained` without `trust_remote_code`, torchvision's builders, `timm.create_model`;
      not a tool that wraps a model it is handed; a name only under a keyword that takes data,
      `num_classes=n`, not `activation=Cls`, `act_layer=`, `blocks=`); or a module class of the program, of this file
      or of another one that a name of this file certainly means (`from .components import Head`,
      through package re-exports; not a name a star import or a parameter may bind), read whole:
      no class decorator, metaclass or `__call__`, nothing but constants bound in its body, bases
      `torch.nn.Module` (or a non-container layer, or LightningModule) through classes of its file,
      no collective and nothing that may make a CPU tensor in its methods or in the functions of
      its file they call, no call of a function it does not read nor imported code handed on
      (`checkpoint(block, x)`, a decorator, `o = ops`), no hook or parametrization it registers on
      itself, no method replaced on the instance (`self.forward = f`), nothing of `torch.ops`, no
      `SyncBatchNorm` (nor a base that is one under another name), no torch layer handed code it
      runs (`TransformerEncoderLayer(activation=f)` but for a string or torch's own function),
      every module it calls built in
      its own code by a known call (not handed in: `self.scorer = scorer`), and no file of the
      program replacing one of its methods or binding its name or a layer's to another class
      (`Head.forward = f`, `setattr(nn, "Linear", Mine)`, `vars(m).update(...)`); NumPy's size
      functions (`np.prod`) may build its sizes in `__init__`. A module built in `__init__` from a
      class a parameter holds (`act_fn()`, `norm_layer(width)`, `self.encoder = encoder_class(...)`,
      or handed on: `Block(dim, act_fn=act_fn)`) is known where, at every construction, the parameter
      is handed (or keeps as its default) a non-container, non-collective `torch.nn` layer or a module
      class of the program read with what its own parameters hold there; the parameter must not be
      bound again in `__init__`. A torch factory's sizes must be
      known like any argument (`torch.randn(x.shape[0], 8)`): an `hparams` entry holds what the
      constructor was handed, and reading an object as a size runs its `__index__`. Functions,
      tensor methods and factories count only where no file of the program rebinds their name
      (`F.mse_loss = f`). Nothing that runs before the log may change such a value in place: no
      unknown call handed anything that reaches it (`dist.all_reduce(errors.view(-1))`,
      `map(dist.all_reduce, [loss])`, `x.add_(...)`, any `out=`), no store through it or a name
      that may share its object (a view, an item, an unpacked tuple, a helper's parameters:
      `flat[:] = g`, `flat += g`), no helper storing another argument into it (`acc += value`) or
      changing it in a nested function, and, once it is handed to the module (`self.last = loss`,
      `self.window.append(loss)`, a store through `stats = self.stats`, a helper that keeps what
      it makes), no later method of the class that may change what the module holds, and no later
      unknown call. A call's own effect on what it is handed does not count for the values it is
      handed (`self._step(x)` reads `x` before it runs); the builtin `print` and `self.print`
      read only, where nothing in the program binds `print` otherwise (not a logger, whose filters
      and handlers are handed the values, nor `manual_backward`, whose `on_before_backward` hooks
      are). A hook's batch is this rank's own only where nothing changes it before the hook: no
      `on_*_batch_start` of the class that may change it or of a callback of the program, no
      batch-transfer hook; a batch-end hook's `outputs` and `batch` only where the step keeps and
      changes neither and no callback defines that hook. Anything else (`self.<attribute>` holding a constructor's argument or a
      factory's result, a gather over a sub-group, `all_reduce` on some paths only) is of unknown
      provenance, possibly global already or a CPU tensor; the reason names it (`self.backbone`
      holds `backbone` (line 29), an object whose class is not read; `Head` may make a CPU tensor
      (`.cpu(...)`, line 10); the class `Wider` (wider.py:4), which derives from `Classifier`,
      defines `_loss`, which is not followed).
    - **Known flags.** `reduce_fx` absent or one of `"mean"`/`"max"`/`"min"` (or `torch.mean` ...):
      a mean, max or min of a value every rank already shares gives it back, so only a per-rank
      value changes; a `"sum"` adds the value once per rank, right only where each rank's value
      counts its own samples (not global already, the data sharded), which is not proven: unsafe. No
      flags by position, no `sync_dist_group=` or `metric_attribute=`; `on_step=` a literal, and not
      `True` outside the training hooks (a per-batch sync needs equal batch counts); `batch_size=` a
      literal int, or, where the program makes no batches of its own and Lightning's sampler shards
      the data, the step's batch length (`len(x)`, `x.shape[0]`, `x.size(0)` of the batch or of a
      field taken by string keys, `batch["image"]`, through names bound once; not a part taken by
      position or unpacking, which on a tensor batch is a sample) or absent. Making batches of its
      own: a `collate_fn`, `batch_sampler`, `BatchSampler`, `batch_size=None` (in a call, a dict
      or a config), an `on_before_batch_transfer`/`on_after_batch_transfer` (it may filter or
      reshape the batch) or a class deriving from `DistributedSampler` (Lightning keeps it; its
      shards may differ in length), anywhere in the program; `use_distributed_sampler` set to
      anything but a literal `True` anywhere in the run (a name, a config's entry, an argparse
      option or attribute of that name, a YAML `off`/`No` or JSON `false` in a configuration file,
      `PL_TRAINER_USE_DISTRIBUTED_SAMPLER` (in a launch script, a Dockerfile, an `.envrc`, a YAML
      env block, the program's own `os.environ`) or `--trainer.use_distributed_sampler` in a launch
      script; `Trainer(**cfg)` (under any name the Trainer is bound to, a subclass, a factory named
      for it), LightningCLI, `from_argparse_args`, `instantiate_class` or hydra, whose command line may
      set it, where the program's data may differ by rank: code reading the rank other than to
      decide what to report, `RANK`, `WORLD_SIZE`, `SLURM_PROCID`, `rank_zero_only`, a
      `prepare_data` that keeps state on the instance (Lightning runs it on local rank 0 alone), a
      draw no seed makes alike, Python's string `hash(...)` or `np.random.default_rng()`, or no
      `seed_everything`) refuses all but a literal. Lightning infers the size from the batch's
      first tensor and syncs each rank's summed sizes as integers, a sum then a floor division by
      the world size, so sizes that differ between ranks change a weighted mean. With the sampler
      on, ranks whose datasets differ in length (a shard by rank, a random subset) make that synced
      mean approximate, by less than (world size - 1) / samples: Lightning's meaning of
      `sync_dist=True`, as the sampler's padding is; the unsynced value was this rank's shard
      whatever the lengths, so no correct value changes and the lengths are not asked.
    - **Every rank runs a batch.** A per-batch hook's epoch value syncs at the epoch's end on
      the ranks that logged it: where the program batches its own data (a `batch_sampler`, a
      `BatchSampler`, a class deriving from `DistributedSampler`) or may turn Lightning's
      distributed sampler off, a rank may run no batch and the others wait for it.
    - **Every rank validates at the same step.** A validation log's sync runs while `fit`
      validates, which Lightning decides on each rank from `val_check_interval`. A duration there
      (Lightning 2.6: a `timedelta`, `"DD:HH:MM:SS"`, a dict) is read from each rank's own clock,
      so the ranks validate at steps of their own, and a synced validation log waits for a rank
      still training: a hang where the original, which runs no collective there, finished. Refused
      where the program may set one: `val_check_interval=` not a literal number in any file of the
      run (a name, a string key, an argparse option or attribute of that name), a configuration or
      launch script (`PL_TRAINER_VAL_CHECK_INTERVAL`, `--trainer.val_check_interval`) that sets it
      to what is not a number, or LightningCLI or hydra, whose command line may set any argument;
      not where the Lightning version in force has no durations (before 2.6). `Trainer(**cfg)`
      takes what the program's text and files hold, which are read.
    - **This rank's own data.** The file names no iterable dataset (`IterableDataset`,
      `IterDataPipe`, defined or used): Lightning does not shard one, every rank may read the
      whole stream, and a synced `reduce_fx="sum"` would count each sample once per rank.
    - **Nothing else may sync out of order.** No other log of the class or its in-file bases that
      may sync (`sync_dist` not literally `False`, `**kwargs`, or a value that may be a Metric) is
      reached conditionally, from a helper or with a run-time key, and no log through another
      object in the file (`pl_module.log(..., sync_dist=True)`) syncs: a new sync could pair with it.
    - **Everything is seen.** The class's bases are Lightning's `LightningModule`, `abc.ABC`,
      classes of the same file (methods looked up in Python's C3 order, as with mixins) or classes
      of another file of the program read there with that file's imports (a name such a base
      defines and the class does not define itself is known to exist, not followed; its file's
      own calls of a hook count; its syncing logs must run in one order on every rank, and not
      again through `super()` or `Base.m(self)` from here); it has no class decorator and defines
      no `log` of its own; every class of the program that derives from it is read too (the
      module that runs may be one of them): seen whole, its syncing logs in one order on every
      rank, and what it defines or assigns unknown here (a hook it defines again without reaching
      this one through `super()` only keeps this one from running for it); the hook has no decorator but grad mode's (`@torch.no_grad()`); neither the hook nor a helper
      followed is replaced at run time by the file's code (`Model._evaluate = f`, `setattr(...)` on
      another object, `type(name, bases, ns)`, the class handed around as a value: `Base = Model`,
      or handed to a function that may derive a class from it; a function of the file that only
      builds it or reads its name, `train_model(Model, ...)` doing `model_class(**kwargs)`, leaves
      it as it is); a helper that changes an argument in place
      with a value not known to be per-rank makes what the caller passed unknown after the call;
      1.x's `<step>_end`, where defined, replaces the outputs the epoch-end hooks receive; with `use_distributed_sampler=False` known from
      the run, fixes in the evaluation batch hooks are unsafe (ranks may run different numbers of
      batches, some none).

    What the proof assumes: Lightning, not user code, calls the hooks (a subclass is seen where a
    class statement of the project names the module, by any alias it imports it under, but not one
    made from another file's alias (`Base = model.Model`) or by `type(...)` there, nor a callback in
    another file that logs conditionally with `sync_dist=True`); the batch is this rank's own data
    (a dataset built in another file is taken to be a map-style one that Lightning's
    DistributedSampler shards); the well-known libraries' models named above compute on their
    inputs' device with no collective.
    """

    code = "DDP004"
    name = "epoch-log-sync"
    summary = "Epoch-level self.log without sync_dist=True: the value is rank 0's shard only"
    fixable = True
    triggers = (".log", ("_step", "epoch", "_start", "batch_end"))
    lightning_only = True
    module_only = True
    module_kinds = frozenset({"LightningModule", "Callback"})  # a Callback's ``pl_module.log`` too
    uses_facts = True

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        return a_method_calls_self_log(tree) or _a_method_logs_through_a_parameter(tree)

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """The one analysis: findings, each fix's applicability, and its typed edit
        (``sync_dist=True`` set on the call), which the engine carries out on LibCST's tree."""
        # Imported here, not at the top: a run loads every rule, and only files this rule checks need them.
        from ddpfix.analysis.keyword_comments import keyword_edits_keep_comments
        from ddpfix.analysis.values import ObjectKinds
        from ddpfix.rules._epoch_log_sync_safety import ClassFacts, fix_problem, subclassed_beyond_thin
        from ddpfix.rules._log_sync_walks import EPOCH_LEVEL_HOOKS, VALIDATION_HOOKS

        tests, words = TreeRankTests(ctx.imports, tree), rank_words(ctx.imports)
        objects: dict[ast.ClassDef, tuple[ObjectKinds, bool]] = {}
        safety: dict[ast.ClassDef, tuple[ClassFacts, ast.Call | None]] = {}
        sampler_off = _sampler_may_be_off(ctx)
        uneven = ctx.facts.hazard("uneven batches", ctx.path)
        clock = _validation_by_the_clock(ctx)
        reach = _hooks_reaching(tree, ctx, tests, words)
        sole_keys = _sole_keys(tree, ctx)
        for cls, method in tree_lightning.lightning_methods(tree, ctx.imports, ctx.facts.of_kind("LightningModule", ctx.path)):
            logs = [(call, call, None) for call in tree_lightning.self_method_calls_in_body(method, LOG_METHODS)]
            logs += _logs_through_partials(method, ctx.imports)
            found = []
            for real, call, partial in logs:
                level = _level(call, reach.of(method, real))
                if level is not None and _unsynced(call):
                    found.append((real, call, partial, level))
            if not found:
                continue
            kept = {id(c) for c in _not_rank_gated([real for real, *_ in found], method, tests, ctx.view, words)}
            for real, call, partial, (epoch_paths, step_paths) in found:
                if id(real) not in kept:
                    continue
                if cls not in objects:
                    lineage = _lineage(tree, cls)
                    kinds = ObjectKinds(tree, lineage, ctx.imports, ctx.facts.of_kind("Metric", ctx.path),
                                        subclassed=ctx.facts.subclass_place(cls.name, ctx.path) is not None
                                        or _subclassed_in_file(tree, cls))
                    objects[cls] = (kinds, "all_gather" not in kinds.defined)
                kinds, own_gather = objects[cls]
                values = _function_values(method, kinds, ctx.imports, "self", None, own_gather)
                if _already_global(call, real, values, lambda log, cls=cls: sole_keys(log, cls)):
                    continue
                if cls not in safety:
                    subclassed = subclassed_beyond_thin(ctx.facts, cls.name, ctx.path, tree,
                                                        ctx.facts.subclass_place(cls.name, ctx.path))
                    facts = ClassFacts(tree, cls, ctx.imports, subclassed,
                                       ctx.facts.hazard("truncated back-propagation", ctx.path),
                                       lambda name: ctx.facts.named_elsewhere(name, ctx.path),
                                       ctx.facts, ctx.path)
                    safety[cls] = (facts, facts.unordered_sync())
                facts, unordered = safety[cls]
                message = _message(call, method.name)
                # A helper's log reached per step too: synced only on the epoch-level calls, where a
                # literal argument tells them apart (``sync_dist=stage != "train"``).
                condition = None if partial is not None or not step_paths else \
                    _sync_condition(method, real, reach, epoch_paths, step_paths, ctx.view)
                detail = _detail(call.func.attr, method.name, epoch_paths, step_paths, value=condition or "True")
                if not keyword_edits_keep_comments(real, ctx.view, None, "sync_dist"):
                    # What --write would refuse (apply_edits keeps every comment): --check says so too.
                    ctx.report(real, message, detail=detail + " (not rewritten: a comment inside the call would be lost)",
                               fixable=False)
                    continue
                why = ((None if condition else _path_problem(method, epoch_paths, step_paths, partial))
                       or _cpu_value(call, method, ctx.imports, facts)
                       or fix_problem(facts, method, call, unordered, sampler_off, uneven) or ctx.facts.hazard("iterable data", ctx.path)
                       or _results_on_the_cpu(ctx)
                       or (clock if facts.roots(method) & VALIDATION_HOOKS else None)
                       # once per epoch (no batch: each rank's size is 1) no size is inferred
                       or (None if facts.roots(method) <= EPOCH_LEVEL_HOOKS else _inferred_batch_size(call, ctx)))
                ctx.report(real, message, detail=detail, fixable=True, safe=why is None, why=why or "",
                           edits=[edits.SetKeyword(Span.of(ctx.position(real)), "sync_dist", condition or "True")])
        self._check_callbacks(tree, ctx, tests, words)

    def _check_callbacks(self, tree: ast.Module, ctx: RuleContext, tests: TreeRankTests, words) -> None:
        """A Callback's hooks log through the module they are given (``pl_module.log(...)``), with the
        hook's defaults: reported, never fixed safely (which modules the callback is attached to, and
        what else they log, is not read)."""
        from ddpfix.analysis import values as values_mod
        from ddpfix.analysis.keyword_comments import keyword_edits_keep_comments

        for cls in _callback_classes(tree, ctx.imports, ctx.facts.of_kind("Callback", ctx.path)):
            for method in cls.body:
                if not isinstance(method, FUNCTIONS) or method.name not in LOGGING_HOOKS:
                    continue
                positional = [*method.args.posonlyargs, *method.args.args]
                if len(positional) < 3:
                    continue
                trainer, module = positional[1].arg, positional[2].arg
                if module in values_mod.stored_names(method):
                    continue  # the name is rebound: not (only) the module Lightning passes
                hooks = {method.name: method.name}
                found = [(call, _level(call, hooks)) for call in _calls_through(method, module)]
                found = [(call, level) for call, level in found if level is not None and _unsynced(call)]
                if not found:
                    continue
                kept = {id(c) for c in _not_rank_gated([call for call, _ in found], method, tests, ctx.view, words)}
                values = _function_values(method, None, ctx.imports, module, trainer, True)
                for call, (epoch_paths, step_paths) in found:
                    if id(call) not in kept or _already_global(call, call, values, _sole_keys(tree, ctx)):
                        continue
                    label = module + tree_lightning.log_label(call)[len("self"):]
                    message = f"{label} in {cls.name}.{method.name}: epoch value without sync_dist"
                    detail = _detail(call.func.attr, f"the callback hook {method.name}", epoch_paths, step_paths,
                                     receiver=module)
                    if not keyword_edits_keep_comments(call, ctx.view, None, "sync_dist"):
                        ctx.report(call, message, fixable=False,
                                   detail=detail + " (not rewritten: a comment inside the call would be lost)")
                        continue
                    why = (f"it is logged by the Callback `{cls.name}` through `{module}`: which modules it is attached "
                           "to, and whether every rank reaches this call in the same order, is not proven")
                    ctx.report(call, message, detail=detail, fixable=True, safe=False, why=why,
                               edits=[edits.SetKeyword(Span.of(ctx.position(call)), "sync_dist", "True")])


def _message(call: ast.Call, hook: str) -> str:
    return f"{tree_lightning.log_label(call)} in {hook}: epoch value without sync_dist"


def _detail(method: str, hook: str, epoch_paths: dict[str, str] | None = None,
            step_paths: dict[str, str] | None = None, receiver: str = "self", value: str = "True") -> str:
    text = (
        f"{receiver}.{method}(...) in {hook} logs per epoch without sync_dist: under DDP "
        "the value logged (and seen by checkpoints and early stopping) is rank 0's shard only; "
        f"add sync_dist={value}"
    )
    paths = [via for name, via in (epoch_paths or {}).items() if via != name]
    if paths:
        text += f" (reached from {', '.join(sorted(paths))})"
    if step_paths:
        text += (f"; it is also reached from {', '.join(sorted(step_paths.values()))}, where it logs per step, "
                 "not per epoch" + (", and the test syncs only the epoch-level calls" if value != "True" else ""))
    v1 = sorted(set(epoch_paths or {}) & V1_EPOCH_HOOKS)
    if v1:
        text += (f"; `{v1[0]}` is a Lightning 1.x hook (Lightning 2.x refuses to run a module that defines it): "
                 "Lightning 1.x is assumed, where it logs per epoch")
    return text


def _path_problem(method, epoch_paths: dict[str, str], step_paths: dict[str, str], partial: ast.Call | None) -> str | None:
    """Why the hooks that reach the log keep its fix from being proven (None: it is a hook's own log)."""
    if step_paths.get(method.name) == method.name:
        return (f"it also logs each step's value in `{method.name}` (line {method.lineno}; `on_step`, Lightning's default "
                "there): sync_dist=True would sync every step's value too")
    if step_paths:
        return (f"`{method.name}` is also reached from {', '.join(sorted(step_paths.values()))}, where this log is "
                "per step: sync_dist=True would sync every step's value there too")
    if partial is not None:
        return (f"it logs through `{ast.unparse(partial)[:40]}` (line {partial.lineno}): the proof does not follow "
                "a log through a partial")
    return None


def _unsynced(call: ast.Call) -> bool:
    """A log that says nothing about ``sync_dist``, with no ``*args``/``**kwargs`` and not
    ``rank_zero_only=True``: the calls the rule is about, before asking where they stand."""
    if tree_lightning.has_star(call):
        return False
    zero_only = tree_lightning.is_true(tree_lightning.keyword(call, "rank_zero_only"))
    return tree_lightning.keyword(call, "sync_dist") is None and not zero_only


def _level(call: ast.Call, hooks: dict[str, str]) -> tuple[dict[str, str], dict[str, str]] | None:
    """Whether ``call`` logs per epoch, given the hooks that reach its method (hook -> how): the
    hooks on whose paths it logs per epoch and those on whose paths it logs per step; None where it
    logs per epoch on none. An explicit ``on_epoch=`` decides on every path."""
    on_epoch = tree_lightning.keyword(call, "on_epoch")
    if on_epoch is not None:
        if not tree_lightning.is_true(on_epoch):
            return None
        # It logs per epoch everywhere, and per step too where ``on_step`` is true: Lightning's
        # default in the training hooks (``train_loss_step``), whose values sync_dist would sync too.
        on_step = tree_lightning.keyword(call, "on_step")
        if on_step is None:
            return dict(hooks), {hook: via for hook, via in hooks.items() if hook in STEP_DEFAULT}
        stepping = not (isinstance(on_step.value, ast.Constant) and on_step.value.value is False)
        return dict(hooks), {hook: via for hook, via in hooks.items() if stepping and hook in STEP_DEFAULT}
    epoch = {hook: via for hook, via in hooks.items() if hook in EPOCH_DEFAULT}
    if not epoch:
        return None
    return epoch, {hook: via for hook, via in hooks.items() if hook in STEP_DEFAULT}


def _already_global(call: ast.Call, real: ast.Call, values: values_mod.FunctionValues,
                    sole_keys: Callable[[ast.Call], bool] = lambda _call: False) -> bool:
    """Every value the call logs is already global or a torchmetrics object (which syncs itself and
    for which Lightning ignores ``sync_dist``): ``sync_dist`` is meaningless there. A value the same
    on every rank counts too where ``sole_keys(call)``: no other log of the program may give its
    keys another value (``1.0`` in one branch, ``0.0`` in another is a per-rank value)."""
    from ddpfix.rules._epoch_log_sync_safety import ClassFacts

    logged = ClassFacts.values(call)
    if logged is None:
        if call.func.attr != "log_dict":
            return False
        dictionary = ClassFacts._dictionary(call)
        if dictionary is None or (isinstance(dictionary, ast.Dict) and any(k is None for k in dictionary.keys)):
            return False
        logged = [dictionary]
    # A value the same on every rank at each step (a number, the epoch counter) stays so under a
    # mean, max or min over the epoch's steps; a sum counts this rank's steps (a shard).
    uniform = _reduces_uniform_values(call) and sole_keys(call)
    return bool(logged) and all(values.origin(v, real) is not None or (uniform and values.same_on_every_rank(v))
                                for v in logged)


def _sole_keys(tree: ast.Module, ctx: RuleContext) -> Callable[[ast.Call], bool]:
    """Whether each key a log call writes is logged by no other call of the program: every log call
    of the file writes literal keys and this one's once; no other file that may run with it logs that
    key written out (a Callback's ``pl_module.log("key", ...)``); and the class logging it
    (``sole(call, cls)``) neither derives from a class of another file nor is derived from elsewhere
    (``self.log`` there logs into the same object). A key another file builds at run time
    (``pl_module.log(f"val_{name}", ...)``) is not followed. Kept on the tree."""
    counts = tree.__dict__.get("_ddpfix_log_keys")
    if counts is None:
        counts: dict[str, int] | None = {}
        called = {id(node.func) for node in every_node(tree) if isinstance(node, ast.Call)}
        for node in every_node(tree):
            if isinstance(node, ast.Attribute) and ctx.imports.qualify(node) is not None:
                continue  # ``torch.log(p)``, ``math.log(x)``, ``logging.log(...)``: a library's, no metric
            if isinstance(node, ast.Attribute) and node.attr in LOG_METHODS and id(node) not in called:
                counts = None  # ``partial(self.log, ...)``, ``log = self.log``: keys logged by another name
                break
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LOG_METHODS \
                    and ctx.imports.qualify(node.func) is None:
                keys = tree_lightning.logged_names(node)
                if keys is None:
                    counts = None
                    break
                for key in keys:
                    counts[key] = counts.get(key, 0) + 1
        tree._ddpfix_log_keys = counts

    def sole(call: ast.Call, cls: ast.ClassDef | None = None) -> bool:
        keys = tree_lightning.logged_names(call)
        if counts is None or keys is None or any(counts.get(key, 0) != 1 for key in keys):
            return False
        if cls is not None and (ctx.facts.subclass_place(cls.name, ctx.path) is not None or any(
                not (tree_lightning.lightning_name(ctx.imports, base) == "LightningModule"
                     or (isinstance(base, ast.Name) and base.id in {c.name for c in tree_lightning.classes(tree)}))
                for owner in _lineage(tree, cls) for base in owner.bases)):
            return False
        for key in keys:
            quoted = rb"['\"]" + re.escape(key.encode()) + rb"['\"]"
            logged = re.compile(rb"\.log[ \t]*\([ \t\r\n]*(?:name[ \t]*=[ \t]*)?" + quoted
                                + rb"|\.log_dict[ \t]*\([^)]*" + quoted + rb"[ \t]*:")
            if ctx.facts.text_in_program(logged, ctx.path, itself=False) is not None:
                return False
        return True
    return sole


def _reduces_uniform_values(call: ast.Call) -> bool:
    """The call's ``reduce_fx`` is absent (Lightning's mean) or its mean, max or min, written as a
    string (``log(name, value, prog_bar, logger, on_step, on_epoch, reduce_fx)``: the seventh
    positional argument, the sixth of ``log_dict``)."""
    if tree_lightning.has_star(call):
        return False
    reduce_fx = tree_lightning.keyword(call, "reduce_fx")
    place = 6 if call.func.attr == "log" else 5
    if reduce_fx is None:
        if len(call.args) <= place:
            return True
        value = call.args[place]
    else:
        value = reduce_fx.value
    text = tree_lightning.string_value(value)
    return text is not None and text.lower() in ("mean", "avg", "max", "min")


def _function_values(method, kinds, imports, module, trainer, module_collectives) -> values_mod.FunctionValues:
    """One ``FunctionValues`` per method, kept on its node (a hook's logs ask it in turn)."""
    from ddpfix.analysis import values as values_mod

    known = method.__dict__.get("_ddpfix_values")
    if known is None:
        known = method._ddpfix_values = values_mod.FunctionValues(method, kinds, imports, module, trainer, module_collectives)
    return known


def _subclassed_in_file(tree: ast.Module, cls: ast.ClassDef) -> bool:
    """A class of the file names ``cls`` among its bases (by name)."""
    return any(isinstance(base, ast.Name) and base.id == cls.name
               for other in tree_lightning.classes(tree) if other is not cls for base in other.bases)


def _lineage(tree: ast.Module, cls: ast.ClassDef) -> list[ast.ClassDef]:
    """The class and the classes of the file it derives from (by name), nearest first."""
    by_name = {c.name: c for c in tree_lightning.classes(tree)}
    found, pending, seen = [], [cls], set()
    while pending:
        current = pending.pop(0)
        if current.name in seen:
            continue
        seen.add(current.name)
        found.append(current)
        pending += [by_name[b.id] for b in current.bases if isinstance(b, ast.Name) and b.id in by_name]
    return found


def _hooks_reaching(tree: ast.Module, ctx: RuleContext, tests, words) -> _Reach:
    """For each method of the file's LightningModules (by id): the logging hooks that reach it, each
    with how (``validation_step -> _shared_step``), through ``self.<method>(...)`` calls of the class
    and the classes of the file it derives from (a call under a rank guard left out: DDP003's case);
    and for each (method, hook), the calls of the method in the methods that hook reaches."""
    reach: dict[int, dict[str, str]] = {}
    calls_by_hook: dict[tuple[int, str], list[ast.Call]] = {}
    kinds = tree_lightning.class_hierarchy(tree, ctx.imports, ctx.facts.of_kind("LightningModule", ctx.path))
    for cls in tree_lightning.classes(tree):
        if kinds.get(cls.name) != "lightning":
            continue
        methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        for owner in reversed(_lineage(tree, cls)):
            methods.update({s.name: s for s in owner.body if isinstance(s, FUNCTIONS)})
        names = frozenset(methods)
        edges: dict[int, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        for hook in sorted(LOGGING_HOOKS & names):
            pending = [(methods[hook], hook)]
            while pending:
                method, via = pending.pop()
                if hook in reach.setdefault(id(method), {}):
                    continue
                reach[id(method)][hook] = via
                if id(method) not in edges:
                    calls = tree_lightning.self_method_calls(method, names)
                    calls = _not_rank_gated(calls, method, tests, ctx.view, words)
                    edges[id(method)] = [(methods[c.func.attr], c) for c in calls]
                # The line of each call, so that a reason can say where the path goes.
                pending += [(callee, f"{via} -> {callee.name} (line {call.lineno})") for callee, call in edges[id(method)]]
            for method in methods.values():
                if hook in reach.get(id(method), {}):
                    for callee, call in edges.get(id(method), ()):
                        calls_by_hook.setdefault((id(callee), hook), []).append(call)
    return _Reach(reach, calls_by_hook)


class _Reach:
    """The hooks that reach each method (``_hooks_reaching``), asked per log: a hook reaches a log
    of a helper only through a call whose literal arguments let it (``call_paths.reaches``:
    ``self._shared_step(batch, "train")`` does not reach the log under ``if stage == "val":``)."""

    def __init__(self, reach: dict[int, dict[str, str]], calls_by_hook: dict[tuple[int, str], list[ast.Call]]):
        self._reach, self._calls = reach, calls_by_hook

    def of(self, method: ast.FunctionDef | ast.AsyncFunctionDef, log: ast.Call) -> dict[str, str]:
        hooks = self._reach.get(id(method), {})
        return {hook: via for hook, via in hooks.items() if hook == method.name or self.calls(method, hook, log)}

    def calls(self, method: ast.FunctionDef | ast.AsyncFunctionDef, hook: str, log: ast.Call) -> list[ast.Call]:
        """The calls of ``method`` in the methods ``hook`` reaches whose literals let them reach ``log``."""
        return [call for call in self._calls.get((id(method), hook), ()) if call_paths.reaches(method, log, call)]


def _sync_condition(method, log: ast.Call, reach: _Reach, epoch_paths: dict[str, str], step_paths: dict[str, str],
                    view) -> str | None:
    """For a helper's log reached per epoch from some hooks and per step from others: the text of a
    test true on exactly the epoch-level calls (``stage != "train"``), where one parameter tells
    them apart, every call reaching the log binding it to a string literal (the step-level ones all
    to one value no epoch-level one passes); None where none does. ``sync_dist=<test>`` then syncs where
    the log is per epoch and leaves each training step's value as it was."""
    if method.name in epoch_paths or method.name in step_paths:
        return None  # a hook of its own: Lightning calls it with no literal
    epoch_calls = [c for hook in epoch_paths for c in reach.calls(method, hook, log)]
    step_calls = [c for hook in step_paths for c in reach.calls(method, hook, log)]
    if not epoch_calls or not step_calls:
        return None
    positional = [p.arg for p in [*method.args.posonlyargs, *method.args.args]][1:]
    for name in [*positional, *(p.arg for p in method.args.kwonlyargs)]:
        epoch_values = [call_paths.bound_constants(method, c).get(name, _UNBOUND) for c in epoch_calls]
        step_values = [call_paths.bound_constants(method, c).get(name, _UNBOUND) for c in step_calls]
        if not all(isinstance(v, str) for v in (*epoch_values, *step_values)) or set(epoch_values) & set(step_values):
            continue
        if len(set(step_values)) != 1:
            continue  # one test, ``!=`` one literal: the shape the differential runs cover
        node = (call_paths.parameters_bound(method, step_calls[0]) or {}).get(name)
        segment = ast.get_source_segment(view.text, node) if node is not None else None
        literal = segment if segment is not None and ast.literal_eval(segment) == step_values[0] else repr(step_values[0])
        return f"{name} != {literal}"
    return None


_UNBOUND = object()


def _logs_through_partials(method, imports) -> list[tuple[ast.Call, ast.Call, ast.Call]]:
    """``log = partial(self.log, ...)`` then ``log("x", v)``: (the call, the log it makes, the partial)."""
    from ddpfix.analysis import values as values_mod

    partials = {}
    for name, value in values_mod.single_bindings(method).items():
        if (isinstance(value, ast.Call) and imports.qualify(value.func) == "functools.partial" and value.args
                and isinstance(value.args[0], ast.Attribute) and value.args[0].attr in LOG_METHODS
                and isinstance(value.args[0].value, ast.Name) and value.args[0].value.id == "self"
                and not tree_lightning.has_star(value)):
            partials[name] = value
    if not partials:
        return []
    found = []
    for n in walk(method):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in partials and not tree_lightning.has_star(n):
            partial = partials[n.func.id]
            made = ast.Call(func=partial.args[0], args=[*partial.args[1:], *n.args],
                            keywords=[*partial.keywords, *n.keywords])
            found.append((n, ast.copy_location(made, n), partial))
    return found


def _cpu_value(call: ast.Call, method, imports, facts: ClassFacts | None = None) -> str | None:
    """Why the logged value may be a CPU tensor (None: it is not shown to be). A synced value goes
    into ``all_reduce`` on its own device (Lightning puts only Python numbers on ``self.device``),
    and NCCL refuses CPU tensors ("No backend type associated with device type cpu"): the fix would
    crash on GPUs. Followed through the method's bindings of the names it reads (every kind:
    ``=``, ``x: T =``, ``+=``, ``:=``, ``for``), into what it calls of the class (its helpers,
    ``self(...)``'s ``forward``, a module class of the file held in an attribute: their returns and
    bindings) and, for what a batch-end or 1.x epoch-end hook receives, into the step's."""
    values = [a for a in call.args[1:2]] + [k.value for k in call.keywords if k.arg in ("value", "dictionary")]
    if call.func.attr == "log_dict":
        values = call.args[:1] + [k.value for k in call.keywords if k.arg == "dictionary"]
    if facts is not None and _numbers_only(values, call, method, facts):
        return None  # Lightning makes a number a tensor on the module's device: no batch is in it
    methods = facts.methods if facts is not None else {}
    unread = facts.unknown_methods if facts is not None else set()
    moved = next((name for name in _BATCH_TRANSFER_HOOKS if name in methods or name in unread), None)
    if moved is None and "on_after_batch_transfer" in unread:
        moved = "on_after_batch_transfer"
    if moved is not None:
        return (f"the class moves its batches itself (`{moved}`): a batch may stay on the CPU, and NCCL refuses "
                "CPU tensors in the sync")
    elsewhere = _batch_moved_elsewhere(facts) if facts is not None else None
    if elsewhere is not None:
        return elsewhere
    return _cpu_in(values, call, method, imports, facts, set())


def _numbers_only(values: list[ast.expr], call: ast.Call, method, facts: ClassFacts) -> bool:
    """Every value the call logs is a Python or NumPy number (``ClassFacts.number_valued``:
    ``np.mean(scores)``, ``correct / len(answers)``): Lightning's ``self.log`` makes it a tensor on
    the module's device (``torch.tensor(value, device=self.device)``), whatever the batch was and
    wherever its tensors were."""
    from ddpfix.rules._device_evidence import bindings

    assigned = bindings(method, (call.lineno, call.col_offset))
    return bool(values) and all(facts.number_valued(value, method, assigned) for value in values)


def _sampler_may_be_off(ctx: RuleContext) -> bool:
    """Lightning's distributed sampler may be off where the ranks' data may differ: a Trainer turns
    it off (``use_distributed_sampler=False``, a configuration's falsy spelling, a launch script), or
    the program names the switch with what is not a literal True (``use_distributed_sampler=cfg.x``,
    an argparse option of that name). A Trainer built from outside the program's text
    (``Trainer(**config)``, LightningCLI, hydra) whose switch no file names may have it turned off on
    the command line; that matters only where the ranks' data may differ (code that reads the rank,
    or no ``seed_everything`` to draw alike): with the sampler off and the same data on every rank,
    each rank runs every batch, as many, of the same sizes."""
    if ctx.facts.sampler_off_for(ctx.path) or ctx.facts.sampler_unknown_for(ctx.path) is not None:
        return True
    if ctx.facts.sampler_outside_for(ctx.path) is None:
        return False
    return (_rank_read_that_may_shape_data(ctx) or _state_set_on_one_rank(ctx)
            or ctx.facts.hazard("a draw no seed makes alike", ctx.path)) is not None or not ctx.facts.seeds_for(ctx.path)


def _validation_by_the_clock(ctx: RuleContext) -> str | None:
    """Why validation during ``fit`` may not run at the same step on every rank: a
    ``val_check_interval`` that may be a duration (``ProjectFacts.validation_clock_for``), with a
    Lightning version in force that may have durations (2.6 and later, or not known). Each rank
    then validates when its own clock says: a synced validation log pairs its collective with
    another rank's training, and hangs; unsynced, no collective runs there."""
    from ddpfix.model.versions import imported_package, version_in_force

    where = ctx.facts.validation_clock_for(ctx.path)
    if where is None:
        return None
    version = version_in_force(ctx.path, imported_package(ctx.data))
    if version is not None and version.has("val_check_interval as a duration") is False:
        return None
    return (f"{where}: each rank then validates when its own clock says, at a step of its own, and a synced "
            "validation log would wait for a rank still training")


def _rank_read_that_may_shape_data(ctx: RuleContext) -> str | None:
    """Where code that may run with this file reads the rank or the world size otherwise than to
    decide what to log (``if self.trainer.is_global_zero: self.log(...)`` shapes no data)."""
    from ddpfix.facts import hazard_pattern
    from ddpfix.model.rank_reads import only_decide_reporting

    words = hazard_pattern("rank-dependent data")
    return ctx.facts.hazard("rank-dependent data", ctx.path, lambda real: only_decide_reporting(real, words))


def _state_set_on_one_rank(ctx: RuleContext) -> str | None:
    """Where code that may run with this file keeps state in ``prepare_data``, which Lightning runs on
    local rank 0 alone (``self.train_ids = ...`` there: the other ranks' data is not that)."""
    from ddpfix.model.rank_reads import prepare_data_keeps_nothing

    return ctx.facts.hazard("state set on one rank", ctx.path, prepare_data_keeps_nothing)


#: What may leave Lightning's logged results on the CPU, by the version that stopped it.
_CPU_RESULTS = {
    "learning-rate finder": ("the LR finder's fix of PL#19813",
                             "Lightning before 2.4 leaves the finder's logged keys on the CPU (PL#19813)"),
    "metrics moved to the CPU": ("logged values kept on the device (no move_metrics_to_cpu)",
                                 "Lightning 1.x's `move_metrics_to_cpu=True` keeps the logged results on the CPU"),
}


def _results_on_the_cpu(ctx: RuleContext) -> str | None:
    """Why the program's logged results may sit on the CPU when they sync (NCCL refuses them): an LR
    finder or ``move_metrics_to_cpu`` in the run, with a Lightning version in force that may keep
    them there (or one not known)."""
    from ddpfix.model.versions import feature_problem, imported_package, version_in_force

    for hazard, (feature, effect) in _CPU_RESULTS.items():
        place = ctx.facts.hazard(hazard, ctx.path)
        if place is None:
            continue
        problem = feature_problem(version_in_force(ctx.path, imported_package(ctx.data)), feature)
        if problem is not None:
            return f"{place}, and {problem}: {effect}, and NCCL refuses CPU tensors in the sync"
    return None


def external_callbacks() -> str | None:
    """The installed distribution, if any, that gives every Trainer callbacks through Lightning's entry
    points (``lightning.pytorch.callbacks_factory``; read from the metadata, never imported:
    review helper-49, c12)."""
    from ddpfix.model.versions import entry_point_providers

    found = entry_point_providers(("lightning.pytorch.callbacks_factory", "pytorch_lightning.callbacks_factory"))
    return None if not found else f"the installed `{found[0]}` (an entry point `callbacks_factory`)"


def _batch_moved_elsewhere(facts) -> str | None:
    """Where code of the program other than Lightning may decide the batch's device: a data
    module's ``transfer_batch_to_device`` (not one that hands back Lightning's own move of its
    batch: ``analysis.lightning.moves_like_lightning``, in a class no other class of the program
    mixes with another base), its ``on_before_batch_transfer`` (which may make the batch an object
    Lightning's move does not enter; not one that returns tensors, the batch's parts and
    collections of them: ``analysis.lightning.prepares_a_movable_batch``) or ``on_after_batch_transfer`` (which runs after the move, and
    may move any of it back), a strategy's ``batch_to_device``, any of these stored on a class
    (``DataModule.transfer_batch_to_device = f``), or a class of its own with a ``to`` method
    (Lightning moves a batch of such a class by calling it, and it may keep some tensors on the
    CPU: lengths, masks, bookkeeping). Kept on the class's facts."""
    if "_batch_moved" not in facts.__dict__:
        found = None
        if facts.project is None or facts.path is None:
            found = "the program's other files are not read: the batch may be moved by code of its own"
        else:
            project = facts.project
            lines = (facts.cls.lineno, facts.cls.end_lineno or facts.cls.lineno)

            def proven(path: str, tree: ast.Module, method) -> bool:
                if method.name == "on_before_batch_transfer":  # a batch Lightning's move enters whole
                    return tree_lightning.prepares_a_movable_batch(tree, method)
                # Lightning's own move, in a class whose ``super()`` no other base may come before.
                if method.name not in _BATCH_TRANSFER_HOOKS:
                    return False
                owner = tree_lightning.enclosing_class(tree, method)
                return tree_lightning.moves_like_lightning(tree, method) and project.mixed_into(owner.name, path) is None

            hooks = (*_BATCH_TRANSFER_HOOKS, *_BATCH_HOOKS_ELSEWHERE)
            # One read of the program's text for every hook (each a definition, an assignment in a
            # class, or a store on a class), then one for a batch class's own ``to``.
            if project.defines_elsewhere(hooks, facts.path, lines, assigned=True, unless=proven) is not None:
                for name in hooks:  # which one, for the reason (read again only where one is found)
                    where = project.defines_elsewhere(name, facts.path, lines, assigned=True, unless=proven)
                    if where is not None:
                        found = (f"{where} defines `{name}`: a batch may be moved by it, some of its tensors left on "
                                 "the CPU, and NCCL refuses CPU tensors in the sync")
                        break
            for name in hooks if found is None else ():
                stored = project.stored_elsewhere(name, facts.path, facts.tree)
                if stored is not None:
                    found = (f"{stored} stores `{name}`: a batch may be moved by it, some of its tensors left on the "
                             "CPU, and NCCL refuses CPU tensors in the sync")
                    break
            if found is None and ("configure_callbacks" in facts.methods or "configure_callbacks" in facts.unknown_methods):
                found = ("the module's `configure_callbacks` adds callbacks to its Trainer, whose batch hooks are not "
                         "read: some of a batch's tensors may be left on the CPU, and NCCL refuses CPU tensors in the sync")
            if found is None:
                external = external_callbacks()
                if external is not None:
                    found = (f"{external} adds callbacks to every Trainer, whose batch hooks are not read: some of a "
                             "batch's tensors may be left on the CPU, and NCCL refuses CPU tensors in the sync")
            if found is None:
                # ``self.transfer_batch_to_device = f`` in an ``__init__`` (a decorator's too) sets the
                # instance's hook, which Lightning calls (review helper-47, c08/c08b).
                own = project.text_in_program(_HOOK_STORED_BY_NAME, facts.path, needles=_HOOK_NAMES_SPELLED)
                if own is None:
                    # (in any class: which classes' methods may run on a module, a data module or a
                    # callback is not read from the text: review helper-50/51/52 broke every reading)
                    own = project.text_in_program(_ANY_NAME_STORED_ON_SELF, facts.path,
                                                  unless=functools.partial(_stores_no_batch_hook_at, project))
                if own is not None:
                    found = (f"{own} stores a batch hook on an object: a batch may be moved by it, some of its tensors "
                             "left on the CPU, and NCCL refuses CPU tensors in the sync")
            if found is None:
                # (a plain class's too: a data module's loader may be any iterable that yields its
                # objects, and ``batch_size`` may be None through a name: review helper-50, c11/c12)
                where = project.defines_elsewhere("to", facts.path, lines)
                if where is not None:
                    found = (f"{where} defines `to`: a batch may be moved by it, some of its tensors left on the CPU, "
                             "and NCCL refuses CPU tensors in the sync")
            unread = project.unread_data(facts.path, facts.tree, facts.cls) if found is None else None
            if unread is not None:
                found = (f"the data handed to Lightning may be a data module whose batch hooks are not read ({unread}): "
                         "some of a batch's tensors may be left on the CPU, and NCCL refuses CPU tensors in the sync")
            batching = project.hazard("batches made by the program", facts.path) if found is None else None
            if batching is not None:
                # A collate_fn (or data batched before the loader) may make each batch an object of
                # its own class, which Lightning's move does not enter, however the step reads it.
                found = (f"{batching}: the program may make its own batches, objects whose tensors Lightning's move "
                         "may leave on the CPU, and NCCL refuses CPU tensors in the sync")
        facts._batch_moved = found
    return facts._batch_moved


def _self_calls(method) -> dict[str, list[tuple[int, ast.Call, set[str]]]]:
    """Each ``self.<name>(...)`` call of ``method`` by its name, with its place in the walk and the
    names its arguments read. Keyed by name and asked once per log of the method (``kept_on``): a
    scan of every call (its logs too) each time was quadratic in the method's size."""
    found: dict[str, list[tuple[int, ast.Call, set[str]]]] = {}
    for order, call in enumerate(walk(method)):  # (the walk's order: the order they are followed in)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "self":
            names = {r.id for a in [*call.args, *(k.value for k in call.keywords)] for r in walk(a)
                     if isinstance(r, ast.Name)}
            found.setdefault(call.func.attr, []).append((order, call, names))
    return found


def _cpu_in(values: list[ast.expr], at: ast.expr, method, imports, facts: ClassFacts | None, callers: set[int]) -> str | None:
    """``_cpu_value`` of ``values`` as ``method`` reads them at ``at``; for a helper of the class,
    also what each of its callers passes it (a parameter is what the caller made of it)."""
    from ddpfix.rules._device_evidence import TO_CPU_METHODS, bindings, keeps_the_device, makes_a_tensor, outside_numbers, targets
    from ddpfix.rules._epoch_log_sync_safety import BATCH_START_OF
    from ddpfix.rules._log_sync_walks import EVERY_RANK_HOOKS, STEP_OF, short

    methods = facts.methods if facts is not None else {}
    # Only what is bound before the call counts (a later ``batch[key] = batch[key].cpu()`` for a
    # plot changes nothing logged before it; a log in a loop is never a safe fix anyway).
    assigned = bindings(method, (at.lineno, at.col_offset))
    positional = [a.arg for a in [*method.args.posonlyargs, *method.args.args]]
    # Each value with the imports and the methods its code reads (``self`` in a module class's
    # ``forward`` is that class; in another file, its names are that file's).
    pending = [(value, imports, methods) for value in values]
    followed: set[int] = set()

    def follow(function, names=imports, own=methods) -> None:
        """A function the value comes from: its returns, and every value it binds (read in its own
        scope, over-approximated: any CPU value it binds counts)."""
        if function is None or id(function) in followed:
            return
        followed.add(id(function))
        pending.extend((n.value, names, own) for n in walk(function) if isinstance(n, ast.Return) and n.value is not None)
        for bound in bindings(function, None).values():
            pending.extend((value, names, own) for value in bound)

    follow(methods.get("on_after_batch_transfer"))  # what the hooks' batch is made of
    # The loop's batch-start hook of the class is handed the same batch first, and may move some
    # of it (``batch["y"] = batch["y"].cpu()``): what it binds counts too.
    follow(methods.get(BATCH_START_OF.get(method.name, "")))
    step = STEP_OF.get(method.name)
    if step is not None and len(positional) > 1:
        follow(methods.get(step))
        follow(methods.get(f"{step}_end"))
    seen: set[int] = set()
    read: set[str] = set()  # the method's own names the value is made of
    # A helper of the class handed one of those names may store a CPU tensor through it
    # (``self._fill(stats, logits)`` then ``stats["acc"]``): followed like a helper the value calls.
    by_name = kept_on(method, _self_calls)
    handed = [(call, names) for _order, call, names in sorted(
        (entry for name in by_name.keys() & methods.keys() for entry in by_name[name]), key=lambda e: e[0])
        if (call.lineno, call.col_offset) < (at.lineno, at.col_offset)]
    while pending or any(names & read and id(methods[c.func.attr]) not in followed for c, names in handed):
        if not pending:
            for call, names in handed:
                if names & read:
                    follow(methods[call.func.attr])
            continue
        node, names, own = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if own is methods:
            through = _batch_object_read(node, method, positional)
            if through is not None:
                return (f"the batch is an object (`{short(through)}`, line {through.lineno}): Lightning's move "
                        "enters only collections and dataclasses, and calls an object's own `to` (code not read), so "
                        "its tensors may stay on the CPU, and NCCL refuses CPU tensors in the sync")
        # ``torch.fft.rfftfreq(n).to(x.device)``, ``torch.arange(n).cuda()``: made, then moved to the GPU
        placed = {id(n.func.value) for n in walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                  and ((n.func.attr == "to" and targets(n) and all(keeps_the_device(a, names, assigned) for a in targets(n)))
                       or (n.func.attr == "cuda" and not n.args and not n.keywords))}
        for part in outside_numbers(node, names):
            if isinstance(part, ast.Call) and id(part) in placed and makes_a_tensor(names.qualify(part.func) or ""):
                continue
            if isinstance(part, ast.Call):
                func = part.func
                qualified = names.qualify(func) or ""
                if isinstance(func, ast.Attribute) and qualified == "" and (func.attr in TO_CPU_METHODS or (
                        func.attr in ("to", "type") and any(not keeps_the_device(a, names, assigned)
                                                            for a in targets(part)))):
                    return (f"the value may be a CPU tensor or on a numbered GPU (`.{func.attr}(...)`, line {part.lineno}): "
                            "a synced value is all-reduced on its own device, and NCCL refuses CPU tensors and "
                            "another rank's GPU")
                if makes_a_tensor(qualified):
                    device = next((k.value for k in part.keywords if k.arg == "device"), None)
                    if device is None or not keeps_the_device(device, names, assigned):
                        how = "without a device" if device is None else f"on `{ast.unparse(device)[:30]}`"
                        return (f"the value may be a CPU tensor or on a numbered GPU (`{qualified}(...)` {how}, line "
                                f"{part.lineno}): a synced value is all-reduced on its own device, and NCCL refuses "
                                "CPU tensors and another rank's GPU")
                if isinstance(func, ast.Name) and func.id == "self":
                    follow(own.get("forward"), names, own)
                elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
                    if func.attr in own:
                        follow(own[func.attr], names, own)
                    elif facts is not None and own is methods:
                        facts.submodule_known(func.attr)  # reads which classes it holds
                        for holder in facts.file_module_classes.get(func.attr, ()):
                            holder_methods = {s.name: s for s in holder.body if isinstance(s, FUNCTIONS)}
                            follow(holder_methods.get("forward"), getattr(holder, "_ddpfix_imports", imports),
                                   holder_methods)
            elif isinstance(part, ast.Name) and isinstance(part.ctx, ast.Load) and id(part) in placed:
                continue  # ``freqs.to(x.device)``: whatever ``freqs`` was made on, it is read moved
            elif isinstance(part, ast.Name) and isinstance(part.ctx, ast.Load):
                if own is methods:
                    read.add(part.id)
                pending.extend((value, names, own) for value in assigned.get(part.id, ()))
    if facts is not None and method.name not in EVERY_RANK_HOOKS and id(method) not in callers:
        calls = facts.calls_of(method.name)
        for caller, call in calls if not isinstance(calls, str) else ():
            arguments = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
            found = _cpu_in([*arguments, *(k.value for k in call.keywords)], call, caller, imports, facts,
                            callers | {id(method)})
            if found is not None:
                return found
    return None


#: What a tensor batch answers itself (its attributes and methods): any other attribute read of a
#: batch (``batch.y``) makes it an object, which Lightning moves only through its own ``to``.
_TENSOR_ATTRIBUTES = frozenset({"shape", "T", "mT", "H", "data", "device", "dtype", "ndim", "real", "imag", "grad",
                                "is_cuda", "layout"})


def _batch_object_read(node: ast.expr, method, positional: list[str]) -> ast.Attribute | None:
    """An attribute of the hook's batch that is not a tensor's (``batch.y``, ``batch.x.mean()``),
    read in ``node``; None where it reads none. A batch Lightning moves as a collection is a
    dict, a list or a tuple of tensors (a namedtuple's fields are read by name too: such a read
    is refused with the rest); anything else is an object of the program's or a library's class."""
    from ddpfix.analysis.values import VALUE_METHODS

    name = method.name
    index = 2 if name.endswith("_batch_end") else 1 if name.endswith(("_step", "_batch_start")) else None
    if index is None or len(positional) <= index:
        return None
    batch = positional[index]
    return next((n for n in walk(node) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                 and n.value.id == batch and n.attr not in _TENSOR_ATTRIBUTES and n.attr not in VALUE_METHODS), None)


#: The hook with which a module moves its batches itself: Lightning's own move (every tensor to the
#: rank's device) may not happen. (``on_after_batch_transfer`` runs after that move: what it returns
#: is read like a helper's.)
_BATCH_TRANSFER_HOOKS = ("transfer_batch_to_device",)
#: Other code that decides what a batch is, or where, around Lightning's move: a data module's
#: hooks before and after it (the module's own are read where its hooks are), a strategy's move.
_BATCH_HOOKS_ELSEWHERE = ("on_before_batch_transfer", "on_after_batch_transfer", "batch_to_device")
#: (with a callback's batch-start hooks, handed the moved batch: review helper-49, c09b/c09c)
_HOOK_NAMES = "|".join((*_BATCH_TRANSFER_HOOKS, *_BATCH_HOOKS_ELSEWHERE, "on_train_batch_start",
                        "on_validation_batch_start", "on_test_batch_start", "on_predict_batch_start")).encode()
_HOOK_NAMES_SPELLED = tuple(name.encode() for name in (*_BATCH_TRANSFER_HOOKS, *_BATCH_HOOKS_ELSEWHERE, "_batch_start"))
#: A batch hook stored on any object, its own instance too: ``self.<hook> = ...``, ``setattr(self, "<hook>", ...)``.
#: (``[\s\\]``: a call or a target may run over several lines, as Black lays it out, or a
#: backslash's: review helper-55, c09)
_HOOK_STORED_BY_NAME = lazy_compile(
    rb"\.[\s\\]*(?:" + _HOOK_NAMES + rb")[\s\\]*(?::[^=\n]*)?=(?!=)"  # (``self.hook: Callable = f``: review helper-48, c09)
    rb"|setattr[\s\\]*\([^,)]*,[\s\\]*['\"](?:" + _HOOK_NAMES + rb")['\"]"
    rb"|__setattr__[\s\\]*\([\s\\]*(?:self[\s\\]*,[\s\\]*)?['\"](?:" + _HOOK_NAMES + rb")['\"]")
#: Any name stored on an instance: ``setattr(self, k, v)``, ``self.__dict__.update(kwargs)`` (c01/c01b).
#: (not a dict subclass's ``self.__dict__ = self``, which serves its items as attributes). Every
#: ``setattr(self, ...)``: a name that is not one literal (``"on_%s_batch_start" % stage``: review
#: helper-55, c11) may be a hook's; a literal one is read as such where it is asked
#: (``_stores_no_batch_hook_at``).
_ANY_NAME_STORED_ON_SELF = lazy_compile(
    rb"setattr[\s\\]*\([\s\\]*self[\s\\]*,|self[\s\\]*\.[\s\\]*__dict__(?![\s\\]*=[\s\\]*self\b)"
    rb"|vars[\s\\]*\([\s\\]*self[\s\\]*\)"
    # ``self.__setattr__(k, v)``, ``super().__setattr__(k, v)``, ``super(Model, self).__setattr__``,
    # ``object.__setattr__(self, k, v)`` (helper-56 s1-s3, helper-57 a4), and the names of these
    # reached as strings (``getattr(self, "__setattr__")``: helper-57, a6)
    rb"|(?:\bself|super[\s\\]*\([^)]*\))[\s\\]*\.[\s\\]*__setattr__\b|__setattr__[\s\\]*\([\s\\]*self[\s\\]*,"
    rb"|['\"](?:__setattr__|setattr|__dict__)['\"]")


def _stores_no_batch_hook_at(project, path: str, line: int) -> bool:
    """The code at ``line`` of ``path`` that stores on its own instance by names it does not spell
    stores none of the batch hooks: its names are known (``self.__dict__.update(locals())`` in an
    ``__init__`` stores its parameters: miracleyoo's ``StandardData``;
    ``attribute_access.names_stored_on_self_at``) and no hook is among them, nor may other code of
    the program write a frame's namespace (``sys._getframe(1).f_locals[k] = v``)."""
    from ddpfix.facts import FRAME_WRITE_TEXT

    parsed = project.class_files.parsed(path) if path.endswith(".py") else None
    if parsed is None:
        return False
    names = names_stored_on_self_at(parsed[0], line, frames_kept=False)
    if names is None and project.text_in_program(FRAME_WRITE_TEXT, path) is None:
        names = names_stored_on_self_at(parsed[0], line)  # (``locals()`` holds the function's names alone)
    return names is not None and not names & _EVERY_BATCH_HOOK


_EVERY_BATCH_HOOK = frozenset(name.decode() for name in _HOOK_NAMES.split(b"|"))


def _inferred_batch_size(call: ast.Call, ctx: RuleContext) -> str | None:
    """Why the batch size Lightning infers for a log without ``batch_size=`` is not proven to be one
    per sample and the same on every rank: the program makes its own batches (``collate_fn``,
    ``batch_sampler``, data batched before the loader). Lightning weighs an epoch mean by that size
    and syncs the summed sizes as integers (a sum, then a floor division by the world size)."""
    given = tree_lightning.keyword(call, "batch_size")
    if given is not None and isinstance(given.value, ast.Constant):
        return None  # a literal (any other size given is the batch's length: ``ClassFacts.batch_length``)
    if _sampler_may_be_off(ctx):
        return ("Lightning's distributed sampler may be off (`use_distributed_sampler` not literally True, in the "
                "code or a configuration): the ranks' shards are the program's own, and their batches may "
                "differ in size; Lightning weighs the epoch mean by the batch sizes and syncs their sums as "
                "integers, so pass a literal `batch_size=`")
    # With the sampler on, each rank's datasets may still differ in length (code reading the rank, a
    # random subset, a string's salted ``hash``), and Lightning's integer sync of the summed sizes
    # then makes the synced mean approximate (by less than (world size - 1) / samples). That is what
    # `sync_dist=True` means in Lightning, as the sampler's padding is; the unsynced original is this
    # rank's shard whatever the lengths (the value is proven this rank's own), never the whole. No
    # correct value changes: the lengths are not asked (review rounds 13 and 14, in the notes).
    found = ctx.facts.hazard("custom batching", ctx.path)
    if found is None:
        return None
    if given is not None:
        return (f"{found}: the batch's length given as `batch_size=` may differ between ranks, and Lightning syncs "
                "the summed sizes as integers")
    return (f"{found}: the batch size Lightning infers for this log (the first tensor's length) may differ between "
            "ranks, and it syncs the summed sizes as integers; pass `batch_size=`")


def _callback_classes(tree: ast.Module, imports, elsewhere=None) -> list[ast.ClassDef]:
    """The file's Lightning ``Callback`` subclasses (directly, through the file's classes, or through
    a Callback subclass of another file of the project: ``elsewhere``, ``ProjectFacts.of_kind``)."""
    def kind_of(base: ast.expr) -> str | None:
        if tree_lightning.lightning_name(imports, base) == "Callback":
            return "callback"
        return "callback" if elsewhere and tree_lightning.defined_elsewhere(base, imports, elsewhere) else None
    return [cls for _name, (_kind, cls) in tree_lightning.derived(tree, kind_of).items()]


def _calls_through(method, name: str) -> list[ast.Call]:
    """``<name>.log(...)`` / ``<name>.log_dict(...)`` in ``method`` (nested functions left out)."""
    return [n for n in tree_lightning._calls_outside_functions(method.body)
            if isinstance(n.func, ast.Attribute) and n.func.attr in LOG_METHODS
            and isinstance(n.func.value, ast.Name) and n.func.value.id == name]


def _a_method_logs_through_a_parameter(tree: ast.Module) -> bool:
    """A method calls ``<parameter>.log(...)``: a Callback's ``pl_module.log``."""
    for n in walk(tree):
        if isinstance(n, FUNCTIONS):
            parameters = {a.arg for a in [*n.args.posonlyargs, *n.args.args]}
            if len(parameters) >= 3 and any(
                    isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr in LOG_METHODS
                    and isinstance(c.func.value, ast.Name) and c.func.value.id in parameters for c in walk(n)):
                return True
    return False


def _not_rank_gated(calls: list[ast.Call], function: ast.FunctionDef | ast.AsyncFunctionDef, tests: TreeRankTests,
                    view, words: tuple[str, ...]) -> list[ast.Call]:
    """The calls (of ``function``) neither under a rank guard nor under an ``if`` whose test mentions a
    rank, in their order. Each search is made only where calls are left to ask about: most hooks
    have no epoch log to fix, and the second search reads the whole hook."""
    if calls:
        gated = {id(n) for statement, _guard in tree_gated_statements(function, tests)
                 for n in walk(statement) if isinstance(n, ast.Call)}
        calls = [call for call in calls if id(call) not in gated]
    if calls:
        gated = _tree_maybe_rank_gated(function, view, words)
        calls = [call for call in calls if id(call) not in gated]
    return calls


def _tree_maybe_rank_gated(function: ast.FunctionDef | ast.AsyncFunctionDef, view, words: tuple[str, ...]) -> set[int]:
    """``_ranks.maybe_rank_gated`` on CPython's tree: ids of the calls under an ``if`` whose test
    mentions a rank, or after ``if <rank words>: return`` in the same block."""
    calls: set[int] = set()
    if not any(isinstance(n, ast.If) for n in every_node(function)):
        return calls  # most hooks: nothing to look for (the walk is kept on the hook's node)

    def all_calls(node: ast.AST) -> None:
        calls.update(id(n) for n in walk(node) if isinstance(n, ast.Call))

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _tree_mentions_rank(node, view, words):
            all_calls(node)
            return
        for field in node._fields:
            value = getattr(node, field, None)
            # An ``if`` is never in a one-line body, so every block that holds one is indented.
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                for index, statement in enumerate(value):
                    if isinstance(statement, ast.If) and _tree_mentions_rank(statement, view, words) and tree_only_returns(statement.body):
                        for later in value[index + 1:]:
                            all_calls(later)
                        break
        for child in child_nodes(node):
            visit(child)

    visit(function)
    return calls


def _tree_mentions_rank(node: ast.If, view, words: tuple[str, ...]) -> bool:
    """Whether the ``if`` test names a rank. A comment inside the test's parentheses counts as part of
    the test (the rule's earlier LibCST reading did so); there the whole header is read, which may
    only count more calls as rank-gated, so add fewer syncs."""
    if any(word in view.positions.segment(node.test) for word in words):
        return True
    header = view.text[view.positions.offset(node.lineno, node.col_offset):view.positions.offset(node.body[0].lineno, node.body[0].col_offset)]
    return "#" in header and tree_lightning.comment_before_colon(header) and any(word in header for word in words)
