"""DDP004's proof that adding ``sync_dist=True`` changes nothing but the DDP failure (design.md,
"Sound by default"): an allowlist, on CPython's tree, of what is known.

``sync_dist=True`` turns a ``self.log`` into collectives. Lightning runs them per key, at the call
for ``on_step`` values and at the end of the epoch for ``on_epoch`` ones, in the order in which each
rank first logged its keys (``ResultCollection``). The fix is safe only when

* every rank makes the call, in the same order: it is a statement of a hook Lightning calls on every
  rank, or of a helper of the class every call of which is such a statement of such a method
  (``caller_problem``), reached unconditionally (no ``if``/``for``/``while``/``try`` around it but
  ``if``s every rank decides alike, only known grad/autocast ``with`` blocks; no ``return``/``raise``
  before it), with literal keys, and no other code calls the hook or the helper;
* no other log of the class that may sync is reached in another order on another rank (a new sync
  would pair with it: values of different keys averaged together, or a hang);
* the value is a Python or NumPy number (``number_valued``: Lightning puts it on the module's
  device, and a mean, max or min of a number every rank already shares is that number), or
  provably per-rank: built from the hook's arguments and constants through known torch
  and NumPy operations, tensor methods, functions kept on the module, its own helper methods and
  ``forward`` (followed into their body), and the modules it holds where each is built by a call
  read whole (``_module_classes``: torch layers, containers of known modules, the program's module
  classes with no collective and no CPU maker); a value of unknown provenance may already be
  global (``all_gather``, ``metric.compute()``, a Metric) or a CPU tensor;
* the call's flags are known (``reduce_fx`` one of Lightning's four; ``batch_size`` absent or a
  literal int; no ``sync_dist_group``, ``metric_attribute`` or positional flags), and the class and
  its bases are all seen;
* the batch is this rank's own data: the file names no iterable dataset, which Lightning does not
  shard.

Each question returns None when proven, else the reason (``why``) it was not. This module holds
the class's facts (``ClassFacts``: its methods, bases, subclasses, helpers and their callers, the
modules it holds) and the log's own questions (``fix_problem``); which values are this rank's own
is ``_log_sync_provenance``; the hooks and the walks of a method both share, ``_log_sync_walks``;
which module classes are read whole, ``_module_classes``.
"""

from __future__ import annotations

import ast
import bisect
import os
import re
from collections.abc import Callable

from ddpfix.ast_walk import child_nodes, walk
from ddpfix.facts import PROJECT_HAZARDS
from ddpfix.imports import ImportTable
from ddpfix.lazy_regex import lazy_compile
from ddpfix.model.class_files import ClassFiles
from ddpfix.model.constructions import (EVERY_PART, LEAVES_CODE, PLAIN_ATTRIBUTES, RETURNS_THE_MODULE,
                                        applies_initialisers_only, filled_tensor, initialiser_problem, names_an_attribute,
                                        object_problem, object_scope, parent_map, use_problem)
from ddpfix.rules._device_evidence import bindings, makes_a_tensor
from ddpfix.rules._module_classes import CONTAINERS, FileView, ModuleReader, changed_in_place
from ddpfix.analysis import lightning as tree_lightning
from ddpfix.analysis.lightning import LIGHTNING_MODULE_ATTRIBUTES, lightning_name
from ddpfix.analysis.attribute_access import dynamic_access, fills_its_namespace
from ddpfix.analysis.names import bound_names
from ddpfix.analysis.ast_shapes import every_node, nodes_below, nodes_of, spelled_names
from ddpfix.analysis import call_paths
from ddpfix.analysis.values import pure_function_name
from ddpfix.rules._log_sync_provenance import Provenance
from ddpfix.rules._log_sync_walks import (
    EPOCH_LEVEL_HOOKS, PER_BATCH_TRAIN_HOOKS,
    EVERY_RANK_HOOKS, FUNCTIONS, KEEPING_METHODS, LIST_METHODS, LOG_METHODS, PER_BATCH_EVAL_HOOKS, RANK_OWN_PROPERTIES, SCOPES, STEP_OF,
    TRAINING_HOOKS, event_places, is_self, is_self_log, module_aliases, names_in_nested_scopes,
    outside_functions_with_places, per_file, reads_module, self_attr, short, store_roots, stored_through,
    walk_outside_functions,
)

#: The hook Lightning calls with the same batch before each step and batch-end hook.
BATCH_START_OF = {
    "training_step": "on_train_batch_start", "on_train_batch_end": "on_train_batch_start",
    "validation_step": "on_validation_batch_start", "on_validation_batch_end": "on_validation_batch_start",
    "test_step": "on_test_batch_start", "on_test_batch_end": "on_test_batch_start",
}

#: Methods that read a tensor or container and change nothing of it (on what the module holds).
TENSOR_READS = frozenset({"item", "tolist", "size", "dim", "numel", "keys", "values", "items", "get", "detach",
                          "clone", "mean", "sum", "float", "cpu", "to", "numpy", "__len__"})


#: ``with`` blocks that change no control flow: grad mode and autocast.
KNOWN_CONTEXTS = frozenset({
    "torch.no_grad", "torch.inference_mode", "torch.enable_grad", "torch.set_grad_enabled",
    "torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast",
})

#: Flags of ``self.log`` / ``log_dict`` whose value cannot change which collectives run.
KNOWN_FLAGS = frozenset({"name", "value", "dictionary", "prog_bar", "logger", "on_step", "on_epoch", "reduce_fx",
                         "enable_graph", "batch_size", "add_dataloader_idx"})
REDUCTIONS = frozenset({"mean", "avg", "max", "min", "sum"})
TORCH_REDUCTIONS = frozenset({"torch.mean", "torch.max", "torch.min", "torch.sum"})

#: Tensor methods that compute on the tensor itself (no collective, no state outside it).
#: Words of a ``forward`` that may make its output global.
COLLECTIVE_WORDS = ("gather", "reduce", "broadcast", "distributed", "dist", "compute", "sync", "barrier", "scatter")


#: Words of a dataset Lightning does not shard: an iterable one (``torch.utils.data.IterableDataset``,
#: a datapipe, Hugging Face's ``IterableDataset``) is read whole by every rank unless its own code
#: splits it, so a batch is not proven to be this rank's own data.
ITERABLE_DATA_WORDS = tuple(PROJECT_HAZARDS["iterable data"].split("|"))


def _iterable_dataset_word(tree: ast.Module) -> str | None:
    """The first name, attribute or import of the file that names an iterable dataset."""
    # Most files name none, which the words their names, attributes and imports spell (a few
    # hundred) tell; which one comes first is read from the walk only where there is one.
    imported = [word for n in nodes_of(tree, ast.alias) for word in _words(n)]
    if not any(_is_iterable_data_word(word) for word in (*spelled_names(tree), *imported)):
        return None
    return next(word for n in every_node(tree) for word in _words(n) if _is_iterable_data_word(word))


def _words(node: ast.AST) -> list[str]:
    """The words a name, an attribute or an import spells (none for any other node)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    return [node.name, node.asname or ""] if isinstance(node, ast.alias) else []


def _is_iterable_data_word(word: str) -> bool:
    return any(w in word for w in ITERABLE_DATA_WORDS)


#: The kinds of node ``_SelfStores`` reads: assignments, calls, attributes, and whatever has a
#: ``target`` (``x: T = v``, ``+=``, ``for``, ``:=``, a comprehension's ``for``). The others (names,
#: constants, operators: most of a class) it passes over by their kind (a parsed tree holds the
#: ``ast`` classes themselves, never subclasses).
_STORE_KINDS = frozenset({ast.Assign, ast.Call, ast.Attribute, *(
    kind for kind in vars(ast).values()
    if isinstance(kind, type) and issubclass(kind, ast.AST) and "target" in kind._fields)})


#: A program that adds models to a library's registry (timm's ``register_model``, transformers'
#: ``AutoModel*.register`` / ``AutoConfig.register``, ``register_for_auto_class``), or that changes
#: every module of the process at once: torch's global hooks (``register_module_forward_hook``,
#: ``register_module_module_registration_hook``..., the ``_global_*_hooks`` dictionaries), torch
#: function and dispatch modes, a patch of torch's own functions (``F.linear = f``,
#: ``nn.Module._call_impl = g``) or of a function's code (``f.__code__ = g.__code__``).
_REGISTRIES = lazy_compile(rb"register_model|Auto\w*\.register\b|register_for_auto_class|register_module_\w*hook"
                         rb"|_global_\w*hooks|TorchFunctionMode|TorchDispatchMode|__torch_function__|__torch_dispatch__"
                         rb"|__code__[ \t]*=|_call_impl[ \t]*=|copyreg|_deepcopy_dispatch|__globals__"
                         rb"|^[ \t]*(?:F|functional|init|(?:torch\.)?nn(?:\.functional|\.init)?|torch)\.(?!backends\b)\w+[ \t]*=(?!=)",
                         re.M)


class _SelfStores:
    """What one class's own code (every node of it, its methods' included) binds on ``self``: what
    ``ClassFacts`` asks of the class and of each of its bases, read in one pass over the class
    rather than one per question. Kept on the class's node (trees are never changed once parsed):
    a base of many classes of the file is read once."""

    @classmethod
    def of(cls, owner: ast.ClassDef) -> _SelfStores:
        known = owner.__dict__.get("_ddpfix_self_stores")
        if known is None:
            known = owner._ddpfix_self_stores = cls(owner)
        return known

    def __init__(self, owner: ast.ClassDef):
        #: ``setattr(...)`` is called: it may bind any name.
        self.calls_setattr = False
        #: ``self.<name>`` as a whole target: of ``=``, ``+=``, ``x: T =``, ``for``, ``:=``.
        self.assigned: set[str] = set()
        #: (name, the call) for each ``self.<name> = <callee>(...)`` (a whole target of ``=``).
        self.built: list[tuple[str, ast.Call]] = []
        #: (name, value) for each ``self.<name> = <name or attribute>`` (a function or class kept).
        self.referenced: list[tuple[str, ast.expr]] = []
        #: ``self.<name>`` bound by an assignment otherwise: another value, a tuple's element, ``+=``...
        self.bound_otherwise: set[str] = set()
        #: ``self.<name>`` stored as a target of ``= [...]`` (a list display or comprehension), and
        #: stored or deleted any other way.
        self.lists: set[str] = set()
        self.not_lists: set[str] = set()
        #: ``<x>.forward = ...`` or ``<x>.__call__ = ...``.
        self.binds_forward = False
        list_targets: set[int] = set()
        # A node's parent comes before it in the walk: an assignment before its targets.
        for n in nodes_below(owner):
            if n.__class__ not in _STORE_KINDS:
                continue
            if isinstance(n, ast.Assign):
                self._read_assign(n, list_targets)
                continue
            target = getattr(n, "target", None)
            if isinstance(target, ast.Attribute) and is_self(target.value):
                self.assigned.add(target.attr)
            if isinstance(n, (ast.AnnAssign, ast.AugAssign)):
                self.bound_otherwise.update(_self_attributes_of(n.target))
            elif isinstance(n, ast.Call):
                if isinstance(n.func, ast.Name) and n.func.id == "setattr":
                    self.calls_setattr = True
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)):
                if is_self(n.value):
                    (self.lists if id(n) in list_targets else self.not_lists).add(n.attr)
                if isinstance(n.ctx, ast.Store) and n.attr in ("forward", "__call__"):
                    self.binds_forward = True

    def _read_assign(self, assign: ast.Assign, list_targets: set[int]) -> None:
        value = assign.value
        if isinstance(value, (ast.List, ast.ListComp)):
            list_targets.update(id(target) for target in assign.targets)
        for target in assign.targets:
            name = self_attr(target)
            if name is not None:
                self.assigned.add(name)
                # ``self.loss = nn.BCEWithLogitsLoss() if binary else nn.CrossEntropyLoss()``: each
                # branch is one of the values the attribute may hold.
                leaves, pending = [], [value]
                while pending:
                    leaf = pending.pop()
                    if isinstance(leaf, ast.IfExp):
                        pending += [leaf.body, leaf.orelse]
                    else:
                        leaves.append(leaf)
                if all(isinstance(leaf, (ast.Call, ast.Name, ast.Attribute)) for leaf in leaves):
                    for leaf in leaves:
                        if isinstance(leaf, ast.Call):
                            self.built.append((name, leaf))
                        else:
                            self.referenced.append((name, leaf))
                    continue
            self.bound_otherwise.update(_self_attributes_of(target) if name is None else [name])


def _self_attributes_of(target: ast.expr) -> list[str]:
    """The ``self.<name>`` an assignment's target binds: itself, or an element of its tuple or list."""
    elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
    return [name for name in map(self_attr, elements) if name is not None]


