"""How DDP004's proof reads a method (``_epoch_log_sync_safety``, ``_log_sync_provenance``): the
hooks Lightning calls on every rank, and the walks of a method's body that the questions share
(its binding events, the places of its statements, the names its nested scopes read), each kept on
the node it walks."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ddpfix.analysis.ast_shapes import every_node
from ddpfix.analysis.names import pattern_names
from ddpfix.ast_walk import child_nodes, kept_on, walk

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)

LOG_METHODS = frozenset({"log", "log_dict"})

#: Methods through which a container keeps the objects it is handed (``self.window.append(loss)``).
KEEPING_METHODS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "__setitem__"})

#: Hooks Lightning calls on every rank, the same number of times: the evaluation loops' (each rank
#: runs its DistributedSampler shard, padded to the same length) and the training loop's (DDP's
#: gradient all-reduce already needs every rank to run every step).
TRAINING_HOOKS = frozenset({"training_step", "on_train_batch_start", "on_train_batch_end"})

#: Hooks Lightning calls once per training batch.
PER_BATCH_TRAIN_HOOKS = frozenset({"training_step", "on_train_batch_start", "on_train_batch_end"})
PER_BATCH_EVAL_HOOKS = frozenset({
    "validation_step", "test_step",
    "on_validation_batch_start", "on_validation_batch_end", "on_test_batch_start", "on_test_batch_end",
})

EPOCH_LEVEL_HOOKS = frozenset({
    "on_train_epoch_start", "on_train_epoch_end", "on_validation_epoch_start", "on_validation_epoch_end",
    "on_test_epoch_start", "on_test_epoch_end", "on_train_start", "on_validation_start", "on_test_start",
    # Lightning 1.x's, given the steps' outputs: a module that defines one runs under 1.x (2.x
    # refuses it), whose loops call them on every rank once per epoch.
    "training_epoch_end", "validation_epoch_end", "test_epoch_end",
})

#: Hooks whose first argument is what the step returned (a batch-end hook: this step's; a 1.x
#: epoch-end hook: the list of the epoch's).
STEP_OF = {"on_train_batch_end": "training_step", "on_validation_batch_end": "validation_step",
           "on_test_batch_end": "test_step", "training_epoch_end": "training_step",
           "validation_epoch_end": "validation_step", "test_epoch_end": "test_step"}

EVERY_RANK_HOOKS = TRAINING_HOOKS | PER_BATCH_EVAL_HOOKS | EPOCH_LEVEL_HOOKS

#: The hooks of the validation loop, which ``fit`` runs when ``val_check_interval`` says.
VALIDATION_HOOKS = frozenset(hook for hook in EVERY_RANK_HOOKS if "validation" in hook)

#: Builtins that compute on their arguments, when the file binds no name of theirs.
LIST_METHODS = frozenset({"append", "extend", "insert"})

#: LightningModule properties that hold this rank's own plain number (read from the trainer, never
#: reduced): syncing one averages per-rank values, as the fix means to; and its ``device`` and
#: ``dtype``, which only say where and how a value is made (``torch.ones((), device=self.device)``).
RANK_OWN_PROPERTIES = frozenset({"global_rank", "local_rank", "node_rank", "current_epoch", "global_step", "device",
                                 "dtype"})


def short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."


def is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def self_attr(node: ast.expr) -> str | None:
    return node.attr if isinstance(node, ast.Attribute) and is_self(node.value) else None


#: What defines a scope of its own: its body runs elsewhere (when called), not where it stands.
SCOPES = (*FUNCTIONS, ast.Lambda, ast.ClassDef)


def walk_outside_functions(node) -> Iterator[ast.AST]:
    """Nodes below ``node`` (a node or a list), without entering nested functions, lambdas or classes.
    Expression contexts (``Load``, ``Store``, ``Del``: a quarter of the nodes) are left out: the
    questions are about what holds them (a name's binding, a call, a ``return``)."""
    pending = list(node) if isinstance(node, list) else child_nodes(node)
    while pending:
        current = pending.pop()
        if isinstance(current, SCOPES):
            continue
        yield current
        pending.extend([child for child in child_nodes(current) if not isinstance(child, ast.expr_context)])


def per_file(tree: ast.Module, what: str, compute):
    """What ``compute()`` says of the whole file, kept on its tree: ``ClassFacts`` is built for each
    class of the file, and a file of many classes walked itself once per class."""
    cache = getattr(tree, "_ddpfix_epoch_log_sync", None)
    if cache is None:
        cache = tree._ddpfix_epoch_log_sync = {}
    if what not in cache:
        cache[what] = compute()
    return cache[what]


def outside_functions_with_places(method: ast.AST) -> list[tuple[ast.AST, tuple[int, int] | None]]:
    """``walk_outside_functions`` of the method's body, each node with its start (None: it has
    none), in that walk's order. Kept on the node: a hook's every log asks it (``Provenance``), and
    walking the hook again for each made a hook of many logs quadratic."""
    found = getattr(method, "_ddpfix_outside", None)
    if found is None:
        found = method._ddpfix_outside = [
            (n, (n.lineno, n.col_offset) if hasattr(n, "lineno") else None) for n in walk_outside_functions(method.body)
        ]
    return found


def names_in_nested_scopes(method: ast.AST) -> list[str]:
    """Every name read or bound inside a function, lambda or class nested in ``method`` (with
    repeats, in walk order). Kept on the node, as ``outside_functions_with_places``."""
    found = getattr(method, "_ddpfix_nested_names", None)
    if found is None:
        found = method._ddpfix_nested_names = [
            inner.id
            for n in every_node(method) if n is not method and isinstance(n, SCOPES)
            for inner in walk(n) if isinstance(inner, ast.Name)
        ]
    return found


Place = tuple[int, int] | None


def is_self_log(call: ast.Call) -> bool:
    """``self.log(...)`` / ``self.log_dict(...)``: Lightning's log, which changes none of its arguments."""
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in LOG_METHODS and is_self(func.value)


def event_places(method: ast.AST) -> list[tuple[int, int]]:
    """The places of the method's binding events (``binding_events``), sorted, without repeats:
    ``Provenance`` keeps the events whose place is before its end (and those without a place)."""
    cached = getattr(method, "_ddpfix_event_places", None)
    if cached is None:
        bindings, unknown, calls = binding_events(method)
        # ``self.log(...)`` changes no value (``Provenance._mutated`` passes over it): logs with only
        # logs between them share one Provenance, and a hook of many logs is not quadratic.
        calls = [(place, call) for place, call in calls if not is_self_log(call)]
        places = {event[0] for events in (bindings, unknown, calls) for event in events if event[0] is not None}
        cached = method._ddpfix_event_places = sorted(places)
    return cached


def binding_events(method: ast.AST) -> tuple[list[tuple[Place, list[tuple[str, ast.expr | None]], set[int]]],
                                               list[tuple[Place, int | None, list[str]]],
                                               list[tuple[Place, ast.Call]]]:
    """What binds names in the method's body (outside nested functions), in walk order, each with
    its place: the assignments with their (name, value) pairs and the ids of their target nodes;
    the bindings of unknown value (a target node's id where an assignment may have handled it);
    and the calls. ``Provenance`` keeps the events before its call. Kept on the node: walking the
    hook again for each of its logs made a hook of many logs quadratic."""
    cached = getattr(method, "_ddpfix_binding_events", None)
    if cached is not None:
        return cached

    def bind(target: ast.expr, value: ast.expr | None, pairs: list) -> None:
        if isinstance(target, ast.Name):
            pairs.append((target.id, value))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:  # unpacking a known value gives known parts
                bind(element.value if isinstance(element, ast.Starred) else element, value, pairs)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            # ``total[0] = v`` / ``out.loss = v`` change what ``total`` / ``out`` hold.
            parts: list[ast.expr] = [] if value is None else [value]
            root: ast.expr = target
            # ``errors.view(-1)[:1] = v`` stores into ``errors`` too (a view shares its storage).
            while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
                if isinstance(root, ast.Subscript):
                    parts.append(root.slice)
                if isinstance(root, ast.Call):
                    parts.extend(root.args)
                    parts.extend(k.value for k in root.keywords)
                    root = root.func
                    continue
                root = root.value
            if isinstance(root, ast.Name):
                pairs.append((root.id, ast.Tuple(elts=parts, ctx=ast.Load()) if value is not None else None))
        else:
            for n in walk(target):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    pairs.append((n.id, None))

    bindings, unknown, calls = [], [], []
    for n, place in outside_functions_with_places(method):
        pairs: list[tuple[str, ast.expr | None]] = []
        targets: set[int] = set()
        if isinstance(n, ast.Assign):
            for target in n.targets:
                bind(target, n.value, pairs)
                targets.update(id(x) for x in walk(target))
        elif isinstance(n, ast.AnnAssign):
            bind(n.target, n.value, pairs)
            targets.update(id(x) for x in walk(n.target))
        elif isinstance(n, ast.AugAssign):
            # ``x += v`` is ``x = x + v``: known when ``x`` and ``v`` are.
            value = ast.copy_location(ast.BinOp(left=ast.copy_location(ast.Name(id=n.target.id, ctx=ast.Load()), n.target),
                                                op=n.op, right=n.value), n) if isinstance(n.target, ast.Name) else None
            bind(n.target, value, pairs)
            targets.update(id(x) for x in walk(n.target))
        elif isinstance(n, ast.NamedExpr):
            bind(n.target, n.value, pairs)
            targets.add(id(n.target))
        elif isinstance(n, (ast.For, ast.comprehension)) and not isinstance(n, ast.AsyncFor) and not getattr(n, "is_async", 0):
            bind(n.target, n.iter, pairs)  # the items of a known iterable are known
            targets.update(id(x) for x in walk(n.target))
        if pairs or targets:
            bindings.append((place, pairs, targets))
    for n, place in outside_functions_with_places(method):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            unknown.append((place, id(n), [n.id]))
        elif isinstance(n, (ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom, *FUNCTIONS, ast.ClassDef)):
            names = n.names if isinstance(n, (ast.Global, ast.Nonlocal)) else \
                [(a.asname or a.name).split(".")[0] for a in n.names] if isinstance(n, (ast.Import, ast.ImportFrom)) \
                else [n.name]
            unknown.append((place, None, list(names)))
        elif isinstance(n, ast.ExceptHandler) and n.name:
            unknown.append((place, None, [n.name]))
        elif pattern_names(n):
            unknown.append((place, None, pattern_names(n)))  # ``case {"split": stage}`` rebinds ``stage``
        elif isinstance(n, ast.Call):
            calls.append((place, n))
    cached = method._ddpfix_binding_events = (bindings, unknown, calls)
    return cached


def stored_through(method: ast.AST) -> dict[str, list[ast.expr]]:
    """Names the method's own code changes in place, with what it stores: through a subscript or an
    attribute (``stats["seen"] = n``, ``out.loss = v``), or by an augmented assignment (``count +=
    n``: in place for a tensor, a list, a dict). ``del d[k]`` removes, storing nothing. Kept on the
    node, as ``outside_functions_with_places``."""
    return kept_on(method, _stored_through)


def _stored_through(method: ast.AST) -> dict[str, list[ast.expr]]:
    found: dict[str, list[ast.expr]] = {}
    for n in walk_outside_functions(method.body):
        if isinstance(n, ast.Assign):
            targets, value = n.targets, n.value
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and n.value is not None:
            targets, value = [n.target], n.value
        else:
            continue
        for target in targets:
            elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            for element in elements:
                root = element
                through = isinstance(n, ast.AugAssign)
                while isinstance(root, (ast.Attribute, ast.Subscript, ast.Starred, ast.Call)):
                    through = through or not isinstance(root, ast.Starred)
                    root = root.func if isinstance(root, ast.Call) else root.value
                if through and isinstance(root, ast.Name):
                    found.setdefault(root.id, []).append(value)
    return found


def module_aliases(method: ast.AST) -> frozenset[str]:
    """Local names of the method that may hold an object the module holds: bound to a read of
    ``self`` (``stats = self.stats``, ``last = self.last``, ``first = self.window[0]``,
    ``getattr(self, name)``), a loop over one (``for t in self.val_losses``), or a read of such a
    name (``entry = stats["loss"]``). A store through one, or handing one to a call, reaches the
    module. Kept on the node."""
    cached = getattr(method, "_ddpfix_module_aliases", None)
    if cached is not None:
        return cached
    bindings = binding_events(method)[0]
    pairs = [(name, value) for _place, found, _targets in bindings for name, value in found if value is not None]
    aliases: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, value in pairs:
            if name not in aliases and reads_module(value, aliases):
                aliases.add(name)
                changed = True
    method._ddpfix_module_aliases = frozenset(aliases)
    return method._ddpfix_module_aliases


def reads_module(value: ast.expr, aliases: set[str] | frozenset[str]) -> bool:
    """``value`` is a read of what the module holds: an attribute or item chain from ``self`` or
    from a name of ``aliases``, ``getattr(self, ...)``, a method call on one (a tuple of them, for
    an unpacking)."""
    if isinstance(value, (ast.Tuple, ast.List)):
        return any(reads_module(e, aliases) for e in value.elts)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "getattr" and value.args:
        return is_self(value.args[0]) or (isinstance(value.args[0], ast.Name) and value.args[0].id in aliases)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        # ``last.detach()``, ``self.window[0].view(-1)``: a method of what the module holds may
        # return it, or a view of it.
        return reads_module(value.func.value, aliases)
    if not isinstance(value, (ast.Attribute, ast.Subscript)):
        return False
    root = value
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    return is_self(root) or (isinstance(root, ast.Name) and root.id in aliases)


def store_roots(statement: ast.AST) -> list[tuple[ast.expr, int]]:
    """For an assignment (``=``, ``+=``, ``x: T =``), each target's root through attribute, item and
    call chains, with how many links lead to it: ``self.stats["x"] = v`` gives (``self``, 2),
    ``errors.view(-1)[:1] = g`` (``errors``, 3), ``loss = v`` (``loss``, 0). Other statements: none."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)) and statement.value is not None:
        targets = [statement.target]
    else:
        return []
    found = []
    for target in targets:
        root, depth = target, 0
        while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
            root = root.func if isinstance(root, ast.Call) else root.value
            depth += 1
        found.append((root, depth))
    return found
