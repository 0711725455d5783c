"""Which values of a method are provably this rank's own (DDP004's proof, ``_epoch_log_sync_safety``):
a taint analysis with the hook's arguments and constants as the only sources, and every way code
that runs before a value is read may change it in place (a call it is handed to, a store through a
name that shares its object, a method that reaches what the module holds)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ddpfix.analysis.names import bound_names
from ddpfix.analysis.values import TENSOR_METHODS, pure_function_name
from ddpfix.ast_walk import kept_on, walk
from ddpfix.rules._device_evidence import TORCH_CONSTANTS
from ddpfix.rules._log_sync_walks import (
    EVERY_RANK_HOOKS, KEEPING_METHODS, LIST_METHODS, SCOPES, STEP_OF, Place, binding_events, is_self, is_self_log, module_aliases,
    names_in_nested_scopes, outside_functions_with_places, reads_module, self_attr, store_roots, stored_through,
)
from ddpfix.rules._module_classes import FileView

if TYPE_CHECKING:
    from ddpfix.rules._epoch_log_sync_safety import ClassFacts

#: Builtins that compute on their arguments, when the file binds no name of theirs.
BUILTINS = frozenset({"len", "float", "int", "abs", "round", "min", "max", "sum", "bool"})

class Provenance:
    """Which expressions of a hook are provably this rank's own values: taint analysis with the
    hook's arguments and constants as the only sources (a greatest fixpoint over the local names)."""

    def __init__(self, facts: ClassFacts, method: ast.FunctionDef, until: ast.expr, arguments_of: bool = False):
        """The values as ``until`` (an expression the hook reaches once per call, in no loop) reads
        them: only code that may run before it ends counts (the statements above it, and what it
        evaluates itself; with ``arguments_of``, less the call ``until`` itself, which reads its
        arguments before it runs)."""
        self.facts, self.method = facts, method
        self.reader = until if arguments_of else None
        self.until = (until.end_lineno, until.end_col_offset)
        arguments = method.args
        self.parameters = parameter_names(method)
        # ``outputs`` of a batch-end hook is what the step returned: known when every return of the
        # step is.
        self.untrusted: set[str] = set()
        positional = [*arguments.posonlyargs, *arguments.args]
        if method.name in STEP_OF and len(positional) > 1 and (
                not facts.outputs_known(STEP_OF[method.name]) or facts.hook_elsewhere(method.name) is not None):
            self.untrusted.add(positional[1].arg)  # a callback's same hook runs first, on the same outputs
        if method.name in STEP_OF and len(positional) > 2 and method.name.endswith("_batch_end") \
                and not facts.step_batch_kept(STEP_OF[method.name], method.name):
            self.untrusted.add(positional[2].arg)
        place = 2 if method.name.endswith("_batch_end") else 1
        if method.name in EVERY_RANK_HOOKS and len(positional) > place and facts.moves_batches(method.name):
            # ``on_after_batch_transfer`` may return anything for a batch (a gathered one).
            self.untrusted.add(positional[place].arg)
        self.local_names = bound_names(method) - {method.name}
        self.known = self._fixpoint()

    def _bindings(self) -> dict[str, list[ast.expr | None]]:
        """Local name -> the value of each of its bindings (None: a binding of unknown value), from
        the code that may run before ``until`` (the method's binding events, ``binding_events``,
        read once per method and filtered here by place)."""
        found: dict[str, list[ast.expr | None]] = {}
        # A name a nested function or lambda reads may be changed whenever it is called.
        for name in names_in_nested_scopes(self.method):
            found.setdefault(name, []).append(None)
        bindings, unknown, _ = binding_events(self.method)
        handled: set[int] = set()
        for place, pairs, targets in bindings:
            if place is None or place < self.until:
                for name, value in pairs:
                    found.setdefault(name, []).append(value)
                handled.update(targets)
        for place, node, names in unknown:
            if (place is None or place < self.until) and (node is None or node not in handled):
                for name in names:
                    found.setdefault(name, []).append(None)  # loop, ``with``, comprehension targets, ``del``...
        for name in self.parameters:
            found.setdefault(name, [])
        for name in self.untrusted:
            found[name].append(None)
        return found

    def _fixpoint(self) -> set[str]:
        bindings = self.bindings = self._bindings()
        known = set(bindings)
        # A call reads its arguments before it runs: what it may change in them is not what it
        # was handed (``self._step(x)``'s own effect on ``x`` is the helper's proof, not the caller's).
        self.placed_calls = [(place, call) for place, call in binding_events(self.method)[2]
                             if (place is None or place < self.until) and call is not self.reader]
        self.calls = [call for _place, call in self.placed_calls]
        self.changed_by: dict[str, ast.Call] = {}
        self._blamed_in: dict[str, int] = {}  # name -> the round of the fixpoint that first blamed it
        self._round = 0
        changed = True
        while changed:
            changed = False
            self._round += 1
            for name in sorted(known):
                if any(v is None or self._unknown(v, known) is not None for v in bindings[name]):
                    known.discard(name)
                    changed = True
            changed_here = self._mutated(known) | self._stored_into(known)
            mutated = self._aliases(changed_here) & known
            if mutated:
                known -= mutated
                changed = True
        return known

    def _reads_only(self, call: ast.Call) -> bool:
        """A call that formats its arguments and changes none: the builtin ``print`` and
        Lightning's ``self.print`` (which calls it on rank 0), where no file of the program binds
        ``print`` otherwise (``builtins.print = f``, a star import, a name of the file) and the
        class does not redefine ``self.print``. (A logger's filters and handlers are code of the
        program, handed the values themselves; ``manual_backward`` hands the loss to
        ``on_before_backward`` hooks: neither is read-only.)"""
        func = call.func
        facts = self.facts
        if isinstance(func, ast.Name) and func.id == "print":
            # ``from distprint import print`` binds it by an import, which ``file_bound_names`` leaves out.
            shadowed = (func.id in self.local_names or facts.file_bound_names() is None
                        or func.id in facts.file_bound_names() or facts.imports.qualify(func) is not None)
        elif self_attr(func) == "print":
            shadowed = "print" in facts.methods or "print" in facts.unknown_methods or "print" in facts.assigned
        else:
            return False
        return not shadowed and facts.rebound("print") is None

    def _escaped(self) -> dict[str, Place]:
        """Local names whose objects the method hands to the module before the value is read
        (``self.last = loss``, ``self.window.append(loss)``, ``self.stats["x"] = v``, ``setattr(self,
        k, v)``): a method of the class or code not known may then change them in place (a module
        read whole reaches only what it is handed)."""
        escaped = self.__dict__.get("_escaped_names")
        if escaped is not None:
            return escaped
        escaped = {}
        for place, names in kept_on(self.method, _escape_events, self.facts):
            if place is not None and place >= self.until:
                continue  # handed over after the value is read
            for name in names:
                first = escaped.get(name, place)
                escaped[name] = place if first is None or place is None else min(first, place)
        self._escaped_names = escaped
        return escaped

    def _stored_into(self, known: set[str]) -> set[str]:
        """Names the method's code changes in place with a value not known to be this rank's own
        (``flat[:] = gathered``, ``flat += gathered``, ``out.loss = v``): what shares their object
        changes too (``_aliases``)."""
        through = self.__dict__.get("_through")
        if through is None:
            through = self._through = stored_through(self.method)
        found = set()
        for name, values in through.items():
            if name in self.bindings and any(self._unknown(v, known) is not None for v in values):
                found.add(name)
        return found

    def _aliases(self, changed: set[str]) -> set[str]:
        """``changed`` and every name that may share an object with one of them: a name whose value
        names it, or that its value names (``view = err.view(-1)`` then ``dist.all_reduce(view)``
        changes ``err``; ``x, y = batch``, ``first = batch[0]``, ``d = x.detach()`` share storage;
        ``torch.flatten(x)`` may be a view of its argument). Over-approximated: any local name the
        value mentions counts, but a function called by its name (``criterion(logits, y)`` makes a
        new value, not the module)."""
        mentions = self.__dict__.get("_mentions")
        if mentions is None:
            mentions = self._mentions = {}
            for name, values in self.bindings.items():
                named: set[str] = set()
                for value in values:
                    if value is None:
                        continue
                    called = {id(n.func) for n in walk(value) if isinstance(n, ast.Call)}
                    named.update(n.id for n in walk(value) if isinstance(n, ast.Name) and id(n) not in called
                                 and n.id in self.bindings)
                mentions[name] = named
        # In name order, so that the call a reason names does not hang on the hash seed.
        found, pending = set(changed), sorted((name for name in changed if name in mentions), reverse=True)
        while pending:
            name = pending.pop()
            near = mentions.get(name, set()) | {other for other, named in mentions.items() if name in named}
            if name in self.parameters and (self.method.name not in EVERY_RANK_HOOKS or self.method.name in STEP_OF):
                # A caller may hand a helper's two parameters one object
                # (``self._report(errors, errors.view(-1))``), and a step may return part of its batch
                # (a batch-end hook's ``outputs`` and ``batch``); Lightning hands a step distinct ones.
                near |= self.parameters & set(mentions)
            if name in self.changed_by:
                # Blamed on the first call that may change it, whether found here or already:
                # ``x = data.x`` then ``self.model(x)`` changes ``data`` before a later call does.
                for other in sorted(near):
                    self._blame(other, self.changed_by[name])
            for other in sorted(near - found, reverse=True):
                found.add(other)
                pending.append(other)
        return found

    def _blame(self, name: str, call: ast.Call) -> None:
        """``call`` may change ``name`` in place: the reason names the first such call to run
        among those of the first round of the fixpoint that found one. A later round's call is a
        consequence, not the cause: ``torch.zeros(imgs.shape[0])`` may run code of ``imgs`` only
        once a loop's ``flow(z)`` (``z = imgs``) may have changed it."""
        held = self.changed_by.get(name)
        # Ordered by where each call ends: a call runs after the calls inside it.
        if held is None or (self._blamed_in[name] == self._round
                            and (call.end_lineno, call.end_col_offset) < (held.end_lineno, held.end_col_offset)):
            self.changed_by[name] = call
            self._blamed_in[name] = self._round

    def _mutated(self, known: set[str]) -> set[str]:
        """Names an unknown call may change in place (``dist.all_reduce(total)``, ``x.add_(y)``):
        the roots of its arguments and of the object whose method it is. Lightning's ``self.log``
        and the class's torchmetrics objects (``self.val_acc.update(preds, y)``) change none."""
        found: set[str] = set()
        escaped = self._escaped()
        for place, call in self.placed_calls:
            func = call.func
            if is_self_log(call) or (isinstance(func, ast.Attribute) and is_self(func.value) and func.attr in self.facts.metrics):
                continue
            if (isinstance(func, ast.Attribute) and self_attr(func.value) in self.facts.metrics
                    and func.attr in ("update", "forward", "reset")):
                continue
            if isinstance(func, ast.Attribute) and self_attr(func.value) in self.facts.lists and func.attr in LIST_METHODS:
                continue  # ``self.outputs.append(loss)`` keeps ``loss`` as it is
            if escaped and not self._reads_only(call) and (
                    (self_attr(func) in self.facts.methods and self.facts.touches_module(func.attr))
                    or (is_self(func) and self.facts.touches_module("forward"))
                    or (self_attr(func) not in self.facts.methods and not is_self(func)
                        and self._function_unknown(func, known) is not None)):
                # ``self.last = loss`` then ``self._sync_last()``: a method of the class, or code
                # not known, may change in place what the module was handed before, and so ``loss``.
                for name, handed in escaped.items():
                    if name not in found and (place is None or handed is None or handed < place):
                        found.add(name)
                        self._blame(name, call)
            # ``torch.mean(x, dim=0, out=total)``: a known function writes into ``out``.
            roots = [k.value for k in call.keywords if k.arg == "out"]
            helper = self_attr(func)
            if helper in self.facts.methods:
                # The class's own method, read whatever it returns: what it changes in place.
                changed = self.facts.changed_parameters(helper)
            elif self._reads_only(call) or self._function_unknown(func, known) is None:
                # A known function runs code of the objects it is handed (``__index__``,
                # ``__torch_function__``) only for those not known.
                changed = set()
                roots += [a for a in [*call.args, *(k.value for k in call.keywords)] if self._unknown(
                    a.value if isinstance(a, ast.Starred) else a, known) is not None]
            else:
                changed = None
            if changed is not None:
                # A helper that changes an argument in place: what the caller passed there changes.
                roots += [a for i, a in enumerate(call.args) if i in changed or "*" in changed]
                roots += [k.value for k in call.keywords if k.arg in changed or "*" in changed]
            else:
                roots += [*call.args, *(k.value for k in call.keywords)]
                if isinstance(func, ast.Attribute) and not is_self(func.value):
                    roots.append(func.value)
            for root in roots:
                # Whatever the argument reaches: ``errors.view(-1)``, ``flat := x.flatten()``,
                # ``[loss, mae]`` hand the call objects that those names hold or share.
                called = {id(n.func) for n in walk(root) if isinstance(n, ast.Call)}
                for n in walk(root):
                    if isinstance(n, ast.Name) and id(n) not in called:
                        found.add(n.id)
                        self._blame(n.id, call)
        return found

    def first_unknown_source(self) -> ast.expr | None:
        """The first expression (in the order of the code) that the method cannot read whatever its
        names hold: an unknown function, an attribute of another object, the module's state. The
        names it taints, and what calls on them may change, follow from it (for a reason)."""
        every = set(self.bindings)
        found = []
        for name, values in self.bindings.items():
            for value in values:
                if value is not None:
                    part = self._unknown(value, every)
                    if part is not None and not isinstance(part, ast.Name):
                        found.append(part)
        return min(found, key=lambda n: (n.lineno, n.col_offset), default=None)

    def unknown_binding(self, name: str) -> tuple[int, str] | None:
        """(line, what) of the first binding of ``name`` before the value is read whose value is
        not known (a loop or ``with`` target, an import, ``del``, a name a nested function reads),
        for a reason; None where every binding has a value."""
        if name in names_in_nested_scopes(self.method):
            inner = next((n for n in walk(self.method) if n is not self.method and isinstance(n, SCOPES)
                          and any(isinstance(m, ast.Name) and m.id == name for m in walk(n))), None)
            if inner is not None:
                return inner.lineno, "a nested function or lambda that reads it, and may change it whenever it is called"
        # ``targets`` holds the ids of the target nodes already.
        handled = {t for place, _pairs, targets in binding_events(self.method)[0]
                   if place is None or place < self.until for t in targets}
        for place, node, names in binding_events(self.method)[1]:
            if name in names and place is not None and place < self.until and node not in handled:
                return place[0], "a binding whose value is not read (a `with` or `except` target, `del`, an import)"
        return None

    def unknown(self, node: ast.expr) -> ast.expr | None:
        """None when ``node`` is provably this rank's own value; else its first unknown part (for a
        local name, the unknown part of the value it was given, where there is one)."""
        found = self._unknown(node, self.known)
        followed: set[str] = set()
        while isinstance(found, ast.Name) and found.id not in followed:
            followed.add(found.id)
            values = self.bindings.get(found.id, [])
            deeper = next((self._unknown(v, self.known) for v in values
                           if v is not None and self._unknown(v, self.known) is not None), None)
            if deeper is None or (found.id in self.changed_by and isinstance(deeper, ast.Name)
                                  and deeper.id not in self.untrusted):
                break  # a name a call may change in place is the answer (``loss``), not what made it
            found = deeper
        return found

    def _unknown(self, node: ast.expr, known: set[str]) -> ast.expr | None:
        check = lambda child: self._unknown(child, known)  # noqa: E731
        if isinstance(node, ast.Constant):
            return None
        if isinstance(node, ast.Name):
            return None if node.id in known else node
        if isinstance(node, ast.Attribute):
            if is_self(node.value):
                return None if self.facts.own_property(node.attr) else node
            if self._module_constant(node):
                return None
            return check(node.value)
        if isinstance(node, ast.Subscript):
            return check(node.value) or check(node.slice)
        if isinstance(node, ast.Slice):
            parts = [p for p in (node.lower, node.upper, node.step) if p is not None]
            return next((u for u in map(check, parts) if u is not None), None)
        if isinstance(node, ast.BinOp):
            return check(node.left) or check(node.right)
        if isinstance(node, ast.UnaryOp):
            return check(node.operand)
        if isinstance(node, (ast.BoolOp,)):
            return next((u for u in map(check, node.values) if u is not None), None)
        if isinstance(node, ast.Compare):
            return next((u for u in map(check, [node.left, *node.comparators]) if u is not None), None)
        if isinstance(node, ast.JoinedStr):
            return next((u for u in map(check, node.values) if u is not None), None)
        if isinstance(node, ast.FormattedValue):
            return check(node.value) or (check(node.format_spec) if node.format_spec is not None else None)
        if isinstance(node, ast.IfExp):
            return check(node.test) or check(node.body) or check(node.orelse)
        if isinstance(node, (ast.Tuple, ast.List)):
            return next((u for u in map(check, node.elts) if u is not None), None)
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                return node
            return next((u for u in map(check, [*node.keys, *node.values]) if u is not None), None)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.DictComp, ast.SetComp)):
            inner = set(known)
            for generator in node.generators:
                if generator.is_async or not isinstance(generator.target, (ast.Name, ast.Tuple)):
                    return node
                if self._unknown(generator.iter, inner) is not None:
                    return generator.iter
                inner |= {n.id for n in walk(generator.target) if isinstance(n, ast.Name)}
                for condition in generator.ifs:
                    if self._unknown(condition, inner) is not None:
                        return condition
            if isinstance(node, ast.DictComp):
                return self._unknown(node.key, inner) or self._unknown(node.value, inner)
            return self._unknown(node.elt, inner)
        if isinstance(node, ast.Call):
            return self._unknown_call(node, known)
        return node

    def _module_constant(self, node: ast.Attribute) -> bool:
        """``torch.float32``, ``torch.long``, ``math.pi``, ``np.inf``: a constant of a module the file
        imports (not a name of the method), the same on every rank and never a tensor."""
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or root.id in self.local_names:
            return False
        qualified = self.facts.imports.qualify(node) or ""
        head, _, rest = qualified.partition(".")
        return head in ("torch", "numpy", "math") and bool(rest) and "." not in rest and (
            rest in TORCH_CONSTANTS or head != "torch")

    def _unknown_call(self, node: ast.Call, known: set[str]) -> ast.expr | None:
        check = lambda child: self._unknown(child, known)  # noqa: E731
        # ``f(*xs, **batch)`` passes what ``xs`` and ``batch`` hold: known when they are.
        arguments = [a.value if isinstance(a, ast.Starred) else a for a in node.args] + [k.value for k in node.keywords]
        unknown = self._function_unknown(node.func, known)
        if unknown is not None:
            return node if unknown is node.func else unknown
        return next((u for u in map(check, arguments) if u is not None), None)

    def _builds_known_module(self, call: ast.Call) -> bool:
        """``call`` builds a module whose every call is known (``ModuleReader.call_problem``), by a
        name the method does not rebind."""
        facts = self.facts
        view = FileView.of(facts.path, facts.tree, facts.imports)
        if facts.shadowed(call.func, self.method) or facts.modules.call_problem(call, view) is not None:
            return False
        # A module class of the program built after Lightning moved the module (in a step) keeps
        # its parameters and buffers where it made them: the CPU. (A torch layer built there and
        # handed the batch fails in the original already.)
        return not facts.modules.classes_of.get(id(call)) or facts.built_before_the_move(call)

    def _function_unknown(self, func: ast.expr, known: set[str]) -> ast.expr | None:
        """None when calling ``func`` computes on its arguments only (and on a known object, for a
        tensor method); else the unknown part."""
        node = func
        check = lambda child: self._unknown(child, known)  # noqa: E731
        facts = self.facts
        if is_self(func) or self_attr(func) == "forward":
            # The module's own forward, on this rank's inputs, when it holds no collective and
            # every value it returns is known the way a helper's is.
            if not facts.forward_is_local or facts.forward_problem() is not None:
                return node
        elif self_attr(func) is not None:
            if func.attr in facts.function_attributes or facts.submodule_known(func.attr):
                return None
            if func.attr in facts.methods and facts.helper_problem(func.attr) is None:
                return None
            return node
        elif isinstance(func, ast.Attribute) and func.attr in TENSOR_METHODS and facts.imports.qualify(func) is None:
            if facts.rebound(func.attr) is not None:
                return node  # ``torch.Tensor.mean = f`` somewhere in the program
            return check(func.value)  # a method of a known tensor (or batch)
        elif isinstance(func, ast.Name) and func.id in BUILTINS:
            if func.id in facts.file_names or func.id in self.local_names:
                return node
        elif isinstance(func, ast.Name) and func.id in self.local_names:
            # ``criterion = nn.CrossEntropyLoss()`` then ``criterion(logits, y)``: every binding a
            # ``torch.nn`` module built here.
            values = self.bindings.get(func.id, [])
            if not values or not all(isinstance(v, ast.Call) and self._builds_known_module(v) for v in values):
                return node
        elif isinstance(func, ast.Call):
            # ``nn.CrossEntropyLoss()(logits, y)``: a module built here and called at once, known as
            # a local name bound to one is (above).
            if not self._builds_known_module(func):
                return node
            return next((u for u in map(check, [*func.args, *(k.value for k in func.keywords)]) if u is not None), None)
        else:
            qualified = facts.imports.qualify(func)
            root = func
            while isinstance(root, ast.Attribute):
                root = root.value
            if qualified is None or not isinstance(root, ast.Name) or root.id in self.local_names:
                return node
            if not pure_function_name(qualified) or facts.rebound(qualified.rsplit(".", 1)[-1]) is not None:
                return node  # not pure, or ``F.mse_loss = f`` somewhere in the program
        return None