class ClassFacts:
    """What the proof needs of one LightningModule class and the file around it."""

    def own_property(self, name: str) -> bool:
        """``self.<name>`` is one of Lightning's per-rank properties, not redefined by the class."""
        return (name in RANK_OWN_PROPERTIES and name not in self.assigned and name not in self.methods
                and name not in self.unknown_methods)

    def _fold_subclasses(self) -> str | None:
        """Read every class of the program that derives from this one (the instance that runs may be
        one of them): None where each is seen whole, its syncing logs run on every rank in one
        order, and what it defines or assigns becomes unknown here (a helper, ``forward``, an
        attribute it may define again; a hook it defines without calling this one through
        ``super()`` only keeps this one from running for it). Else why not."""
        if self.depth >= MAX_BASE_FILES:
            return f"classes derive from `{self.cls.name}` more levels deep than are read"
        found = self.project.subclass_sources(self.cls.name, self.path, self.tree)
        if isinstance(found, str):
            return found
        mine = {id(owner) for owner in self.lineage}
        for path, tree, imports, cls in found:
            where = f"`{cls.name}` ({os.path.relpath(path, os.path.dirname(os.path.realpath(self.path)))}:{cls.lineno})"
            facts = ClassFacts(tree, cls, imports, "unknown", self.bptt, None, self.project, path, self.depth + 1)
            problem = facts.unknown_base or facts.subclassed
            if problem is not None:
                return f"the class {where} derives from `{self.cls.name}`, and {problem}"
            unordered = facts.unordered_sync()
            if unordered is not None:
                place = facts.foreign_places.get(id(unordered), f"{os.path.basename(path)}:{unordered.lineno}")
                return (f"the class {where} derives from `{self.cls.name}`, and its log at {place} may sync where "
                        "ranks may not reach it in the same order")
            below = [owner for owner in facts.lineage if id(owner) not in mine]
            defined = {s.name for owner in below for s in owner.body if isinstance(s, FUNCTIONS)}
            defined |= facts.unknown_methods - {s.name for owner in self.lineage for s in owner.body
                                                if isinstance(s, FUNCTIONS)}
            # A hook it defines again keeps this one from running for it, unless its file reaches
            # this one another way (``super().validation_step``, ``Base.validation_step(self, ...)``).
            read_otherwise = per_file(tree, "read_otherwise", lambda: _read_otherwise(tree))
            defined -= {name for name in EVERY_RANK_HOOKS if name not in read_otherwise}
            self.unknown_methods |= defined
            for name in defined:
                self.methods.pop(name, None)
                self.unknown_where.setdefault(name, f"the class {where}, which derives from `{self.cls.name}`")
            self.foreign_called |= facts.called_names | facts.foreign_called
            self.foreign_assigned |= set().union(*(_SelfStores.of(owner).assigned for owner in below))
            self.calls_setattr_below = self.calls_setattr_below or any(
                _SelfStores.of(owner).calls_setattr for owner in below)
        return None

    def rebound(self, name: str) -> str | None:
        """Where the program may bind a function or method called ``name`` to other code
        (``F.mse_loss = f``, ``torch.Tensor.mean = f``, ``setattr(nn, name, f)``): ``file:line``;
        kept per name."""
        known = self.__dict__.setdefault("_rebound", {})
        if name not in known:
            known[name] = self._patched_elsewhere(name)
        return known[name]

    def _patched_elsewhere(self, name: str) -> str | None:
        """Where a file of the program stores an attribute ``name`` on anything (``Head.forward = f``):
        a module class's ``forward`` may be replaced at run time."""
        if self.project is None or self.path is None:
            return "the program's other files are not read"
        return self.project.stored_elsewhere(name, self.path, self.tree)

    def _shared_in_class(self, name: str) -> int | None:
        """The line where the class's own code gives another way to what ``self.<name>`` holds, or
        reaches every part of the module (``self.first = self.model[0]``, ``self.encoder =
        self.model``, ``for m in self.modules(): ...``, ``self.apply(f)``): a change through that
        way (a hook registered in ``setup``) is not one of ``self.<name>``'s own. A use that calls
        it, reads it or a part of it through ``nn.Module``'s methods that leave its code
        (``use_problem``) gives none."""
        view = FileView.of(self.path, self.tree, self.imports)
        for owner in self.lineage:
            # ``getattr(self, "model")``, ``getattr(self, name)``, ``vars(self)``, ``self.__dict__``
            reached = names_an_attribute(owner, name) or dynamic_access(owner)
            if reached is not None:
                return reached.lineno
            nodes = nodes_below(owner)
            # Most uses call it (``self.model(x)``) or read it (``self.model.parameters()``): those are
            # cleared here, without the file's parent map that ``use_problem`` needs for the rest.
            cleared, initialising = set(), set()
            for node in nodes:
                if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and self._fill_defined() is None:
                    # ``nn.init.zeros_(self.net.weight)``, a statement of its own: values filled, no
                    # code installed (a result used, ``self.net.requires_grad_(True).register_...``,
                    # may be the module itself)
                    held = self._held_part(name, filled_tensor(self.tree, node.value))
                    if held is not None:
                        cleared.add(id(held))
                if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                        and self._known_part_store(name, node.targets[0]):
                    # a part replaced by a known module in ``__init__``: the reads of it there
                    cleared.update(id(n) for n in walk(node) if isinstance(n, ast.Attribute) and self_attr(n) == name)
                if isinstance(node, ast.Call):
                    func = node.func
                    if self_attr(func) == "apply" and self._applies_initialisers(node):
                        initialising.add(id(func))
                    if self_attr(func) == name:
                        cleared.add(id(func))
                    elif isinstance(func, ast.Attribute) and self_attr(func.value) == name and func.attr in LEAVES_CODE \
                            and func.attr not in RETURNS_THE_MODULE:
                        cleared.add(id(func.value))
            for node in nodes:
                if isinstance(node, ast.Attribute) and is_self(node.value) and isinstance(node.ctx, ast.Load):
                    if node.attr == "apply" and id(node) in initialising:
                        continue
                    if node.attr in EVERY_PART:
                        return node.lineno
                    if node.attr == name and id(node) not in cleared and use_problem(
                            self.tree, node, lambda call: self.modules.call_problem(call, view),
                            elsewhere=self._attribute_reached) is not None:
                        return node.lineno
        return None

    def _global_imported(self, name: str, path: str) -> str | None:
        """Where another file of the program may import the global ``name`` of ``path``."""
        if self.project is None:
            return "the program's other files are not read"
        return self.project.global_imported_elsewhere(name, path)

    def _registered(self) -> str | None:
        """Where the program fills a library's model registry (``ModuleReader``'s ``registered``)."""
        if self.project is None or self.path is None:
            return "the program's other files are not read"
        return self.project.text_in_program(_REGISTRIES, self.path)

    def _applies_initialisers(self, call: ast.Call) -> bool:
        """``self.apply(init_weights)`` / ``self.apply(self._init_weights)``: every part handed to a
        function of the file, or a plain method of the class no other code replaces, that only
        initialises weights (``model.constructions.initialiser_problem``)."""
        if len(call.args) != 1 or call.keywords or self._fill_defined() is not None:
            return False
        if not isinstance(call.args[0], ast.Name):
            method = self_attr(call.args[0])
            function = self.methods.get(method) if method is not None else None
            if (function is None or self.subclassed is not None or self.unknown_base is not None or method in self.assigned
                    or self.calls_setattr or self.replaced(method) is not None or self._patched_elsewhere(method) is not None):
                return False
            return initialiser_problem(self.tree, function, method=True) is None
        return applies_initialisers_only(self.tree, call, self._patched_elsewhere)

    def _fill_defined(self) -> str | None:
        """Where code of the program may answer a tensor fill's name (``def zero_(self)``): a fill
        of a held module's part is then not proven to change values alone."""
        if self.project is None or self.path is None:
            return "the program's other files are not read"
        return self.project.defines_a_fill(self.path)

    @staticmethod
    def _held_part(name: str, part: ast.expr | None) -> ast.Attribute | None:
        """The ``self.<name>`` that ``part`` is reached from through attributes and constant
        indices, one step at least (``self.net.fc.weight``, ``self.blocks[0].bias.data``: a part of
        it, not the module); None where it is not one."""
        if part is None or self_attr(part) is not None:
            return None
        while isinstance(part, (ast.Attribute, ast.Subscript)) and not self_attr(part):
            if isinstance(part, ast.Subscript) and not isinstance(part.slice, ast.Constant):
                return None
            part = part.value
        return part if isinstance(part, ast.Attribute) and self_attr(part) == name else None

    def _known_part_store(self, name: str, target: ast.expr) -> bool:
        """``self.<name>.fc = nn.Sequential(self.<name>.fc, nn.ReLU(), nn.Linear(d, k))`` in the
        class's ``__init__``: one part of the module replaced, once, before Lightning runs it, by a
        module built by a known call whose parts are known modules or parts of that module itself.
        The module stays known (what holds it is asked separately)."""
        init = next((s for s in self.cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        if init is None:
            return False
        root = target
        while isinstance(root, (ast.Attribute, ast.Subscript)) and not self_attr(root):
            if isinstance(root, ast.Subscript) and not isinstance(root.slice, ast.Constant):
                return False
            root = root.value
        if self_attr(root) != name or root is target:
            return False
        assign = next((statement for statement in walk_outside_functions(init.body)
                       if isinstance(statement, ast.Assign) and statement.targets == [target]), None)
        if assign is None or not isinstance(assign.value, ast.Call):
            return False

        def own_part(node: ast.expr) -> bool:  # ``self.<name>.fc``, ``self.<name>.layers[0]``
            while isinstance(node, (ast.Attribute, ast.Subscript)) and not self_attr(node):
                node = node.value
            return self_attr(node) == name and node is not target and not isinstance(node, ast.Name)

        view = FileView.of(self.path, self.tree, self.imports)
        call = assign.value
        layer = (self.imports.qualify(call.func) or "").rsplit(".", 1)[-1]
        if tree_lightning.is_torch_nn_module(self.imports, call.func) and layer in CONTAINERS:
            arguments = [*call.args, *(k.value for k in call.keywords)]
            return not call.keywords and all(
                (isinstance(a, (ast.Attribute, ast.Subscript)) and own_part(a) and a is not root)
                or self.modules._part_problem(a, view, 1) is None for a in arguments)
        return self.modules.call_problem(call, view) is None

    def _attribute_reached(self, name: str) -> str | None:
        """Where code outside a plain class of the file that keeps a module (``self.model = model``
        in a ``Sampler``) may reach a ``.name`` of it (``part_changed_elsewhere``, with stores)."""
        if name in self._asking:
            return f"`.{name}` leads back to itself"
        self._asking.add(name)
        try:
            return self._patched_elsewhere(name) or self._reached_elsewhere(name)
        finally:
            self._asking.discard(name)

    def _reached_elsewhere(self, name: str) -> str | None:
        """Where code outside the class may change the module it holds as ``self.<name>``
        through the instance (``lm.backbone.register_forward_hook(f)``, ``freeze(lm.backbone)``)."""
        if self.project is None or self.path is None:
            return "the program's other files are not read"

        def check(real: str, tree: ast.Module, imports: ImportTable, node: ast.Attribute) -> str | None:
            view = FileView.of(real, tree, imports)
            return use_problem(tree, node, lambda call: self.modules.call_problem(call, view),
                               elsewhere=self._attribute_reached)

        return self.project.part_changed_elsewhere(name, self.path, LEAVES_CODE - RETURNS_THE_MODULE, check, PLAIN_ATTRIBUTES)

    def _base_elsewhere(self, base: ast.expr) -> ClassFacts | str | None:
        """The facts of a base class another file of the program defines (read there, with its own
        imports); why it is not seen, where it is read but not all seen; None where it is not read."""
        if self.class_files is None or self.path is None or not isinstance(base, ast.Name) or self.depth >= MAX_BASE_FILES:
            return None
        found = self.class_files.class_of(self.path, self.tree, base.id)
        if found is None:
            return None
        path, tree, imports, cls = found
        key = ("facts", path, cls.name, self.bptt)
        facts = self.class_files.kept.get(key)
        if facts is None:
            facts = self.class_files.kept[key] = ClassFacts(tree, cls, imports, None, self.bptt, None, self.project,
                                                            path, self.depth + 1, look_down=False)
        if facts.unknown_base is not None:
            return f"{facts.unknown_base} (in {os.path.basename(path)}, through the base class `{base.id}`)"
        return facts

    def __init__(self, tree: ast.Module, cls: ast.ClassDef, imports: ImportTable, subclassed: str | None = None,
                 bptt: str | None = "not asked", elsewhere: Callable[[str], str | None] | None = None,
                 project=None, path: str | None = None, depth: int = 0, look_down: bool = True):
        """``subclassed``: why a method of the class may not be the one that runs (a class of the
        project may derive from it: ``ProjectFacts.subclass_place``), or None. ``bptt``: why the
        program may use 1.x's truncated back-propagation (``ProjectFacts.hazard``), or None.
        ``elsewhere``: where another file of the program names a method (``ProjectFacts.named_elsewhere``:
        it may call a helper); None where not asked (no helper's callers are then proven).
        ``project``: the ``ProjectFacts`` of the run, with ``path``, this file's: a base class or a
        submodule's class another file defines is read there, and so is every class of the program
        that derives from this one (``look_down``; then ``subclassed`` is only asked where one is
        not read). None: not asked (such classes are unknown). ``depth``: how many other classes
        led here."""
        self.tree, self.cls, self.imports, self.subclassed, self.bptt = tree, cls, imports, subclassed, bptt
        self.elsewhere = elsewhere
        self.project, self.path, self.depth = project, path, depth
        self.class_files: ClassFiles | None = project.class_files if project is not None else None
        #: Bases of other files of the program, read (each its own ``ClassFacts``, in its file): what
        #: they define and assign is known to exist, their bodies are not followed.
        self.opaque: list[ClassFacts] = []
        self._callers: dict = {}  # helper_callers_problem and _invariant_arguments, per method
        by_name = per_file(tree, "classes_by_name", lambda: {c.name: c for c in tree_lightning.classes(tree)})
        # The class and its ancestors in this file; a base that is neither one of them nor Lightning's
        # LightningModule is unknown (its hooks may log too).
        self.lineage: list[ast.ClassDef] = []
        #: Why the class's methods are not all seen (a base of another file, a metaclass, a class
        #: decorator), as a clause; None where they are.
        self.unknown_base: str | None = None
        pending, seen = [cls], set()
        while pending:
            current = pending.pop()
            if current.name in seen:
                continue
            seen.add(current.name)
            self.lineage.append(current)
            for base in current.bases:
                if (lightning_name(imports, base) == "LightningModule" or imports.qualify(base) in INERT_BASES
                        or (isinstance(base, ast.Name) and base.id == "object" and base.id not in by_name)):
                    continue
                if isinstance(base, ast.Name) and base.id in by_name:
                    if base.id not in seen:
                        pending.append(by_name[base.id])
                    continue
                outside = self._base_elsewhere(base)
                if isinstance(outside, ClassFacts):
                    self.opaque.append(outside)
                    continue
                if self.unknown_base is None:
                    self.unknown_base = outside or f"the base class `{short(base)}` (line {base.lineno}) is not seen"
            if any(k.arg != "metaclass" or imports.qualify(k.value) not in INERT_METACLASSES
                   for k in current.keywords) and self.unknown_base is None:
                self.unknown_base = f"the base class `a metaclass` (line {current.lineno}) is not seen"
            decorators = [d for d in current.decorator_list if not _inert_class_decorator(d, imports)]
            if decorators and self.unknown_base is None:
                # A class decorator may replace any method (or the class).
                self.unknown_base = (f"the class decorator `{short(decorators[0])}` (line {decorators[0].lineno}) may "
                                     "replace its methods")
            filling = fills_its_namespace(current)
            if filling is not None and self.unknown_base is None:
                # ``locals()[f"on_{stage}_batch_start"] = f`` in the class body defines a method by a
                # name made at run time (review helper-57, a8).
                self.unknown_base = (f"the body of `{current.name}` fills its namespace by names made at run time "
                                     f"(line {filling.lineno}): it may define any method")
        if self.unknown_base is None:
            # Python looks methods up in the class's C3 order, not in the order the bases were read:
            # with mixins that define the same helper, the one that runs is the first in that order.
            order = _c3(cls, by_name, imports)
            if order is None:
                self.unknown_base = "Python would refuse the order of its base classes"
            else:
                self.lineage = order
        self.methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        for owner in reversed(self.lineage):  # the class's own definitions win
            for statement in owner.body:
                if isinstance(statement, FUNCTIONS):
                    self.methods[statement.name] = statement
        # A name a base of another file defines may be the one that runs (C3 may put that base
        # before a class of this file), unless the class itself defines it: such a method is known
        # to exist, not known.
        own = {s.name for s in cls.body if isinstance(s, FUNCTIONS)}
        self.unknown_methods: set[str] = set().union(
            *((set(o.methods) | o.unknown_methods) - own for o in self.opaque))
        #: Who defines each of ``unknown_methods`` (for a reason).
        self.unknown_where: dict[str, str] = {
            name: f"the base class `{o.cls.name}` ({os.path.basename(o.path or '')})"
            for o in self.opaque for name in (set(o.methods) | o.unknown_methods) - own}
        for name in self.unknown_methods:
            self.methods.pop(name, None)
        #: Attribute names the file of a base of another file calls (``self.validation_step(...)``).
        self.foreign_called: set[str] = set().union(*(o.called_names | o.foreign_called for o in self.opaque))
        self.foreign_places: dict[int, str] = {}  # a node of another file -> its ``file:line``
        #: Attributes a base of another file, or a class deriving from this one, assigns.
        self.foreign_assigned: set[str] = set()
        self.calls_setattr_below = False  # a class deriving from this one calls setattr
        if look_down and subclassed is not None and project is not None and path is not None and self.unknown_base is None:
            self.subclassed = self._fold_subclasses()
        # Hooks the file's code calls itself (``self.validation_step(...)``, ``super().on_...()``).
        self.called_names = per_file(tree, "called_names", lambda: {
            n.func.attr for n in nodes_of(tree, ast.Call) if isinstance(n.func, ast.Attribute)
        })
        stores = [_SelfStores.of(owner) for owner in self.lineage]
        # ``setattr(self, ...)`` or ``self.__dict__`` may bind any name.
        self.calls_setattr = (any(own.calls_setattr for own in stores) or any(o.calls_setattr for o in self.opaque)
                              or self.calls_setattr_below)
        # ``self.x = ...`` anywhere in the class or its ancestors: such a name is the class's own,
        # whatever Lightning calls it. What a base of another file assigns is not followed.
        foreign_assigned = self.foreign_assigned | set().union(*(o.assigned for o in self.opaque))
        self.assigned = set().union(*(own.assigned for own in stores)) | foreign_assigned
        self.module_problems: dict[str, str] = {}  # why a module class of the file is not followed
        self.file_module_classes: dict[str, list[ast.ClassDef]] = {}  # attribute -> the file's classes it holds
        self.modules = ModuleReader(self.class_files, self._patched_elsewhere, _collective_word, self._registered,
                                    self._global_imported)
        self._asking: set[str] = set()  # attributes whose outside uses are being read (a cycle refuses)
        # Which attributes hold a known module is read per attribute, when a value asks.
        self._stores, self._foreign_assigned, self._submodules = stores, foreign_assigned, {}
        self.function_attributes = self._function_attributes(stores) - foreign_assigned
        self._helpers: dict[str, bool] = {}
        self.lists = self._list_attributes(stores) - foreign_assigned
        # An attribute counts as a metric only where every assignment builds a torchmetrics object
        # (``setup()`` may put a module of the program there instead).
        self.metrics = set().union(*(tree_lightning.metric_attributes(owner, imports) for owner in self.lineage)) & \
            self._every_assignment(stores, built=lambda _name, call: (imports.qualify(call.func) or "").startswith(
                "torchmetrics.")) - foreign_assigned
        self.forward_is_local = self._forward_is_local(stores)
        self._steps: dict[str, bool] = {}
        self._provenances: dict[tuple[int, int, int | None], Provenance] = {}
        self._hook_problems: dict[int, str | None] = {}
        self.iterable_data = per_file(tree, "iterable_data", lambda: _iterable_dataset_word(tree))


    @property
    def file_names(self) -> frozenset[str]:
        """Every name the file binds (``bound_names``, kept on the tree): read only for a call of a
        builtin, which most classes' logs never make (a walk of the whole file)."""
        return bound_names(self.tree)

    def provenance(self, method: ast.FunctionDef, until: ast.expr, arguments_of: bool = False) -> Provenance:
        """``Provenance(self, method, until)``, kept: it depends on ``until`` only through which of
        the hook's binding events come before the place where it ends, and a hook's logs are asked
        about several times (whether each may sync, then what the one to fix logs); logs with no
        binding between them share one. ``arguments_of``: the values as the call ``until`` receives
        them, before it runs (what it changes itself is not counted)."""
        reader = id(until) if arguments_of and not is_self_log(until) else None
        key = (id(method), bisect.bisect_left(event_places(method), (until.end_lineno, until.end_col_offset)), reader)
        known = self._provenances.get(key)
        if known is None:
            known = self._provenances[key] = Provenance(self, method, until, arguments_of)
        return known

    def _every_assignment(self, stores: list[_SelfStores], built=None, referenced=None, only: str | None = None) -> set[str]:
        """``self.<name>`` attributes every assignment of which (in the class and its ancestors)
        passes: ``self.x = f(...)`` by ``built(name, call)``, ``self.x = f`` by ``referenced(name, f)`` (None:
        such an assignment fails); any other assignment fails, and ``setattr`` may bind any."""
        if self.calls_setattr:
            return set()
        good: set[str] = set()
        bad: set[str] = set()
        for own in stores:
            for name, callee in own.built:
                if only is None or name == only:
                    (good if built is not None and built(name, callee) else bad).add(name)
            for name, value in own.referenced:
                if only is None or name == only:
                    (good if referenced is not None and referenced(name, value) else bad).add(name)
            bad |= own.bound_otherwise
        return good - bad

    def submodule_known(self, name: str) -> bool:
        """``self.<name>`` holds a known module (``_known_submodules``), asked of one attribute, and
        nothing changes it after it is built: no ``self.<name>.append(...)``/``add_module``/item or
        attribute store in the class, and no file of the program storing a ``.<name>`` on anything
        (``model.backbone = Other()`` in train.py)."""
        if name not in self._submodules:
            line = changed_in_place(self.lineage, name, self._applies_initialisers,
                                    lambda target: self._known_part_store(name, target)) or self._shared_in_class(name)
            changed = f"line {line}" if line is not None else self._patched_elsewhere(name) or self._reached_elsewhere(name)
            if changed is not None:
                self.module_problems.setdefault(name, f"`self.{name}` may be changed after it is built ({changed})")
            self._submodules[name] = changed is None and name not in self._foreign_assigned and name in \
                self._known_submodules(self._stores, only=name)
        return self._submodules[name]

    def _known_submodules(self, stores: list[_SelfStores], only: str | None = None) -> set[str]:
        """Attributes only ever assigned a module built by a known call (``_module_classes``: a
        ``torch.nn`` layer, a container of known modules, a module class of the program read whole),
        directly or through a factory method of the class. Why one is not, in ``module_problems``;
        the module classes each holds, in ``file_module_classes``."""
        view = FileView.of(self.path, self.tree, self.imports)

        def known(name: str, call: ast.Call) -> bool:
            problem = self._handed_class_problem(call)
            if problem is False:
                problem = self.modules.call_problem(call, view)
            for held, _where in self.modules.classes_of.get(id(call), ()):
                self.file_module_classes.setdefault(name, []).append(held)
            if problem is not None:
                self.module_problems.setdefault(name, problem)
            return problem is None

        through = self._through_factories(known)

        def placed(name: str, call: ast.Call) -> bool:
            if not self.built_before_the_move(call):
                self.module_problems.setdefault(name, (
                    f"`self.{name}` is built at line {call.lineno}, after Lightning moves the module to the rank's "
                    "device: what it holds stays where it was made"))
                return False
            return through(name, call)

        return self._every_assignment(stores, built=placed, referenced=self._handed_module, only=only)

    def built_before_the_move(self, node: ast.AST) -> bool:
        """``node`` is in a method of the class that runs before Lightning moves the module to the
        rank's device (``__init__``, ``setup``, ``configure_model``), or in a helper only those call:
        a module built there is a child when the strategy moves the module, its parameters and
        buffers with it. Built in a step or a later hook, it stays where it was made."""
        method = next((s for owner in self.lineage for s in owner.body
                       if isinstance(s, FUNCTIONS) and any(n is node for n in nodes_below(s))), None)
        return method is not None and self._runs_before_the_move(method, frozenset())

    def _runs_before_the_move(self, method: ast.AST, seen: frozenset[int]) -> bool:
        if method.name in BUILT_BEFORE_THE_MOVE:
            return True
        if id(method) in seen or len(seen) > 4:
            return False
        calls = self.calls_of(method.name)
        if isinstance(calls, str):
            return False
        callers = [caller for caller, _call in calls]
        # A base of another file may call it too (``BaseTask.__init__`` calls
        # ``self.configure_models()``): each of its methods that names it, where it only calls it.
        bases, owners = list(self.opaque), list(self.lineage)
        while bases:  # the lineages of the bases of other files, and of theirs
            base = bases.pop()
            owners.extend(base.lineage)
            bases.extend(base.opaque)
        for owner in owners:
            for other in owner.body:
                if not isinstance(other, FUNCTIONS) or any(other is c for c in callers):
                    continue
                reads = [n for n in walk(other) if isinstance(n, ast.Attribute) and n.attr == method.name and is_self(n.value)]
                if not reads:
                    continue
                parents = parent_map(other)
                if not all(isinstance(parents.get(id(r)), ast.Call) and parents[id(r)].func is r for r in reads):
                    return False  # handed around (``partial(self.build)``): it may run anywhere
                callers.append(other)
        return bool(callers) and all(self._runs_before_the_move(caller, seen | {id(method)}) for caller in callers)

    def _handed_module(self, name: str, value: ast.expr) -> bool:
        """``self.<name> = <parameter>`` in the class's ``__init__`` holds a known module where every
        construction of the class in the program hands that parameter one (``model.constructions``):
        a call that builds a known module, or a name every binding of which builds one and every use
        of which leaves it as built. Why not, in ``module_problems``; nothing for any other value."""
        init = next((s for s in self.cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        if init is None or not isinstance(value, ast.Name) or not any(n is value for n in nodes_below(init)):
            return False
        arguments = init.args
        if value.id not in {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs][1:]} \
                or any(value.id in bound_names(statement) for statement in init.body):
            return False
        # Any other use in ``__init__`` (``model.register_forward_hook(...)``, ``self.head = model[-1]``,
        # a second attribute holding it) may change it, or share it with code not followed.
        other = next((n for n in nodes_below(init) if isinstance(n, ast.Name) and n.id == value.id and n is not value), None)
        problem = (f"`__init__` uses `{value.id}` otherwise (line {other.lineno})" if other is not None
                   else self._handed_problem(name, init, value.id))
        if problem is not None:
            self.module_problems.setdefault(
                name, f"`self.{name}` holds `{value.id}` (line {value.lineno}), handed to `{self.cls.name}(...)`: {problem}")
        return problem is None

    def _handed_class_problem(self, call: ast.Call) -> str | None | bool:
        """A call in the class's ``__init__`` that names classes its parameters hold: built from one
        (``self.encoder = encoder_class(...)``) or handing one on (``Head(dim, act_fn)``). None where,
        at every construction of the class in the program, what each such parameter is handed (or
        its default) is a class, and the call builds a known module with them; else why not. False
        where the call names no parameter that any construction hands a class."""
        init = next((s for s in self.cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        if init is None or not any(n is call for n in nodes_below(init)):
            return False
        arguments = init.args
        rebound = set().union(*(bound_names(statement) for statement in init.body))
        parameters = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs][1:]} - rebound
        named = sorted({n.id for n in walk(call) if isinstance(n, ast.Name) and n.id in parameters})
        if not named:
            return False
        if self.project is None or self.path is None or self.unknown_base is not None:
            return False
        uses = self.project.constructions(self.cls.name, self.path, self.tree, self.cls)
        if isinstance(uses, str) or not uses:
            return False
        own = FileView.of(self.path, self.tree, self.imports)
        defaults = {id(d) for d in [*arguments.defaults, *arguments.kw_defaults] if d is not None}
        checks = []
        for real, tree, imports, construction in uses:
            passed = call_paths.parameters_bound(init, construction)
            place = f"{os.path.basename(real)}:{construction.lineno}"
            bound = {}
            for name in named:
                argument = (passed or {}).get(name)
                if argument is None:
                    continue
                view = own if id(argument) in defaults or imports is None else FileView.of(real, tree, imports)
                value = self.modules.class_value(argument, view)
                if value is not None:
                    bound[name] = value
            checks.append((place, passed, bound))
        if not any(bound for _place, _passed, bound in checks):
            return False
        for place, passed, bound in checks:
            if passed is None:
                return f"`{self.cls.name}(...)` at {place} may pass its parameters through `*args` or `**kwargs`"
            problem = self.modules.call_problem(call, own, bound=bound)
            if problem is not None:
                return f"as `{self.cls.name}(...)` is built at {place}: {problem}"
        return None

    def _handed_problem(self, name: str, init: ast.FunctionDef, parameter: str) -> str | None:
        if self.unknown_base is not None:
            return self.unknown_base
        if self.project is None or self.path is None:
            return "the program's other files are not read"
        uses = self.project.constructions(self.cls.name, self.path, self.tree, self.cls)
        if isinstance(uses, str):
            return uses
        if not uses:
            return f"no code of the program builds `{self.cls.name}`"
        handed: dict[int, set[int]] = {}  # per tree: the argument nodes constructions bind to the parameter
        bound_per_call = []
        for real, tree, _imports, call in uses:
            bound = call_paths.parameters_bound(init, call)
            place = f"{os.path.basename(real)}:{call.lineno}"
            if bound is None:
                return f"{place} may pass it through `*args` or `**kwargs`"
            if parameter not in bound:
                return f"{place} does not pass `{parameter}`"
            handed.setdefault(id(tree), set()).add(id(bound[parameter]))
            bound_per_call.append((real, tree, _imports, bound[parameter], place))
        for real, tree, imports, argument, place in bound_per_call:
            view = FileView.of(real, tree, imports) if imports is not None else FileView.of(self.path, self.tree, self.imports)

            def known_call(call: ast.Call, view=view) -> str | None:
                problem = self.modules.call_problem(call, view)
                for held, _where in self.modules.classes_of.get(id(call), ()):
                    self.file_module_classes.setdefault(name, []).append(held)
                return problem

            if isinstance(argument, ast.NamedExpr) and isinstance(argument.value, ast.Call):
                # ``Lit(backbone := nn.Linear(4, 4))``: the call builds it; every use of the name is read
                found = object_problem(tree, argument.target, lambda node, argument=argument: node is argument,
                                       known_call, self._attribute_reached)
                problem = None if found is None else found[0]
            elif isinstance(argument, ast.Call):
                problem = known_call(argument)
            elif isinstance(argument, ast.Name):
                ids = handed[id(tree)]
                found = object_problem(tree, argument, lambda node, ids=ids: id(node) in ids, known_call,
                                       self._attribute_reached)
                problem = None if found is None else found[0]
                if problem is None and object_scope(tree, argument) is tree:
                    elsewhere = self.project.global_imported_elsewhere(argument.id, real)
                    if elsewhere is not None:
                        problem = f"{elsewhere} may import `{argument.id}` and change it"
            else:
                problem = f"it is handed `{short(argument)}`, not built where it is read"
            if problem is not None:
                return f"{place}: {problem}"
        return None

    def _through_factories(self, built):
        """``built``, also through the class's own factory methods: ``self.generator =
        self.init_generator(dim)`` where every ``return`` of ``init_generator`` builds what ``built``
        accepts (``return Generator(dim)``). Such a method must be the one that runs: a plain method,
        not defined again by a class of the project, not replaced at run time."""
        def through(name: str, call: ast.Call, depth: int = 0) -> bool:
            factory = self_attr(call.func)
            if factory is None:
                return built(name, call)
            returns = self._factory_returns(factory) if depth < 3 else None
            return bool(returns) and all(through(name, r, depth + 1) for r in returns)
        return through

    def _factory_returns(self, name: str) -> list[ast.Call] | None:
        """The calls every ``return`` of the class's method ``name`` makes (``return Net(...)``), where
        that method is certainly the one that runs and returns nothing else; else None."""
        method = self.methods.get(name)
        if (not isinstance(method, ast.FunctionDef) or method.decorator_list or self.subclassed is not None
                or self.unknown_base is not None or name in self.assigned or self.calls_setattr
                or self.replaced(name) is not None or name in LIGHTNING_MODULE_ATTRIBUTES):
            return None
        returns = [n for n in walk_outside_functions(method.body) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom))]
        if not returns or not all(isinstance(r, ast.Return) and isinstance(r.value, ast.Call) for r in returns):
            return None
        if not _always_exits(method.body):
            return None  # it may fall off its end: None
        return [r.value for r in returns]

    def _function_attributes(self, stores: list[_SelfStores]) -> set[str]:
        """Attributes only ever assigned a function known to compute on its arguments only
        (``self.loss_function = F.mse_loss``)."""
        return self._every_assignment(stores, referenced=lambda _name, value: self._pure_function(value))

    def _pure_function(self, func: ast.expr) -> bool:
        """``func`` names a function of the packages that compute on their arguments (``torch.<f>``,
        ``torch.nn.functional``...), through the file's imports, with no name of the file hiding it."""
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or self._hidden(root.id):
            return False
        qualified = self.imports.qualify(func)
        # ``self.to_tensor = torch.as_tensor``: pure, but its tensor is made on the CPU
        return qualified is not None and pure_function_name(qualified) and not makes_a_tensor(qualified)

    def _hidden(self, name: str) -> bool:
        """A use of ``name`` may mean something the file binds otherwise (``file_bound_names``)."""
        bound = self.file_bound_names()
        return bound is None or name in bound

    def file_bound_names(self) -> frozenset[str] | None:
        """Names the file binds other than by an import (a function, variable or parameter that may
        hide an imported one, or a class of the file); None where a star import may bind any."""
        def compute():
            nodes = list(every_node(self.tree))
            if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in nodes):
                return None
            return (frozenset(n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
                    | frozenset(n.name for n in nodes if isinstance(n, FUNCTIONS))
                    | frozenset(n.arg for n in nodes if isinstance(n, ast.arg)))
        return per_file(self.tree, "bound_not_imported", compute)

    def replaced(self, name: str) -> str | None:
        """Why the file's code may replace the class's method ``name`` at run time, or None: an
        attribute of that name stored on anything but ``self`` (``Model._evaluate = f``,
        ``model._evaluate = MethodType(...)``), ``setattr`` on anything but ``self``, a three-argument
        ``type(...)``, or the class handed around as a value (``Base = Model``: a subclass or a patch
        elsewhere)."""
        stores, dynamic, escapes = per_file(self.tree, "patches", lambda: _patches(self.tree))
        if name in stores:
            return f"the file sets `.{name}` on an object (line {stores[name]}): the method may be replaced"
        if dynamic is not None:
            return f"`{dynamic[0]}` (line {dynamic[1]}) may replace methods at run time"
        line = escapes.get(self.cls.name)
        if line is None and "load_from_checkpoint" in self.unknown_methods:
            line = next((n.lineno for n in nodes_of(self.tree, ast.Attribute) if n.attr == "load_from_checkpoint"), None)
        if line is not None:
            return f"`{self.cls.name}` is handed around as a value (line {line}): it may be subclassed or patched elsewhere"
        return None

    def ending(self, method: ast.FunctionDef) -> Provenance | None:
        """The method's values as its end reads them: every binding counts (a return in a loop sees
        what the loop's later statements bound). None for a method with no expression."""
        expressions = [n for n in every_node(method) if isinstance(n, ast.expr) and hasattr(n, "end_lineno")]
        if not expressions:
            return None
        return self.provenance(method, max(expressions, key=lambda n: (n.end_lineno, n.end_col_offset)))

    def changed_arguments(self, name: str) -> set[int | str]:
        """The positions (and keyword names) of the arguments the helper ``name`` changes in place
        through its parameters with a value not known to be this rank's own (``stats[k] =
        self.all_gather(v).sum()``, ``count += gathered``): after a call, what the caller passed there
        is no longer known. Storing known values (``out["loss"] = loss``) or ``del batch["label"]``
        keeps it this rank's own."""
        helper = self.methods.get(name)
        if not isinstance(helper, ast.FunctionDef):
            return set()
        stored = stored_through(helper)
        ending = self.ending(helper) if stored else None
        if ending is None:
            return set()
        # A store of a value not known here, or of another parameter (``acc += value``: the caller
        # may pass a global ``value``), changes the argument, and every argument that may share
        # its object (``_aliases``: a view stored into, parameters one object).
        harmful: set[str] = set()
        for stored_name, values in stored.items():
            if any(ending.unknown(value) is not None
                   or {n.id for n in walk(value) if isinstance(n, ast.Name)} & (ending.parameters - {stored_name})
                   for value in values):
                harmful |= ending._aliases({stored_name}) & ending.parameters
        positional = [a.arg for a in [*helper.args.posonlyargs, *helper.args.args]][1:]
        found: set[int | str] = set()
        for index, parameter in enumerate(positional):
            if parameter in harmful:
                found.update((index, parameter))
        for parameter in helper.args.kwonlyargs:
            if parameter.arg in harmful:
                found.add(parameter.arg)
        if (helper.args.vararg and helper.args.vararg.arg in harmful) or (helper.args.kwarg and helper.args.kwarg.arg in harmful):
            found.add("*")
        return found

    def held_by(self, name: str) -> tuple[str, int] | None:
        """(its text, its line) of the first value the class assigns to ``self.<name>``, which the
        proof does not know (a constructor's parameter, a factory's result): for a reason that names it."""
        for owner in self.lineage:
            own = _SelfStores.of(owner)
            for attribute, call in own.built:
                if attribute == name:
                    return f"{short(call.func)}(...)", call.lineno
            for attribute, value in own.referenced:
                if attribute == name:
                    return short(value), value.lineno
        return None

    def helper_problem(self, name: str) -> str | None:
        """None when ``self.<name>(...)``, on this rank's own arguments, returns this rank's own value:
        a plain method of the class (not decorated, not a generator, no attribute of that name, no
        subclass in the project that may define it again), whose parameters' defaults are constants,
        which changes none of its arguments in place, and every ``return`` of which is known; else
        why not. Kept per name; a cycle is unknown."""
        if name in self._helpers:
            return self._helpers[name]
        self._helpers[name] = f"`{name}` calls itself"
        self._helpers[name] = problem = self._helper_problem(name)
        return problem

    def forward_problem(self) -> str | None:
        """None when ``self(...)`` returns this rank's own value: the class's ``forward`` (none at
        all: ``self(...)`` raises) is read like a helper (``helper_problem``)."""
        if "forward" not in self.methods:
            return None if self.unknown_base is None and "forward" not in self.unknown_methods else \
                "`forward` is not read"
        key = "\0forward"
        if key not in self._helpers:
            self._helpers[key] = "`forward` calls itself"
            self._helpers[key] = self._helper_problem("forward", as_forward=True)
        return self._helpers[key]

    def _plain_helper_problem(self, name: str, as_forward: bool = False) -> str | None:
        """Why ``self.<name>(...)`` may not run the class's method ``name`` as written: not a plain
        method, one a subclass or an unread base may define again, decorated, replaced, a
        generator. None where it runs as written."""
        helper = self.methods.get(name)
        if not isinstance(helper, ast.FunctionDef) or (name in LOGGING_NAMES and not as_forward):
            return f"`{name}` is not a plain method of the class"
        if self.subclassed is not None:
            return f"`{name}` may be defined again: {self.subclassed}"
        if self.unknown_base is not None:
            return f"{self.unknown_base}: it may define `{name}` first"
        if helper.decorator_list:
            return f"`{name}` is decorated"
        problem = self._runs_as_written(name, helper)
        if problem is not None:
            return problem
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in walk_outside_functions(helper.body)):
            return f"`{name}` is a generator"
        return None

    def _handed_reason(self, hook: str) -> str:
        start = BATCH_START_OF.get(hook)
        if start is not None and self.moves_batches(hook) and not self.moves_batches() and (
                start in self.methods or self.hook_elsewhere(start) is not None):
            where = self.hook_elsewhere(start) or f"line {self.methods[start].lineno}"
            return f"`{start}` ({where}) is handed the same batch first and may change it"
        return self._handed_reason_otherwise(hook)

    def _handed_reason_otherwise(self, hook: str) -> str:
        """Why what Lightning hands ``hook`` (a batch, a step's outputs) is not known as handed."""
        elsewhere = self.hook_elsewhere(hook)
        if elsewhere is not None:
            return f"`{hook}` is also defined at {elsewhere} (a callback's runs first, on the same objects)"
        if self.moves_batches():
            return "the class may replace each batch before its hooks see it (`on_after_batch_transfer`)"
        step = STEP_OF.get(hook)
        if step is not None and self.hands_to_module(step):
            return f"`{step}` keeps what it returns or is handed on the module, where it may change"
        if step is not None:
            return f"`{step}` returns or changes in place what is not known to be this rank's own"
        return "Lightning's arguments to it are not known here"

    def moves_batches(self, hook: str | None = None) -> bool:
        """The class (or a base not read) may replace each batch before the hooks see it
        (``on_before_batch_transfer``, ``on_after_batch_transfer``, ``transfer_batch_to_device``),
        or, before ``hook``, change it in place: the loop's ``on_*_batch_start`` of the class or of
        a callback of the program (``BATCH_START_OF``), which Lightning hands the same batch."""
        hooks = {"on_before_batch_transfer", "on_after_batch_transfer", "transfer_batch_to_device"}
        start = BATCH_START_OF.get(hook or "")
        if start is not None:
            if self.hook_elsewhere(start) is not None or start in self.unknown_methods:
                return True
            # The class's own, read: it may change the batch in place or keep it on the module.
            if start in self.methods and (self.changed_parameters(start) != set() or self.hands_to_module(start)):
                return True
        return bool(hooks & (set(self.methods) | self.unknown_methods)) or self.unknown_base is not None

    def touches_module(self, name: str) -> bool:
        """``self.<name>(...)`` (``forward`` for ``self(...)``) may change in place an object the
        module holds: a method that may not run as written or is not read whole (its values not
        known: it may call anything), that stores through ``self`` (``self.stats[k] = v``,
        ``self.total += v``), calls a method of something the module holds other than a known
        module, a metric's ``update`` or a list's ``append`` (``self.last.add_(g)``), or calls
        such a method. A cycle touches nothing more."""
        key = ("touches", name)
        if key in self._callers:
            return self._callers[key]
        self._callers[key] = False
        problem = self.forward_problem() if name == "forward" else self.helper_problem(name)
        method = self.methods.get(name)
        touches = problem is not None or not isinstance(method, ast.FunctionDef)
        if not touches:
            aliases = module_aliases(method)  # ``last = self.last``, ``for t in self.window``
            for n in walk_outside_functions(method.body):
                for root, depth in store_roots(n):
                    # ``self.stats[k] = v``, ``self.total += v``, ``last[0] = v``: a change in place
                    if is_self(root) and (depth >= 2 or isinstance(n, ast.AugAssign)):
                        touches = True
                    if isinstance(root, ast.Name) and root.id in aliases and (depth or isinstance(n, ast.AugAssign)):
                        touches = True
                if isinstance(n, ast.Call) and not is_self_log(n) and self._hands_held(n, aliases):
                    touches = True  # ``dist.all_reduce(self.last)``: handed what the module holds
                elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                    held = self_attr(n.func.value)
                    if held is not None and not (
                            self.submodule_known(held) or held in self.metrics
                            or (held in self.lists and n.func.attr in LIST_METHODS)):
                        touches = True
                    if held is None and reads_module(n.func.value, aliases) and n.func.attr not in TENSOR_READS:
                        touches = True  # ``last.add_(g)``, ``stats.update(...)`` on what the module holds
                    called = self_attr(n.func)
                    if called in self.methods and called != name and self.touches_module(called):
                        touches = True
                elif isinstance(n, ast.Call) and is_self(n.func) and name != "forward" and self.touches_module("forward"):
                    touches = True
                if touches:
                    break
        self._callers[key] = touches
        return touches

    def _hands_held(self, call: ast.Call, aliases: frozenset[str] = frozenset()) -> bool:
        """``call`` is handed something the module holds (``self.last``, ``self.stats["x"]``, a
        name of ``aliases``; not a Lightning property such as ``self.device``) and is not a
        function known to compute on its arguments only."""
        values = [*call.args, *(k.value for k in call.keywords)]
        called = {id(c.func) for v in values for c in walk(v) if isinstance(c, ast.Call)}
        held = any((isinstance(n, ast.Attribute) and is_self(n.value) and id(n) not in called
                    and n.attr not in RANK_OWN_PROPERTIES)
                   or (isinstance(n, ast.Name) and n.id in aliases and id(n) not in called)
                   for v in values for n in walk(v))
        if not held:
            return False
        qualified = self.imports.qualify(call.func)
        return not (qualified is not None and pure_function_name(qualified) and self.rebound(qualified.rsplit(".", 1)[-1]) is None)

    def hands_to_module(self, name: str) -> bool:
        """The method ``name`` may keep an object it makes or is handed on the module (``self.last =
        loss``, ``self.outputs.append(v)``, ``setattr(self, k, v)``), or calls one that does: what a
        caller hands it or takes from it may then be changed through the module. A method that
        may not run as written may do anything."""
        key = ("hands", name)
        if key in self._callers:
            return self._callers[key]
        self._callers[key] = False
        method = self.methods.get(name)
        hands = self._plain_helper_problem(name) is not None
        if not hands:
            aliases = module_aliases(method)
            for n in walk_outside_functions(method.body):
                for root, depth in store_roots(n):
                    hands = hands or is_self(root) or (depth > 0 and isinstance(root, ast.Name) and root.id in aliases)
                if isinstance(n, ast.Call):
                    func = n.func
                    if isinstance(func, ast.Attribute) and (self_attr(func.value) is not None
                                                            or reads_module(func.value, aliases)) and func.attr in KEEPING_METHODS:
                        hands = True
                    elif isinstance(func, ast.Name) and func.id == "setattr":
                        hands = True
                    elif self_attr(func) in self.methods and func.attr != name and self.hands_to_module(func.attr):
                        hands = True
                if hands:
                    break
        self._callers[key] = hands
        return hands

    def changed_parameters(self, name: str) -> set[int | str] | None:
        """The positions and keyword names of the arguments that ``self.<name>(...)`` may change in
        place, whatever it returns: stored through (``changed_arguments``) or handed to a call that
        may change them (``dist.all_reduce(x)``, an unknown module), through any alias. None where
        the method may not run as written (it may change any). A cycle changes nothing more."""
        key = ("changed", name)
        if key in self._callers:
            return self._callers[key]
        self._callers[key] = set()
        found: set[int | str] | None = None
        # ``self.forward(x)`` runs the class's ``forward`` as written (no module hooks: a direct call).
        if self._plain_helper_problem(name, as_forward=name == "forward") is None:
            helper = self.methods[name]
            ending = self.ending(helper)
            found = set(self.changed_arguments(name))
            if ending is not None:
                # What a nested function or lambda reads, it may change whenever it is called.
                changed = ending.parameters & (set(ending.changed_by) | set(names_in_nested_scopes(helper)))
                positional = [a.arg for a in [*helper.args.posonlyargs, *helper.args.args]][1:]
                found.update(i for i, parameter in enumerate(positional) if parameter in changed)
                found.update(parameter for parameter in positional if parameter in changed)
                found.update(a.arg for a in helper.args.kwonlyargs if a.arg in changed)
                if {a.arg for a in (helper.args.vararg, helper.args.kwarg) if a is not None} & changed:
                    found.add("*")
        self._callers[key] = found
        return found

    def _helper_problem(self, name: str, as_forward: bool = False) -> str | None:
        problem = self._plain_helper_problem(name, as_forward)
        if problem is not None:
            return problem
        helper = self.methods[name]
        # Read with every binding of the method, and what it changes in place of its own arguments.
        ending = self.ending(helper)
        if ending is None:
            return None
        changed = self._argument_change(name, frozenset({name}))
        if changed is not None:
            return changed
        for r in walk_outside_functions(helper.body):
            if isinstance(r, ast.Return) and r.value is not None:
                unknown = ending.unknown(r.value)
                if unknown is not None:
                    line = getattr(unknown, "lineno", None) or r.lineno
                    return (f"`{name}` returns what `{short(unknown)}` (line {line}) makes, not known to be "
                            "this rank's own")
        return None

    def _argument_change(self, name: str, seen: frozenset[str]) -> str | None:
        """Which call of the method ``name`` (read with every binding) may change one of its own
        arguments in place, and why (``change_reason``); None where none does."""
        ending = self.ending(self.methods[name])
        if ending is None:
            return None
        for parameter in sorted(ending.parameters & set(ending.changed_by)):
            changer = ending.changed_by[parameter]
            return (f"`{short(changer)}` (line {changer.lineno}) in `{name}` may change its argument `{parameter}` "
                    f"in place{self.change_reason(changer, ending, seen)}")
        return None

    def change_reason(self, changer: ast.expr, provenance: Provenance, seen: frozenset[str] = frozenset()) -> str:
        """Why the call ``changer`` (of ``provenance``'s method) may change in place what it is
        handed, as a clause to append (``": ..."``), down to the fact not known: a module held that
        is not read, a method of the class that is not plain or makes such a call itself, or what
        a known callee is handed that is not known (a known function runs the code of the objects
        it is handed). Empty where the call is code not read at all (its text says so)."""
        if not isinstance(changer, ast.Call):
            return ""
        func = changer.func
        held = self_attr(func)
        method = "forward" if is_self(func) else held if held in self.methods else None
        if method is not None:
            if method in seen:
                return ""
            problem = self._plain_helper_problem(method, as_forward=method == "forward")
            if problem is not None:
                return f": {problem}"
            inner = self._argument_change(method, seen | {method})
            if inner is not None:
                return f": {inner}"
        elif held is not None and not self.submodule_known(held):
            if held in self.module_problems:
                return f": {self.module_problems[held]}"
            holds = self.held_by(held)
            return f": `self.{held}` holds `{holds[0]}` (line {holds[1]}), an object whose class is not read" \
                if holds is not None else f": `self.{held}` is not known to hold a module that is read"
        handed = [a.value if isinstance(a, ast.Starred) else a for a in [*changer.args, *(k.value for k in changer.keywords)]]
        unknown = next((part for part in map(provenance.unknown, handed) if part is not None), None)
        if isinstance(unknown, ast.Name) and provenance.changed_by.get(unknown.id) is changer:
            # Not known because this very call may change it: what made it unknown first says why.
            unknown = provenance.first_unknown_source()
            if unknown is None and provenance.untrusted:
                return (f": it is handed `{sorted(provenance.untrusted)[0]}`, whose code it may run: "
                        f"{self._handed_reason(provenance.method.name)}")
        if unknown is None:
            return ""
        if unknown is changer:
            return f": `{short(changer.func)}` is code the proof does not read"
        return (f": it is handed `{short(unknown)}`, whose code it may run, and which is not known to be this rank's "
                f"own ({self.unknown_reason(provenance, unknown, 1)})")

    def _list_attributes(self, stores: list[_SelfStores]) -> set[str]:
        """``self.<name>`` attributes every assignment of which (in the class and its bases) is a list
        display: their ``append`` stores an object without changing it."""
        if self.calls_setattr:
            return set()
        good = set().union(*(own.lists for own in stores))
        bad = set().union(*(own.not_lists for own in stores))
        return good - bad

    def _forward_is_local(self, stores: list[_SelfStores]) -> bool:
        """``self(...)`` computes on this rank's inputs only: the class's ``forward`` holds no word of
        a collective; or, with every base known, there is none and ``self(...)`` raises anyway."""
        if self.unknown_base is not None:
            return False
        if self.calls_setattr or any(own.binds_forward for own in stores):
            return False
        if "__call__" in self.methods or {"forward", "__call__"} & self.unknown_methods:
            return False
        forward = self.methods.get("forward")
        if forward is None:
            return True
        if not isinstance(forward, ast.FunctionDef):
            return False
        return _collective_word(forward, self.imports) is None

    def outputs_known(self, step: str) -> bool:
        """What the batch-end and 1.x epoch-end hooks receive from ``step`` is this rank's own: the
        step's returns, and where the module defines 1.x's ``<step>_end`` (whose return replaces
        them), that hook's too."""
        return self.step_returns_known(step) and (f"{step}_end" not in self.methods
                                                  or self.step_returns_known(f"{step}_end"))

    def step_batch_kept(self, step: str, hook: str) -> bool:
        """The ``batch`` a batch-end ``hook`` receives is still the one the step received: the step
        changes none of its arguments in place and keeps none on the module (``batch.append(v)``,
        ``self.last = batch``), and no callback of the program sees it first (``hook_elsewhere``)."""
        method = self.methods.get(step)
        if not isinstance(method, ast.FunctionDef):
            return self.unknown_base is None and step not in self.unknown_methods and self.hook_elsewhere(hook) is None
        changed = self.changed_parameters(step)
        return changed is not None and not changed and not self.hands_to_module(step) and self.hook_elsewhere(hook) is None

    def hook_elsewhere(self, hook: str) -> str | None:
        """Where a class of the program other than this module's defines ``hook`` (a Callback's
        ``on_validation_batch_end``, which Lightning runs before the module's, handed the same
        ``outputs`` and ``batch``): ``file:line``; a reason where the facts are partial."""
        if self.project is None or self.path is None:
            return "the program's other files are not read"
        return self.project.defines_elsewhere(hook, self.path, (self.cls.lineno, self.cls.end_lineno or self.cls.lineno))

    def step_returns_known(self, name: str) -> bool:
        """Every value the step ``name`` returns is provably its rank's own (no step: no outputs)."""
        if name in self._steps:
            return self._steps[name]
        self._steps[name] = False  # a cycle is unknown
        step = self.methods.get(name)
        if step is None:
            known = self.unknown_base is None and name not in self.unknown_methods
        elif not isinstance(step, ast.FunctionDef) or any(
                isinstance(n, (ast.Yield, ast.YieldFrom)) for n in walk_outside_functions(step.body)):
            known = False
        else:
            # Returned values the step also keeps on the module may be changed there before a
            # batch-end hook reads them (``self.last = loss; return loss``).
            known = all(r.value is None or self.provenance(step, r.value).unknown(r.value) is None
                        for r in walk_outside_functions(step.body) if isinstance(r, ast.Return)) \
                and not self.hands_to_module(name)
        self._steps[name] = known
        return known

    # --- where the call is --------------------------------------------------------------------

    def caller_problem(self, method: ast.AST) -> str | None:
        """None when every run of ``method`` happens on every rank, the same way: a hook Lightning
        calls (``hook_problem``), or a helper of the class every call of which is ``self.<name>(...)``
        in such a method, reached there on every call (``reach_problem``), with that rank's own
        arguments (``helper_callers_problem``)."""
        if getattr(method, "name", None) in EVERY_RANK_HOOKS:
            return self.hook_problem(method)
        return self.helper_callers_problem(method)

    def helper_callers_problem(self, method: ast.AST) -> str | None:
        """``caller_problem`` of a method Lightning does not call. Kept per method; a cycle of
        calls is unknown."""
        key = id(method)
        if key not in self._callers:
            self._callers[key] = f"`{method.name}` is reached from itself"
            self._callers[key] = self._helper_callers_problem(method)
        return self._callers[key]

    def _helper_callers_problem(self, method: ast.AST) -> str | None:
        name = method.name
        if not isinstance(method, ast.FunctionDef):
            return f"`{name}` is an async method"
        if name in LIGHTNING_MODULE_ATTRIBUTES or name.startswith(("__", "on_")) or name.endswith(
                ("_epoch_end", "_step_end")) or name in LOGGING_NAMES:
            return f"`{name}` is a name Lightning or torch may call itself, not only the class's code"
        if self.unknown_base is not None:
            return f"{self.unknown_base}: it may call `{name}` too"
        if self.subclassed is not None:
            return f"{self.subclassed}: it may call `{name}`, or define it again"
        if self.methods.get(name) is not method:
            return f"`{name}` is defined again"
        if method.decorator_list and not all(self._grad_mode(d, method) for d in method.decorator_list):
            return f"`{name}` is decorated"
        problem = self._runs_as_written(name, method)
        if problem is not None:
            return problem
        if LOG_METHODS & (set(self.methods) | self.unknown_methods):
            return "the class defines its own `log`"
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n, _ in outside_functions_with_places(method)):
            return f"`{name}` is a generator"
        calls = self.calls_of(name)
        if isinstance(calls, str):
            return calls
        if not calls:
            return f"nothing in the file calls `{name}` (defined at line {method.lineno})"
        for caller, call in calls:
            problem = self._call_site_problem(caller, call, self.caller_problem)
            if problem is not None:
                return f"`{name}` is a helper: {problem}"
        if self.elsewhere is None:
            return f"whether another file of the program calls `{name}` is not known"
        place = self.elsewhere(name)
        if place is not None:
            return f"another file may call `{name}`: {place}"
        return None

    def _runs_as_written(self, name: str, method: ast.FunctionDef) -> str | None:
        """Why calling the method ``name`` may not run its body as written with constant defaults:
        the attribute is also assigned, the code may replace it, a default is not a constant."""
        if name in self.assigned or self.calls_setattr:
            return f"`self.{name}` is also assigned ({self._stored_where(name)})"
        replaced = self.replaced(name)
        if replaced is not None:
            return replaced
        if not all(isinstance(d, ast.Constant) for d in [*method.args.defaults, *method.args.kw_defaults] if d is not None):
            return f"a default of `{name}`'s parameters is not a constant"
        return None

    def calls_of(self, name: str) -> list[tuple[ast.FunctionDef, ast.Call]] | str:
        """Every call of the helper ``name`` that the file makes: (the method, the call), each
        ``self.<name>(...)`` in a method of the class. Else why its callers are not all known: the
        name read another way (``partial(self.name)``, ``model.name(...)``, ``super().name()``,
        ``getattr(self, "name")``). ``self.<name>`` in a method of another class of the file (no
        class of the project derives from this one) is that class's own."""
        own = {id(owner) for owner in self.lineage}
        dynamic = per_file(self.tree, "dynamic_access", lambda: dynamic_access(self.tree))
        if dynamic is not None:
            return f"`{short(dynamic)}` (line {dynamic.lineno}) may call any method by a name made at run time"
        found = []
        for owner, node in _attribute_reads(self.tree):
            if isinstance(node, ast.Constant):
                if node.value == name:
                    return f"the string `\"{name}\"` (line {node.lineno}) may name `{name}` (`getattr`)"
                continue
            if isinstance(node, ast.Name):
                if node.id == name:
                    return f"`{name}` is read as a name at line {node.lineno} (an alias, a partial): it may be called there"
                continue
            if node.attr != name:
                continue
            method = owner[1] if owner is not None else None
            receiver_is_self = method is not None and is_self(node.value) and _first_parameter(method) == "self"
            if owner is not None and id(owner[0]) not in own and receiver_is_self:
                continue  # another class's own method of that name
            call = _call_of(node, method) if method is not None else None
            if call is None or not receiver_is_self or id(owner[0]) not in own:
                return f"`{short(node)}` (line {node.lineno}) may call `{name}` where the proof does not look"
            if (self.methods.get(method.name) is not method
                    and method.name not in per_file(self.tree, "read_otherwise", lambda: _read_otherwise(self.tree))):
                continue  # a method no instance runs: defined again lower in the order, read only as self.<name>
            found.append((method, call))
        return found


    def roots(self, method: ast.AST, seen: frozenset[int] = frozenset()) -> frozenset[str]:
        """The hooks from which ``method`` is reached through the class's calls (itself, for a hook)."""
        if getattr(method, "name", None) in EVERY_RANK_HOOKS:
            return frozenset({method.name})
        calls = self.calls_of(method.name) if id(method) not in seen else []
        if isinstance(calls, str):
            return frozenset()
        return frozenset().union(*(self.roots(caller, seen | {id(method)}) for caller, _ in calls))

    def hook_problem(self, method: ast.AST) -> str | None:
        """None when Lightning calls ``method`` on every rank, the same way, and nothing else calls it.
        Kept per hook: each of its logs asks."""
        key = id(method)
        if key not in self._hook_problems:
            self._hook_problems[key] = f"`{method.name}` is called from itself"  # a cycle, while asked
            self._hook_problems[key] = self._hook_problem(method)
        return self._hook_problems[key]

    def _hook_problem(self, method: ast.AST) -> str | None:
        if not isinstance(method, ast.FunctionDef):
            return f"`{method.name}` is an async method"
        if method.name not in EVERY_RANK_HOOKS:
            return f"`{method.name}` is not a hook Lightning calls on every rank: its callers may not run on every rank"
        if self.unknown_base is not None:
            return f"{self.unknown_base}: its hooks may log too"
        if self.subclassed is not None:
            # The module that runs may be the subclass: its own logs may sync out of order with this
            # one, and it may call or replace this hook.
            return f"{self.subclassed}: its hooks may log, or call this one, in another order on some ranks"
        replaced = self.replaced(method.name)
        if replaced is not None:
            # ``build(Model)`` where ``build`` derives ``class Traced(model_class)``: a subclass no
            # name of the program shows, whose hooks may log in another order.
            return replaced
        if method.decorator_list and not all(self._grad_mode(d, method) for d in method.decorator_list):
            return f"`{method.name}` is decorated"
        if self.methods.get(method.name) is not method:
            return f"`{method.name}` is defined again"
        if method.name in self.foreign_called:
            return f"the file of a base class calls `{method.name}` itself, maybe on some ranks only"
        if method.name in self.called_names:
            problem = self._own_calls_problem(method)
            if problem is not None:
                return problem
        if LOG_METHODS & (set(self.methods) | self.unknown_methods):
            return "the class defines its own `log`"
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n, _ in outside_functions_with_places(method)):
            return f"`{method.name}` is a generator"
        return None

    def _own_calls_problem(self, method: ast.FunctionDef) -> str | None:
        """None when every call of the hook that the file's code makes is ``self.<hook>(...)`` in
        another hook of the class that Lightning calls on every rank (``return
        self.validation_step(batch, batch_idx)`` in ``test_step``), reached there on every call, with
        arguments that are that rank's own: the hook then still runs on every rank, the same way."""
        name = method.name
        for call in per_file(self.tree, "attribute_calls", lambda: [
                n for n in nodes_of(self.tree, ast.Call) if isinstance(n.func, ast.Attribute)]):
            if call.func.attr != name:
                continue
            refused = f"the code calls `{name}` itself (line {call.lineno}), maybe on some ranks only"
            caller = next((m for m in self.methods.values() if _path_to(m, call) is not None), None)
            if caller is None or not is_self(call.func.value) or caller is method:
                return refused
            problem = self._call_site_problem(caller, call, self.hook_problem)
            if problem is not None:
                return f"{refused}: {problem}"
        return None

    def _call_site_problem(self, caller: ast.FunctionDef, call: ast.Call, caller_problem) -> str | None:
        """Why the class's own call of a hook or helper in ``caller`` may not run on every rank, the
        same way, with that rank's own arguments: ``caller_problem(caller)``, a call not reached on
        every call of ``caller``, an argument not known to be this rank's own. None where none."""
        problem = caller_problem(caller)
        if problem is not None:
            return f"`{caller.name}` calls it (line {call.lineno}), and {problem}"
        problem = self.reach_problem(caller, call, as_value=True)
        if problem is not None:
            return f"`{caller.name}` calls it (line {call.lineno}), where {problem}"
        provenance = self.provenance(caller, call, arguments_of=True)
        for argument in [*call.args, *(k.value for k in call.keywords)]:
            unknown = provenance.unknown(argument.value if isinstance(argument, ast.Starred) else argument)
            if unknown is not None:
                reason = self.unknown_reason(provenance, unknown)
                detail = reason.partition(": ")[2] if reason.startswith(f"`{short(unknown)}` is not known") else reason
                return (f"`{caller.name}` passes it `{short(unknown)}` (line {call.lineno}), not known to be this "
                        "rank's own" + (f": {detail}" if detail else ""))
        return None

    def reach_problem(self, method: ast.FunctionDef, call: ast.Call, as_value: bool = False) -> str | None:
        """None when every call of ``method`` reaches ``call``: a statement of its own (or, with
        ``as_value``, the whole value of a ``return`` or of an assignment to names, unpacked or
        not), under known
        ``with`` blocks only, with no ``return``/``raise`` before it."""
        path = _path_to(method, call)
        whole = path is not None and len(path) >= 2 and (
            (isinstance(path[-2], ast.Expr) and path[-2].value is call)
            or (as_value and isinstance(path[-2], ast.Return) and path[-2].value is call)
            or (as_value and isinstance(path[-2], ast.Assign) and path[-2].value is call
                and all(_names_only(t) for t in path[-2].targets)))
        if not whole:
            return "the call is not a statement of its own"
        statements = path[1:-1]  # from the method's first block down to the ``Expr``
        block = method.body
        for depth, statement in enumerate(statements):
            indexes, first, n = _block_exits(method, block)
            if first < indexes[id(statement)]:
                # An exit under conditions every rank decides alike (the optimizer's index) skips
                # the call on every rank or on none.
                exit_at = next((s for s in block[first:indexes[id(statement)]] if not self._uniform_exits(s, method)), None)
                if exit_at is not None:
                    n = _first_exit(exit_at)
                    return f"a `{'return' if isinstance(n, ast.Return) else 'raise'}` at line {n.lineno} may skip it on some ranks"
            if statement is path[-2]:
                return None
            if isinstance(statement, ast.If) and self.rank_invariant(statement.test, method):
                inner = statements[depth + 1]
                block = statement.body if any(inner is s for s in statement.body) else statement.orelse
                continue
            if not isinstance(statement, ast.With):
                kind = type(statement).__name__.lower()
                return f"it is under a `{kind}` (line {statement.lineno}) that may not run the same way on every rank"
            for item in statement.items:
                expression = item.context_expr
                called = expression.func if isinstance(expression, ast.Call) else expression
                if self.imports.qualify(called) not in KNOWN_CONTEXTS or self.shadowed(called, method):
                    return f"it is under `with {short(expression)}`, not known to run its block on every rank"
                if isinstance(expression, ast.Call) and not all(self.known_in(a, method) for a in expression.args):
                    return f"it is under `with {short(expression)}`, not known to run its block on every rank"
            block = statement.body
        return "the call is not a statement of its own"

    def _grad_mode(self, decorator: ast.expr, method: ast.FunctionDef) -> bool:
        """``@torch.no_grad()``, ``@torch.inference_mode()``...: a grad-mode decorator, which changes
        nothing of what runs (the ``with`` blocks of ``KNOWN_CONTEXTS``)."""
        called = decorator.func if isinstance(decorator, ast.Call) else decorator
        return (self.imports.qualify(called) in KNOWN_CONTEXTS and not self.shadowed(called, method)
                and not (isinstance(decorator, ast.Call) and (decorator.args or decorator.keywords)))

    def _uniform_exits(self, statement: ast.stmt, method: ast.FunctionDef) -> bool:
        """Every ``return``/``raise`` in ``statement`` is reached on every rank or on none: the
        statement is one, or an ``if`` on a rank-invariant test whose blocks hold only such exits."""
        if _first_exit(statement) is None or isinstance(statement, (ast.Return, ast.Raise)):
            return True
        if isinstance(statement, ast.If) and self.rank_invariant(statement.test, method):
            return all(self._uniform_exits(s, method) for s in [*statement.body, *statement.orelse])
        return False

    def rank_invariant(self, test: ast.expr, method: ast.FunctionDef) -> bool:
        """``test`` has the same value on every rank at a given call: built by operators from
        constants, the loop's own indexes that Lightning passes the hook by position (the third
        argument of a step: 1.x's optimizer index, the evaluation's dataloader index; a batch-end
        hook's fourth), and ``self.current_epoch`` / ``self.global_step`` (the loops' counters,
        which every rank advances together)."""
        invariant = self._invariant_parameters(method)
        # ``self`` only as the receiver of the loops' counters: the module itself is an object of
        # each rank, and formatting or comparing it runs its code.
        counters = {id(n.value) for n in walk(test) if isinstance(n, ast.Attribute) and is_self(n.value)
                    and n.attr in ("current_epoch", "global_step")}
        for node in walk(test):
            if isinstance(node, (ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.Load,
                                 ast.cmpop, ast.boolop, ast.unaryop, ast.operator, ast.Tuple, ast.List, ast.Set,
                                 ast.JoinedStr)):
                continue
            if isinstance(node, ast.FormattedValue) and node.conversion == -1 and node.format_spec is None:
                # ``f"{stage}_loss"``: a shared value (a literal, a loop index) formatted by Python
                continue
            if isinstance(node, ast.Name) and node.id in invariant:
                continue
            if isinstance(node, ast.Name) and id(node) in counters:
                continue
            if isinstance(node, ast.Attribute) and is_self(node.value) and node.attr in ("current_epoch", "global_step") \
                    and self.own_property(node.attr):
                continue
            return False
        return True

    def _invariant_parameters(self, method: ast.FunctionDef) -> set[str]:
        """The hook's parameter that Lightning fills with a loop index every rank shares: a step's
        third (1.x's optimizer index, the evaluation's dataloader index), an evaluation
        ``on_*_batch_start``'s third and a batch-end hook's fourth (the dataloader index). Not where
        a file that may run with it names truncated back-propagation (``bptt``), whose ``hiddens``
        1.x passes there instead."""
        positional = [a.arg for a in [*method.args.posonlyargs, *method.args.args]]
        if method.name not in EVERY_RANK_HOOKS:
            return self._invariant_arguments(method)
        if method.name in self.called_names:
            return set()  # the file's own code may pass anything there (test_step -> validation_step)
        if method.name in ("training_step", "validation_step", "test_step") or method.name in (
                "on_validation_batch_start", "on_test_batch_start"):
            place = 3
        elif method.name.endswith("_batch_end"):
            place = 4
        else:
            return set()
        if len(positional) <= place or self.bptt is not None:
            return set()
        name = positional[place]
        stored = any(name in bound_names(statement) for statement in method.body)
        return set() if stored or name in names_in_nested_scopes(method) else {name}

    def _invariant_arguments(self, helper: ast.FunctionDef) -> set[str]:
        """The helper's parameters every call of it fills alike on every rank: with a constant or
        a rank-invariant expression of the caller (``self._step(batch, log=True)``,
        ``self._step(batch, optimizer_idx)``), or not at all (a constant default). Only for a
        helper whose callers are proven (``helper_callers_problem``)."""
        key = ("invariant", id(helper))
        if key not in self._callers:
            self._callers[key] = set()  # while asked: a cycle through rank_invariant proves nothing
            self._callers[key] = self._compute_invariant_arguments(helper)
        return self._callers[key]

    def _compute_invariant_arguments(self, helper: ast.FunctionDef) -> set[str]:
        if self.helper_callers_problem(helper) is not None:
            return set()
        arguments = helper.args
        invariant = {a.arg for a in [*arguments.posonlyargs, *arguments.args][1:]} | {a.arg for a in arguments.kwonlyargs}
        for caller, call in self.calls_of(helper.name):
            given = call_paths.parameters_bound(helper, call)
            if given is None:
                return set()
            for name in list(invariant):
                value = given.get(name)
                if value is None or not self.rank_invariant(value, caller):
                    invariant.discard(name)
        changed = set().union(*(bound_names(statement) for statement in helper.body))  # any form: a match capture too
        return invariant - changed - set(names_in_nested_scopes(helper))

    def shadowed(self, node: ast.expr, method: ast.FunctionDef) -> bool:
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and root.id in bound_names(method)

    def known_in(self, node: ast.expr, method: ast.FunctionDef) -> bool:
        return self.provenance(method, node).unknown(node) is None

    # --- what the call logs -------------------------------------------------------------------

    def key_problem(self, call: ast.Call, method: ast.FunctionDef | None = None) -> str | None:
        """None when the call's keys are string literals, or (with ``method``, the one making the
        call) built from literals and values every rank shares at that call (``f"{stage}_loss"``
        where every caller passes ``stage`` a literal: ``rank_invariant``)."""
        def same_on_every_rank(key: ast.expr | None) -> bool:
            return key is not None and (tree_lightning.string_value(key) is not None or (
                method is not None and isinstance(key, (ast.JoinedStr, ast.BinOp)) and self.rank_invariant(key, method)))

        if call.func.attr == "log":
            named = tree_lightning.keyword(call, "name")
            key = named.value if named is not None else (call.args[0] if call.args else None)
            if not same_on_every_rank(key):
                return "its key is built at run time: ranks may log different keys"
            return None
        dictionary = self._dictionary(call)
        if not isinstance(dictionary, ast.Dict):
            what = f"`{short(dictionary)}`" if dictionary is not None else "nothing it names"
            return f"it logs {what}, a dictionary built at run time (its keys, or a MetricCollection)"
        if not all(same_on_every_rank(k) for k in dictionary.keys):
            return "a key of its dictionary is built at run time: ranks may log different keys"
        return None

    @staticmethod
    def _dictionary(call: ast.Call) -> ast.expr | None:
        named = tree_lightning.keyword(call, "dictionary")
        return named.value if named is not None else (call.args[0] if call.args else None)

    @staticmethod
    def values(call: ast.Call) -> list[ast.expr] | None:
        """The values the call logs (None: not known, e.g. a dictionary built at run time)."""
        if call.func.attr == "log":
            named = tree_lightning.keyword(call, "value")
            value = named.value if named is not None else (call.args[1] if len(call.args) > 1 else None)
            return None if value is None else [value]
        dictionary = ClassFacts._dictionary(call)
        if not isinstance(dictionary, ast.Dict) or any(k is None for k in dictionary.keys):
            return None
        return list(dictionary.values)

    def value_problem(self, method: ast.FunctionDef, call: ast.Call) -> str | None:
        values = self.values(call)
        if values is None:
            return "what it logs is not known"
        provenance = self.provenance(method, call)
        assigned = bindings(method, (call.lineno, call.col_offset))
        once_per_epoch = self.roots(method) <= EPOCH_LEVEL_HOOKS
        for value in values:
            if once_per_epoch and self.number_valued(value, method, assigned):
                # A Python or NumPy number, logged once per epoch on every rank (each rank's summed
                # batch size is 1, so Lightning's weighted mean is a plain one): Lightning makes it a
                # tensor on the module's device, and the reductions ``flag_problem`` lets through (a
                # mean, max or min) of a number every rank already shares is that number, whether it
                # is this rank's own or not. Per batch, ranks' summed sizes may differ (a dataset
                # sharded by the program, drawn at random), and Lightning syncs them as integers: a
                # shared number would come out scaled.
                continue
            unknown = provenance.unknown(value)
            if unknown is not None:
                return self.unknown_reason(provenance, unknown)
        return None

    def number_valued(self, node: ast.expr, method, assigned: dict[str, list[ast.expr]], depth: int = 0) -> bool:
        """``node`` is a Python or NumPy number whenever the program gets past it: a numeric
        literal; ``x.item()`` (where no class of the program defines ``item``); ``float``, ``int``,
        ``len`` of anything (builtins the file does not bind); a ``math`` function that converts
        its argument to a float; arithmetic of numbers; ``sum`` of a list of
        numbers; NumPy's reductions (``np.mean``) of a list, which NumPy turns into an array first
        (a scalar comes out, or it fails); a local name every binding of which before the log is one
        of these, or a list of numbers (its displays' items, and what ``append`` adds to it)."""
        if depth > 8:
            return False
        again = lambda n: self.number_valued(n, method, assigned, depth + 1)  # noqa: E731
        if isinstance(node, ast.Constant):
            return type(node.value) in (int, float)
        if isinstance(node, ast.BinOp):
            return again(node.left) and again(node.right)
        if isinstance(node, ast.UnaryOp):
            return again(node.operand)
        if isinstance(node, ast.Name):
            values = assigned.get(node.id)
            return bool(values) and node.id not in names_in_nested_scopes(method) and all(again(v) for v in values)
        if not isinstance(node, ast.Call) or node.keywords:
            return False
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "item" and not node.args:
            return self._item_is_libraries()
        if isinstance(func, ast.Name) and func.id in _NUMBER_BUILTINS and func.id not in self.file_names \
                and self.imports.qualify(func) is None:
            if func.id == "sum":
                return len(node.args) == 1 and self._number_list(node.args[0], method, assigned, depth + 1)
            return len(node.args) >= 1
        qualified = self.imports.qualify(func) or ""
        if qualified in _FLOAT_MATH and not self.shadowed(func, method):
            return True
        if qualified in _NUMPY_REDUCTIONS and len(node.args) == 1 and not self.shadowed(func, method):
            return self._list_value(node.args[0], method, assigned)
        return False

    def _item_is_libraries(self) -> bool:
        """No class of the program defines an ``item`` method: ``x.item()`` is a tensor's, an
        array's or a NumPy scalar's, a Python number."""
        if "_item_defined" not in self.__dict__:
            lines = (self.cls.lineno, self.cls.end_lineno or self.cls.lineno)
            # (``def item`` or ``item = compute`` in a class's body, here or in another file)
            self._item_defined = (self.project is None or self.path is None
                                  or self.project.defines_elsewhere("item", self.path, lines, assigned=True) is not None
                                  or any("item" in tree_lightning.names_bound_by(s) for c in self.lineage for s in c.body))
        return not self._item_defined

    def _list_value(self, node: ast.expr, method, assigned: dict[str, list[ast.expr]]) -> bool:
        """``node`` is a list: a display, or a local name every binding of which before the log is
        one (whatever code it is handed, a list stays a list): never an object of the program's own
        with a ``mean``."""
        if isinstance(node, (ast.List, ast.ListComp)):
            return True
        if not isinstance(node, ast.Name) or node.id in names_in_nested_scopes(method):
            return False
        values = assigned.get(node.id)
        return bool(values) and all(isinstance(v, (ast.List, ast.ListComp)) for v in values)

    def _changed_by_appends_only(self, name: str, method) -> list[ast.expr] | None:
        """What ``<name>.append(x)``/``extend`` add to the local list ``name``, where nothing else
        in the method hands it to code or stores through it; None otherwise."""
        added: list[ast.expr] = []
        parents = parent_map(self.tree)  # the one node -> parent map of the file
        for n in walk(method):
            if not (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
                continue
            parent = parents.get(id(n))
            above = parents.get(id(parent)) if parent is not None else None
            if isinstance(parent, ast.Attribute) and parent.attr in ("append", "extend") and isinstance(above, ast.Call) \
                    and above.func is parent and len(above.args) == 1 and not above.keywords:
                added.append(above.args[0] if parent.attr == "append" else None)
                continue
            if isinstance(parent, ast.Call) and n in parent.args and (
                    (isinstance(parent.func, ast.Name) and parent.func.id in ("len", "sum") and parent.func.id not in self.file_names)
                    or (self.imports.qualify(parent.func) or "") in _NUMPY_REDUCTIONS):
                continue  # read: its length, its sum, a NumPy reduction of it
            return None
        return added

    def _number_list(self, node: ast.expr, method, assigned: dict[str, list[ast.expr]], depth: int) -> bool:
        """``node`` is a list of numbers: a display of numbers, or a local list (``_list_value``)
        whose displays hold numbers and to which only numbers are appended."""
        if isinstance(node, ast.List):
            return all(self.number_valued(e, method, assigned, depth) for e in node.elts)
        if not self._list_value(node, method, assigned) or not isinstance(node, ast.Name):
            return False
        added = self._changed_by_appends_only(node.id, method)
        return added is not None and all(a is not None and self.number_valued(a, method, assigned, depth) for a in added) \
            and all(isinstance(v, ast.List) and all(self.number_valued(e, method, assigned, depth) for e in v.elts)
                    for v in assigned[node.id])

    def unknown_reason(self, provenance: Provenance, unknown: ast.expr, depth: int = 0) -> str:
        """Why ``unknown`` (``provenance.unknown``'s answer) is not known to be this rank's own,
        naming the fact it lacks and where it comes from."""
        prefix = f"`{short(unknown)}` is not known to be this rank's own value (it may be global already)"
        if isinstance(unknown, ast.Name) and unknown.id in provenance.untrusted:
            return f"{prefix}: {self._handed_reason(provenance.method.name)}"
        if isinstance(unknown, ast.Name) and unknown.id in provenance.changed_by:
            changer = provenance.changed_by[unknown.id]
            text = f"`{short(changer)}` (line {changer.lineno}) may change `{unknown.id}` in place (it may be global then)"
            root = provenance.first_unknown_source()
            if depth < 1 and (root is None or root is unknown):
                text += self.change_reason(changer, provenance, frozenset({provenance.method.name}))
            if root is not None and root is not unknown and depth < 1:
                # The change is a consequence: the first value the method cannot read says why.
                text += f"; first, at line {root.lineno}: {self.unknown_reason(provenance, root, depth + 1)}"
            elif root is None and provenance.untrusted and depth < 1 and not text.endswith(")"):
                handed = sorted(provenance.untrusted)[0]
                text += (f"; first: `{handed}` is not known to be this rank's own value: "
                         f"{self._handed_reason(provenance.method.name)}")
            return text
        if isinstance(unknown, ast.Call) and (is_self(unknown.func) or self_attr(unknown.func) == "forward") \
                and self.forward_problem() is not None:
            return f"{prefix}: {self.forward_problem()}"
        called = self_attr(unknown.func) if isinstance(unknown, ast.Call) else None
        if called is not None and called in self.unknown_methods:
            return (f"{prefix}: {self.unknown_where.get(called, 'a class of another file')} defines `{called}`, "
                    "which is not followed")
        if called is not None and called in self.methods and self.helper_problem(called) is not None:
            return f"{prefix}: {self.helper_problem(called)}"
        held = self.held_by(called) if called is not None else None
        if called is not None and called in self.module_problems:
            return f"{prefix}: {self.module_problems[called]}"
        if held is not None:
            return f"{prefix}: `self.{called}` holds `{held[0]}` (line {held[1]}), an object whose class is not read"
        function = unknown.func if isinstance(unknown, ast.Call) else None
        word = function.attr if isinstance(function, ast.Attribute) else function.id if isinstance(function, ast.Name) else None
        if word is not None and self.rebound(word) is not None:
            return f"{prefix}: {self.rebound(word)} may bind `{word}` to other code"
        origin = self._origin(provenance, unknown)
        if origin is None:
            # A local computed from other values (``elbo = elbo / n``): the first value the method
            # cannot read says why.
            root = provenance.first_unknown_source()
            if root is not None and root is not unknown and depth < 1:
                return f"{prefix}; first, at line {root.lineno}: {self.unknown_reason(provenance, root, depth + 1)}"
            origin = f"what it computes (line {unknown.lineno}) is not read"
        return f"{prefix}: {origin}"

    def _origin(self, provenance: Provenance, unknown: ast.expr) -> str | None:
        """Where a value not known to be this rank's own comes from, where no rule above says why:
        a binding whose value is not read, a parameter, the module's state, a function of the file;
        None where none of these says why."""
        if isinstance(unknown, ast.Name):
            binding = provenance.unknown_binding(unknown.id)
            if binding is not None:
                return f"`{unknown.id}` is bound at line {binding[0]} by {binding[1]}"
            if unknown.id in provenance.parameters:
                return f"`{unknown.id}` is a parameter of `{provenance.method.name}`, handed in by code not proven"
        attribute = self_attr(unknown)
        if attribute is not None:
            return (f"`self.{attribute}` is the module's state ({self._stored_where(attribute)}), which may hold "
                    "any rank's or every rank's value")
        if isinstance(unknown, ast.Call) and isinstance(unknown.func, ast.Name):
            defined = next((s for s in self.tree.body if isinstance(s, FUNCTIONS) and s.name == unknown.func.id), None)
            if defined is not None:
                return f"`{unknown.func.id}` (line {defined.lineno}) is a function of the file that the proof does not follow"
        return None

    def _stored_where(self, name: str, file: str | None = None) -> str:
        """Where the class stores ``self.<name>`` (for a reason): its first store, or the
        ``setattr`` that may; ``file``: the file's name, for a class of another file."""
        at = f"{file}:" if file else "line "
        for owner in self.lineage:
            for n in nodes_below(owner):
                if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and n.attr == name and is_self(n.value):
                    return f"stored at {at}{n.lineno}"
        for owner in self.lineage:
            for n in nodes_below(owner):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr":
                    return f"`setattr` at {at}{n.lineno} may store it"
        for base in self.opaque:
            if name in base.assigned or base.calls_setattr:
                return base._stored_where(name, os.path.basename(base.path or ""))
        if name in LIGHTNING_MODULE_ATTRIBUTES:
            return "set by Lightning"
        if self.calls_setattr:
            return "`setattr` in a class of another file may store it"
        return "stored by a class of another file, or never"

    def flag_problem(self, method: ast.FunctionDef, call: ast.Call) -> str | None:
        positional = 2 if call.func.attr == "log" else 1
        if len(call.args) > positional:
            return "it passes flags by position"
        for keyword in call.keywords:
            if keyword.arg not in KNOWN_FLAGS:
                return f"`{keyword.arg}=` is passed"
        batch_size = tree_lightning.keyword(call, "batch_size")
        if batch_size is not None and not (isinstance(batch_size.value, ast.Constant)
                                           and type(batch_size.value.value) is int) \
                and not self.batch_length(batch_size.value, method, call):
            return ("`batch_size=` is neither a literal int nor the step's batch length: Lightning syncs each rank's "
                    "summed batch sizes as integers "
                    "(a sum, then a floor division by the world size), which changes a weighted mean")
        reduce_fx = tree_lightning.keyword(call, "reduce_fx")
        if reduce_fx is not None:
            text = tree_lightning.string_value(reduce_fx.value)
            if not ((text is not None and text.lower() in REDUCTIONS)
                    or (self.imports.qualify(reduce_fx.value) in TORCH_REDUCTIONS and not self.shadowed(reduce_fx.value, method))):
                return f"`reduce_fx={short(reduce_fx.value)}` is not one of Lightning's reductions"
            if (text or "").lower() == "sum" or self.imports.qualify(reduce_fx.value) == "torch.sum":
                # A mean, max or min of a value every rank already shares is that value; a sum
                # counts it once per rank. So is a sample every rank reads (a loader Lightning
                # does not shard: not a DataLoader, an iterable dataset, sampling turned off).
                return ("`reduce_fx=\"sum\"` adds every rank's value: right only if each rank's value counts its own "
                        "samples only, and that the value is not global already and the data sharded is not proven")
        on_step = tree_lightning.keyword(call, "on_step")
        if on_step is not None:
            if not isinstance(on_step.value, ast.Constant):
                return "`on_step=` is not a literal"
            if on_step.value.value and not self.roots(method) <= TRAINING_HOOKS:
                return (f"`on_step=True` (line {on_step.value.lineno}) syncs at every batch, and evaluation ranks may run "
                        "different numbers of batches")
        return None

    def batch_length(self, node: ast.expr, method: ast.FunctionDef, at: ast.expr) -> bool:
        """``node`` is the number of samples in the step's batch, as the batch came: ``len(x)``,
        ``x.shape[0]`` or ``x.size(0)`` of the batch itself or of a field of it taken by string keys
        (``batch["image"]``), through names bound once by a plain assignment. Not a part taken by
        position or unpacking: on a tensor batch that is a sample, whose length is its own. Where the
        program makes no batches of its own (``_inferred_batch_size``), every rank's batch of a step
        holds as many samples (the DistributedSampler pads the shards to one length), so each rank's
        summed sizes are equal, as with a literal."""
        if method.name not in ("training_step", "validation_step", "test_step"):
            return False
        positional = [a.arg for a in [*method.args.posonlyargs, *method.args.args]]
        if len(positional) < 2:
            return False
        batch = positional[1]
        before = (at.lineno, at.col_offset)
        plain: dict[str, list[ast.expr]] = {}
        # Every binding of a name counts (None: not a plain one), each plain ``name = value``
        # before the log filled in.
        for n, _place in outside_functions_with_places(method):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                plain.setdefault(n.id, []).append(None)
        for n, place in outside_functions_with_places(method):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                    and place is not None and place < before:
                values = plain[n.targets[0].id]
                values[values.index(None)] = n.value
        if batch in plain or batch in names_in_nested_scopes(method):
            return False  # the batch is rebound

        def resolve(n: ast.expr) -> ast.expr | None:
            for _ in range(20):
                if not (isinstance(n, ast.Name) and n.id != batch):
                    return n
                values = plain.get(n.id, [])
                if len(values) != 1 or values[0] is None or n.id in names_in_nested_scopes(method):
                    return None
                n = values[0]
            return None

        n = resolve(node)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" and len(n.args) == 1 \
                and not n.keywords and "len" not in self.file_names:
            part = n.args[0]
        elif isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "shape" \
                and isinstance(n.slice, ast.Constant) and n.slice.value == 0:
            part = n.value.value
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "size" and not n.keywords \
                and len(n.args) == 1 and isinstance(n.args[0], ast.Constant) and n.args[0].value == 0:
            part = n.func.value
        else:
            return False
        part = resolve(part)
        while isinstance(part, ast.Subscript) and isinstance(part.slice, ast.Constant) and type(part.slice.value) is str:
            part = resolve(part.value)
        return isinstance(part, ast.Name) and part.id == batch

    # --- the other logs of the class ----------------------------------------------------------

    def may_sync(self, method: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call) -> bool:
        """The call may run a collective as it stands: ``sync_dist`` not literally False (or
        ``**kwargs``), or a value that may be a torchmetrics Metric (which syncs itself)."""
        if tree_lightning.has_star(call):
            return True
        sync = tree_lightning.keyword(call, "sync_dist")
        zero_only = tree_lightning.is_true(tree_lightning.keyword(call, "rank_zero_only"))
        syncs = sync is not None and not (isinstance(sync.value, ast.Constant) and sync.value.value is False)
        if syncs and not zero_only:
            return True
        values = self.values(call)
        if values is None:
            dictionary = self._dictionary(call) if call.func.attr == "log_dict" else None
            if dictionary is None:
                return True
            values = [dictionary]  # a dictionary built from known values holds no Metric
        if isinstance(method, ast.FunctionDef):
            if all(isinstance(v, ast.Constant) for v in values):
                return False  # a literal is this rank's own whatever the hook does: no need to read it
            provenance = self.provenance(method, call)
            return any(provenance.unknown(v) is not None for v in values)
        return True

    def ordered(self, method, call: ast.Call) -> bool:
        """Every rank makes the call, in the same place: the first three questions answered."""
        return (self.caller_problem(method) is None and self.reach_problem(method, call) is None
                and self.key_problem(call, method) is None)

    def unordered_sync(self) -> ast.Call | None:
        """A log that may sync where ranks may
        reach it in another order: a new sync could pair with it. Looked for in the class and its
        bases (nested functions and methods overridden since included), and in the rest of the file
        for logs through another object (``pl_module.log(..., sync_dist=True)`` in a callback)."""
        seen: set[int] = set()
        for owner in self.lineage:
            for method in owner.body:
                if not isinstance(method, FUNCTIONS):
                    continue
                direct = {id(c) for c in tree_lightning.self_method_calls(method, LOG_METHODS)}
                for call in every_node(method):
                    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                            and call.func.attr in LOG_METHODS and is_self(call.func.value)):
                        continue
                    if id(call) in seen:
                        continue
                    seen.add(id(call))
                    if not self.may_sync(method, call):
                        continue
                    if id(call) not in direct or self.methods.get(method.name) is not method or not self.ordered(method, call):
                        return call
        # A base of another file: its own order proven there, and none of its syncing methods run
        # again through ``super()`` from here (maybe conditionally).
        for base in self.opaque:
            found = base.unordered_sync()
            for name, method in base.methods.items():
                if found is None and name in per_file(self.tree, "read_otherwise", lambda: _read_otherwise(self.tree)):
                    found = next((c for c in tree_lightning.self_method_calls(method, LOG_METHODS)
                                  if base.may_sync(method, c)), None)
            if found is not None:
                self.foreign_places[id(found)] = base.foreign_places.get(
                    id(found), f"{os.path.basename(base.path)}:{found.lineno}")
                return found
        # ``seen`` holds ``self.log`` calls only: the file's other syncing logs are the same for
        # every class, found once.
        return per_file(self.tree, "other_syncing_log", lambda: _other_syncing_log(self.tree))


def _other_syncing_log(tree: ast.Module) -> ast.Call | None:
    """The first log of the file through another object than ``self`` that may sync."""
    for n in every_node(tree):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in LOG_METHODS
                and not is_self(n.func.value)):
            sync = tree_lightning.keyword(n, "sync_dist")
            if tree_lightning.has_star(n) or (sync is not None and not (isinstance(sync.value, ast.Constant) and sync.value.value is False)):
                return n
    return None


def _always_exits(block: list[ast.stmt]) -> bool:
    """The block never runs past its end: it ends in a ``return``/``raise`` (or ``assert False``),
    or in an ``if``/``else`` each branch of which does."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.Assert) and isinstance(last.test, ast.Constant) and not last.test.value:
        return True
    return isinstance(last, ast.If) and _always_exits(last.body) and _always_exits(last.orelse)


def _first_parameter(method: ast.AST) -> str | None:
    positional = [*method.args.posonlyargs, *method.args.args]
    return positional[0].arg if positional else None


def _read_otherwise(tree: ast.Module) -> frozenset[str]:
    """Attribute names the file reads on anything but ``self`` (``super().m``, ``Base.m``, ``x.m``):
    a method defined again lower in the order may still run through one of them."""
    return frozenset(n.attr for n in every_node(tree)
                     if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and not is_self(n.value))


def _attribute_reads(tree: ast.Module) -> list[tuple[tuple[ast.ClassDef, ast.FunctionDef] | None, ast.AST]]:
    """Every attribute read of the file (``x.name``), every name read (``alias = _helper``) and every
    identifier-like string, each with the class and method it stands in (None outside a class's
    methods). Kept on the tree."""
    def compute():
        found = []
        def visit(node: ast.AST, owner) -> None:
            for child in child_nodes(node):
                inner = owner
                if isinstance(node, ast.ClassDef) and isinstance(child, FUNCTIONS):
                    inner = (node, child)
                elif isinstance(child, ast.ClassDef):
                    inner = None
                if isinstance(child, (ast.Attribute, ast.Name)) and isinstance(child.ctx, ast.Load):
                    found.append((inner, child))
                elif isinstance(child, ast.Constant) and isinstance(child.value, str) and child.value.isidentifier():
                    found.append((inner, child))
                visit(child, inner)
        visit(tree, None)
        return found
    return per_file(tree, "attribute_reads", compute)


def _call_of(node: ast.Attribute, method: ast.AST) -> ast.Call | None:
    """The call whose function ``node`` is, in ``method``'s own code (not a nested function's)."""
    path = _path_to(method, node)
    if path is None or len(path) < 2 or not isinstance(path[-2], ast.Call) or path[-2].func is not node:
        return None
    return path[-2]


def _path_to(root: ast.AST, target: ast.AST) -> list[ast.AST] | None:
    """Nodes from ``root`` down to ``target``, without entering nested functions (``target`` itself
    may be one). Climbs ``_parents``, kept on ``root``: a hook's every log asks its path."""
    parents = getattr(root, "_ddpfix_parents", None)
    if parents is None:
        parents = root._ddpfix_parents = {}
        stack = [root]
        while stack:
            node = stack.pop()
            for child in child_nodes(node):
                parents[id(child)] = node
                if not isinstance(child, SCOPES):
                    stack.append(child)
    path = [target]
    while path[-1] is not root:
        parent = parents.get(id(path[-1]))
        if parent is None:
            return None
        path.append(parent)
    return path[::-1]