def _escape_events(method: ast.FunctionDef, facts: ClassFacts) -> list[tuple[Place, list[str]]]:
    """Each place of ``method`` that hands local names to the module, with those names, in the
    method's walk order: the same for every log of the method, so asked once (``kept_on``, with the
    class's facts it is read with); ``Provenance._escaped`` keeps those before the value is read."""
    events: list[tuple[Place, list[str]]] = []
    own = (bound_names(method) - {method.name}) | parameter_names(method)

    def names_in(node: ast.expr, place: Place) -> None:
        called = {id(n.func) for n in walk(node) if isinstance(n, ast.Call)}
        names = [n.id for n in walk(node) if isinstance(n, ast.Name) and id(n) not in called and n.id in own]
        if names:
            events.append((place, names))

    held = module_aliases(method)  # ``stats = self.stats``: a store through it is the module's
    for n, place in outside_functions_with_places(method):
        for root, depth in store_roots(n):
            if is_self(root) or (depth and isinstance(root, ast.Name) and root.id in held):
                names_in(n.value, place)
        if isinstance(n, ast.Assign) and any(
                isinstance(c, ast.Call) and self_attr(c.func) in facts.methods
                and facts.hands_to_module(c.func.attr) for c in walk(n.value)):
            # ``loss = self._shared_step(batch)`` where the helper keeps ``self.last = loss``.
            for target in n.targets:
                names_in(target, place)
            names_in(n.value, place)
        if isinstance(n, ast.Call):
            func = n.func
            if self_attr(func) in facts.methods and facts.hands_to_module(func.attr):
                for argument in [*n.args, *(k.value for k in n.keywords)]:
                    names_in(argument, place)
            if isinstance(func, ast.Attribute) and (self_attr(func.value) is not None or reads_module(func.value, held)) \
                    and func.attr in KEEPING_METHODS:
                for argument in [*n.args, *(k.value for k in n.keywords)]:
                    names_in(argument, place)
            elif isinstance(func, ast.Name) and func.id == "setattr" and n.args and is_self(n.args[0]):
                for argument in n.args[1:]:
                    names_in(argument, place)
    return events


def parameter_names(method: ast.FunctionDef) -> set[str]:
    """The method's parameters but ``self``: ``*args`` and ``**kwargs`` too."""
    arguments = method.args
    found = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]} - {"self"}
    found.update(extra.arg for extra in (arguments.vararg, arguments.kwarg) if extra is not None)
    return found