def _block_exits(method: ast.AST, block: list[ast.stmt]) -> tuple[dict[int, int], int, ast.Return | ast.Raise | None]:
    """Where each statement of one of the method's blocks stands in it (by id), and the first
    statement of the block holding a ``return`` or ``raise`` (its index, ``len(block)`` if none, and
    that exit). Kept on the method: each log of a hook of many asked it of the statements above."""
    blocks = method.__dict__.get("_ddpfix_block_exits")
    if blocks is None:
        blocks = method._ddpfix_block_exits = {}
    known = blocks.get(id(block))
    if known is None:
        first, exit_node = len(block), None
        for index, statement in enumerate(block):
            exit_node = _first_exit(statement)
            if exit_node is not None:
                first = index
                break
        known = blocks[id(block)] = ({id(statement): index for index, statement in enumerate(block)}, first, exit_node)
    return known


def _first_exit(statement: ast.AST) -> ast.Return | ast.Raise | None:
    """A ``return`` or ``raise`` in ``statement`` outside nested functions (the first the walk
    meets), or None. Kept on the statement: every log below it asks."""
    found = getattr(statement, "_ddpfix_exit", False)
    if found is False:
        found = statement._ddpfix_exit = next(
            (n for n in walk_outside_functions([statement]) if isinstance(n, (ast.Return, ast.Raise))), None)
    return found


#: Class decorators that return the class with its methods as written: PEP 702's ``deprecated``
#: wraps ``__new__`` and ``__init_subclass__`` to warn and sets ``__deprecated__``, nothing else.
INERT_CLASS_DECORATORS = frozenset({"typing_extensions.deprecated", "warnings.deprecated"})
#: ``math`` functions that return a float whatever they are given (they convert it first);
#: not ``prod``, ``floor``, ``ceil``, ``trunc``, which call the object's own operators.
_FLOAT_MATH = frozenset(f"math.{name}" for name in (
    "sqrt", "exp", "expm1", "log", "log2", "log10", "log1p", "fabs", "fsum", "pow", "sin", "cos", "tan", "tanh",
    "atan", "atan2", "hypot", "erf", "erfc", "lgamma", "gamma"))
#: Builtins that return a number whatever they are given (or fail); ``sum`` of numbers.
_NUMBER_BUILTINS = frozenset({"float", "int", "len", "sum"})
#: NumPy's reductions: of a list, a NumPy scalar (the list is made an array first).
_NUMPY_REDUCTIONS = frozenset(f"numpy.{name}" for name in (
    "mean", "sum", "median", "std", "var", "max", "min", "average", "nanmean", "nansum", "nanmedian", "nanmax", "nanmin"))


def _names_only(target: ast.expr) -> bool:
    """An assignment target that binds names only (``loss``, ``loss, _``, ``first, *rest``): it
    runs no code of the program once the value is made (Python unpacks after the call)."""
    if isinstance(target, ast.Name):
        return True
    if isinstance(target, ast.Starred):
        return isinstance(target.value, ast.Name)
    return isinstance(target, (ast.Tuple, ast.List)) and all(_names_only(e) for e in target.elts)


def subclassed_beyond_thin(project, name: str, path: str, tree: ast.Module, place: str | None,
                           depth: int = 0) -> str | None:
    """``place`` (where a class of the program may derive from the class ``name`` of ``path``:
    ``ProjectFacts.subclass_place``), unless every such class is read and thin (``_thin_subclass``:
    it only hands its constructor's arguments on, changed, to ``super().__init__``) and none of them
    is derived from in turn, where None: an instance of such a subclass runs this class's hooks, with
    this class's state."""
    if place is None or project is None or depth > 3:
        return place
    sources = project.subclass_sources(name, path, tree)
    if isinstance(sources, str) or not sources:
        return place
    for real, other_tree, imports, node in sources:
        if not _thin_subclass(node, name, imports):
            return place
        deeper = project.subclass_place(node.name, real)
        if subclassed_beyond_thin(project, node.name, real, other_tree, deeper, depth + 1) is not None:
            return place
    return None


def _thin_subclass(node: ast.ClassDef, base: str, imports: ImportTable) -> bool:
    """``class Multi(Task)`` whose body is a docstring and at most an undecorated ``__init__`` that
    binds local names and items of them (``kwargs["task"] = "multilabel"``) from names, constants
    and items, may test them, and calls ``super().__init__(...)``: no other call, no ``self``, no
    other base, metaclass or decorator (but ``@deprecated("...")``)."""
    if len(node.bases) != 1 or not isinstance(node.bases[0], ast.Name) or node.bases[0].id != base or node.keywords:
        return False
    if not all(_inert_class_decorator(d, imports) for d in node.decorator_list):
        return False
    for statement in node.body:
        if isinstance(statement, ast.Pass) or (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)):
            continue
        if not (isinstance(statement, ast.FunctionDef) and statement.name == "__init__" and not statement.decorator_list):
            return False
        if not all(_thin_statement(s) for s in statement.body):
            return False
    return True


def _thin_statement(statement: ast.stmt) -> bool:
    def plain(expression: ast.AST) -> bool:  # names, constants, items and operators: no call, no ``self``
        return all(not isinstance(n, (ast.Call, ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom,
                                      ast.Attribute))
                   and not (isinstance(n, ast.Name) and n.id in ("self", "super"))
                   for n in walk(expression))

    if isinstance(statement, (ast.Pass, ast.Expr)) and (isinstance(statement, ast.Pass) or isinstance(statement.value, ast.Constant)):
        return True
    if isinstance(statement, (ast.Assign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return all(isinstance(t, ast.Name) or (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)) for t in targets) \
            and all(plain(t) for t in targets) and plain(statement.value)
    if isinstance(statement, ast.If):
        return plain(statement.test) and all(_thin_statement(s) for s in [*statement.body, *statement.orelse])
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        call = statement.value
        func = call.func
        return (isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name) and func.value.func.id == "super" and not func.value.args
                and all(plain(a) for a in [*call.args, *(k.value for k in call.keywords)]))
    return False


def _inert_class_decorator(decorator: ast.expr, imports: ImportTable) -> bool:
    """``@deprecated("Use X instead")``: a decorator of ``INERT_CLASS_DECORATORS`` called with
    constants alone."""
    return (isinstance(decorator, ast.Call) and imports.qualify(decorator.func) in INERT_CLASS_DECORATORS
            and all(isinstance(a, ast.Constant) for a in [*decorator.args, *(k.value for k in decorator.keywords)]))


#: Bases that add no method that runs (``class Task(LightningModule, ABC)``), and metaclasses that
#: change nothing a proof reads.
INERT_BASES = frozenset({"abc.ABC", "object", "builtins.object"})
INERT_METACLASSES = frozenset({"abc.ABCMeta"})
#: How many bases of other files, one above the other, are read.
MAX_BASE_FILES = 4


#: The module's methods Lightning runs before its strategy moves the module to the rank's device
#: (``Trainer._run``: ``setup`` and ``configure_model``, then ``strategy.setup``); 1.x's
#: ``configure_sharded_model`` too.
BUILT_BEFORE_THE_MOVE = frozenset({"__init__", "setup", "configure_model", "configure_sharded_model"})


#: Lightning's methods a class may call on itself that are never a helper of its own.
LOGGING_NAMES = frozenset({"log", "log_dict", "all_gather", "forward", "__call__"})


def _patches(tree: ast.Module) -> tuple[dict[str, int], tuple[str, int] | None, dict[str, int]]:
    """What the file's code does that may replace a method at run time: the attribute names it stores
    on objects other than ``self`` (with a line), a ``setattr`` on another object or a three-argument
    ``type(...)`` (the call and its line), and the names it uses as values other than by calling
    them, reading an attribute of them, deriving from them or testing an instance against them."""
    stores: dict[str, int] = {}
    dynamic: tuple[str, int] | None = None
    escapes: dict[str, int] = {}
    safe_names: set[int] = set()
    functions = _file_functions(tree)
    # Lightning's own ``load_from_checkpoint`` builds the class it is called on and replaces none of
    # its methods, where no class of the file defines its own.
    lightning_builds = not any(isinstance(n, FUNCTIONS) and n.name == "load_from_checkpoint" for n in every_node(tree))
    for n in every_node(tree):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)) and not is_self(n.value):
            stores.setdefault(n.attr, n.lineno)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            if n.func.id == "setattr" and n.args and not is_self(n.args[0]) and dynamic is None:
                dynamic = ("setattr(...)", n.lineno)
            elif n.func.id == "type" and len(n.args) == 3 and dynamic is None:
                dynamic = ("type(name, bases, namespace)", n.lineno)
            elif n.func.id in ("isinstance", "issubclass"):
                safe_names.update(id(x) for x in n.args[1:] for x in walk(x))
            elif n.func.id == "super":
                safe_names.update(id(x) for x in n.args)
            elif n.func.id in functions:
                # ``train_model(ProtoNet, ...)``: a function of the file that only builds what it
                # is handed (``model_class(**kwargs)``, ``model_class.load_from_checkpoint(p)``).
                safe_names.update(id(a) for a in _instantiated_arguments(functions[n.func.id], n, lightning_builds))
            safe_names.add(id(n.func))
        elif isinstance(n, ast.Call):
            safe_names.add(id(n.func))
        elif isinstance(n, ast.Attribute):
            safe_names.add(id(n.value))
        elif isinstance(n, ast.ClassDef):
            safe_names.update(id(b) for b in n.bases)
        elif isinstance(n, ast.arg) and n.annotation is not None:
            safe_names.update(id(x) for x in walk(n.annotation))
        elif isinstance(n, (ast.AnnAssign,)) and n.annotation is not None:
            safe_names.update(id(x) for x in walk(n.annotation))
        elif isinstance(n, FUNCTIONS) and n.returns is not None:
            safe_names.update(id(x) for x in walk(n.returns))
    for n in every_node(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in safe_names:
            escapes.setdefault(n.id, n.lineno)
    return stores, dynamic, escapes


def _file_functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    """The file's top-level functions whose name it binds nowhere else."""
    defined = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    bound = [n.id for n in every_node(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)]
    names = [d.name for d in defined]
    return {d.name: d for d in defined if names.count(d.name) == 1 and d.name not in bound}


def _instantiated_arguments(function: ast.FunctionDef, call: ast.Call, lightning_builds: bool = False) -> list[ast.expr]:
    """The names ``call`` hands ``function`` that it only builds (``_only_built``), each bound to a
    parameter of its own (not ``*args``/``**kwargs``)."""
    handed = call_paths.parameters_bound(function, call, instance=False) or {}
    return [value for name, value in handed.items()
            if isinstance(value, ast.Name) and _only_built(function, name, lightning_builds)]


#: What reading a class's own name or docs runs: nothing of the class.
CLASS_METADATA = frozenset({"__name__", "__qualname__", "__module__", "__doc__"})


def _only_built(function: ast.FunctionDef, name: str, lightning_builds: bool = False) -> bool:
    """The parameter ``name`` is never bound again, and every use of it calls it
    (``model_class(**kwargs)``: the class's own construction, which every file's stores on it and
    ``setattr``s are read for anyway) or reads its name (``__name__``): no subclass, no method of it
    called (a classmethod is code the proof does not read), not handed on. ``lightning_builds``:
    Lightning's ``model_class.load_from_checkpoint(path)`` counts as building it (no class of the
    file defines its own)."""
    if any(name in bound_names(statement) for statement in function.body):
        return False
    called = {id(n.func) for n in walk(function) if isinstance(n, ast.Call)}
    for n in walk(function):
        if isinstance(n, ast.arg) and n.arg == name and n not in (*function.args.posonlyargs, *function.args.args,
                                                                  *function.args.kwonlyargs):
            return False  # a nested function's own parameter of that name
    parents = {id(child): n for n in walk(function) for child in ast.iter_child_nodes(n)}
    for n in walk(function):
        if isinstance(n, ast.Name) and n.id == name:
            parent = parents.get(id(n))
            read_name = isinstance(parent, ast.Attribute) and parent.attr in CLASS_METADATA \
                and isinstance(parent.ctx, ast.Load) and id(parent) not in called
            restored = lightning_builds and isinstance(parent, ast.Attribute) and parent.attr == "load_from_checkpoint" \
                and id(parent) in called
            if id(n) not in called and not read_name and not restored:
                return False
    return True


def _c3(cls: ast.ClassDef, by_name: dict[str, ast.ClassDef], imports: ImportTable) -> list[ast.ClassDef] | None:
    """The class and its bases of the file in Python's method resolution order (C3), Lightning's
    LightningModule left out (it comes after them all); None where C3 has no order."""
    memo: dict[str, list[ast.ClassDef] | None] = {}

    def linear(node: ast.ClassDef, path: frozenset[str]) -> list[ast.ClassDef] | None:
        if node.name in memo:
            return memo[node.name]
        if node.name in path:
            return None
        bases = [by_name[b.id] for b in node.bases
                 if isinstance(b, ast.Name) and b.id in by_name and lightning_name(imports, b) != "LightningModule"]
        sequences = [linear(b, path | {node.name}) for b in bases]
        if any(seq is None for seq in sequences):
            memo[node.name] = None
            return None
        pending = [list(seq) for seq in sequences] + [list(bases)]
        merged: list[ast.ClassDef] = [node]
        while any(pending):
            for seq in pending:
                if not seq:
                    continue
                head = seq[0]
                if not any(head in other[1:] for other in pending):
                    break
            else:
                memo[node.name] = None
                return None
            merged.append(head)
            for seq in pending:
                if seq and seq[0] is head:
                    del seq[0]
        memo[node.name] = merged
        return merged

    return linear(cls, frozenset())


#: Packages whose every function may be a collective (under any name the file imports it by).
COLLECTIVE_PACKAGES = ("torch.distributed", "lightning.fabric.utilities.distributed",
                       "lightning.pytorch.utilities.distributed", "pytorch_lightning.utilities.distributed")


def _collective_word(node: ast.AST, imports: ImportTable) -> tuple[str, int] | None:
    """(the name, its line) of the first name or attribute below ``node`` that may be a collective:
    one that the file's imports resolve into a distributed package (``from torch.distributed import
    all_reduce as ar`` then ``ar(x)``), or whose word is one (``COLLECTIVE_WORDS``: ``all_gather``,
    ``self.trainer.strategy.reduce``); None where there is none."""
    for n in every_node(node):
        word = n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name) else None
        if word is None:
            continue
        if any(w in word.lower() for w in COLLECTIVE_WORDS) or (imports.qualify(n) or "").startswith(COLLECTIVE_PACKAGES):
            return word, n.lineno
    return None


def fix_problem(facts: ClassFacts, method, call: ast.Call, unordered: ast.Call | None, sampler_off: bool,
                uneven: str | None = None) -> str | None:
    """None when adding ``sync_dist=True`` to ``call`` is proven safe; else why it is not.
    ``uneven``: where the program may give ranks different numbers of batches (a batch sampler of
    its own), or None."""
    for problem in (
        facts.caller_problem(method),
        facts.key_problem(call, method),
        facts.reach_problem(method, call),
        facts.flag_problem(method, call),
        facts.value_problem(method, call),
    ):
        if problem is not None:
            return problem
    if facts.iterable_data is not None:
        return (f"the file uses `{facts.iterable_data}`: Lightning does not shard an iterable dataset, every rank may "
                "read the whole stream, so the batch is not proven to be this rank's own data (a sum would count it "
                "once per rank)")
    if unordered is not None:
        where = facts.foreign_places.get(id(unordered), f"line {unordered.lineno}")
        return (f"the log at {where} may sync where ranks may not reach it in the same order: "
                "a new sync could pair with it")
    if sampler_off and facts.roots(method) & PER_BATCH_EVAL_HOOKS:
        return ("Lightning's distributed sampler may be off (`use_distributed_sampler` not literally True, in the code "
                "or a configuration): ranks may run different numbers of batches, some none")
    if uneven is not None and facts.roots(method) & (PER_BATCH_EVAL_HOOKS | PER_BATCH_TRAIN_HOOKS):
        # A rank that ran no batch never logged the key: the others wait in its epoch-end sync.
        return f"{uneven}: ranks may run different numbers of batches, some none"
    return None
