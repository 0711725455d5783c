"""DDP009 lr-finder-multi-device: the LR finder on several devices crashes Lightning before 2.4.0."""

from __future__ import annotations

import ast

from ddpfix.lazy_regex import lazy_compile
from ddpfix.analysis import tree_text as tree_text
from ddpfix.analysis.ast_shapes import every_node, imports_of, last_name, resolved
from ddpfix.analysis.lightning import keyword, lightning_name, string_value
from ddpfix.rules.base import Rule, RuleContext, clip


class LrFinderMultiDevice(Rule):
    """
    # DDP009 lr-finder-multi-device

    ## What it does
    Reports the learning-rate finder — `Tuner(trainer).lr_find(...)`, the `LearningRateFinder`
    callback, 1.x `trainer.tuner.lr_find` or `Trainer(auto_lr_find=True)` — used with a Trainer
    whose `devices` is not 1, when the Lightning version the project runs with is below 2.4.0.
    The version is read, statically, from the project's own pins (`pyproject.toml`,
    `requirements*.txt`, `setup.cfg`, `environment.yml`, found upward from the file), else from the
    installed distribution's metadata (Lightning is never imported). An unknown version is said.

    ## Why it breaks under DDP
    Metrics cached during the finder's pass are moved to the CPU in teardown and, before 2.4.0,
    never moved back: on two or more devices the first sync fails with "RuntimeError: No backend
    type associated with device type cpu" (PL#19813, fixed by PR #19814 in 2.4.0).

    ## Before
    ```python
    trainer = L.Trainer(devices=4, strategy="ddp")
    Tuner(trainer).lr_find(model)
    trainer.fit(model)
    ```

    ## After (either way out)
    ```python
    # requirements.txt: lightning>=2.4.0
    # or: find the rate on a throw-away Trainer, then build a fresh one for fit
    Tuner(L.Trainer(devices=4, strategy="ddp")).lr_find(model)
    trainer = L.Trainer(devices=4, strategy="ddp")
    trainer.fit(model)
    ```

    ## When it does not fix
    Always: upgrading or restructuring is your call. Not reported with `devices=1`, when the
    pinned or installed Lightning is 2.4.0 or newer, or when the finder runs on a Trainer that never
    fits (`Tuner(L.Trainer(...)).lr_find(...)`, or a trainer variable with no `.fit`/`.validate`/
    `.test`/`.predict` call): that is the way out above.

    A Trainer with `accelerator="cpu"` is never affected (its processes sync over gloo, which takes
    the CPU tensors the finder leaves behind; the error is NCCL's).

    Each finder is judged on its own Trainer where the file says which one it is: the `Tuner`'s
    trainer (a `Trainer(...)` call, or a name bound once to one), 1.x `trainer.tuner`, the Trainer
    whose `callbacks=` list holds the `LearningRateFinder`, the Trainer that says `auto_lr_find`.
    A finder on a one-device Trainer is not reported even when another Trainer of the file runs
    DDP. Where the file does not say (a Trainer made by a function, a callback list built
    elsewhere), any Trainer of the file on several devices may be the one.
    """

    code = "DDP009"
    name = "lr-finder-multi-device"
    summary = "LR finder on several devices with Lightning < 2.4.0: 'No backend type associated with device type cpu'"
    fixable = False
    triggers = (("lr_find", "LearningRateFinder", "auto_lr_find"), "Trainer")
    lightning_only = True
    uses_facts = True
    # bench/real: its one finding on real code (a pin that allows both sides of 2.4.0) was noise;
    # out of the default selection until real projects show it meets its target.
    preview = True

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """A call of something that may be a Trainer, and a finder: ``<x>.lr_find(...)``, something
        that may be ``LearningRateFinder(...)``, or a Trainer with ``auto_lr_find=``. Lightning's
        own tuner modules name both and call neither."""
        imported = imports_of(tree)

        def may_name(func: ast.expr, short: str) -> bool:
            return last_name(func) == short or any(full.rsplit(".", 1)[-1] == short for full in resolved(func, imported))

        trainer = finder = False
        for node in every_node(tree):
            if not isinstance(node, ast.Call):
                continue
            if may_name(node.func, "Trainer"):
                trainer = True
                finder |= any(k.arg == "auto_lr_find" for k in node.keywords)
            elif (isinstance(node.func, ast.Attribute) and node.func.attr == "lr_find") or may_name(node.func, "LearningRateFinder"):
                finder = True
            if trainer and finder:
                return True
        return False

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """Reports on CPython's tree exactly what the rule's LibCST version did (``bench/parity.py``
        compared them); every finding is a call or a keyword, and the code a message quotes is read
        from the source, so it never needs LibCST."""
        scan = _Scan(tree, ctx)
        if not scan.finders or not scan.multi_device_trainers:
            return
        pin = ctx.facts.pins.get(ctx.path) if ctx.path in ctx.facts.pins else _own_pin(ctx)
        if pin is not None and pin.has("the LR finder's fix of PL#19813"):
            return
        for node, what, trainer in scan.finders:
            # The finder's own Trainer where the file says which one it is; else any of the file's.
            devices = scan.devices_of(trainer) if trainer is not None else scan.multi_device_trainers[0][1]
            if devices is None:
                continue  # the finder runs on a Trainer of one device
            ctx.report(node, f"{what} on {clip(devices)} needs Lightning>=2.4.0",
                       detail=f"{what} with a Trainer on {_message(pin, devices)}", fixable=False)


def _message(pin, devices: str) -> str:
    """The message after ``<finder> with a Trainer on ``."""
    if pin is None:
        version = "the Lightning version could not be found (no pin, nothing installed); if it is below 2.4.0"
    elif pin.has("the LR finder's fix of PL#19813") is False:
        version = f"{pin.describe()} is below 2.4.0, and"
    else:
        version = f"{pin.describe()} allows versions below 2.4.0; with one of them"
    return (
        f"{devices}: {version} the first sync after the finder fails with "
        "\"RuntimeError: No backend type associated with device type cpu\" (PL#19813). Upgrade to "
        "lightning>=2.4.0, or run the finder on a separate throw-away Trainer and build a fresh Trainer for fit"
    )


def _own_pin(ctx: RuleContext):
    from ddpfix.facts import lightning_pin

    return lightning_pin(ctx.path, ctx.data)


FITTING = frozenset({"fit", "validate", "test", "predict"})


def _start(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset


class _Scan:
    """The finders and the Trainers on several devices of a file. Order matters twice: the first
    such Trainer names the devices in every message, and a name assigned ``Tuner(...)`` twice
    tunes the last one's trainer. Both are the source order, which ``ast.walk`` does not keep."""

    def __init__(self, tree: ast.Module, ctx: RuleContext):
        self.ctx = ctx
        #: (where, what, the ``Trainer(...)`` call it runs on where the file says, else None)
        self.finders: list[tuple[ast.AST, str, ast.Call | None]] = []
        self.multi_device_trainers: list[tuple[ast.Call, str]] = []
        self._devices: dict[int, str | None] = {}  # id of each Trainer call -> its devices, when several
        # Each node's scope (the function it runs in, or the module): a ``trainer`` of one function
        # is not another function's.
        self._scope = _scopes(tree)
        # Names bound once in their scope, to a Trainer call (bound twice or otherwise: not known).
        self._bound: dict[tuple[int, str], ast.expr | None] = {}
        for node in every_node(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                key = self._key(node.targets[0])
                self._bound[key] = node.value if key not in self._bound else None
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
                self._bound[self._key(node.target)] = None
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    for part in ast.walk(target):
                        if isinstance(part, ast.Name):
                            self._bound[self._key(part)] = None
        tuners: dict[tuple[int, str], ast.expr] = {}  # tuner variable -> the trainer it tunes
        fitted: set[tuple[int, str]] = set()  # trainer variables that run fit/validate/test/predict
        lr_finds: list[ast.Call] = []
        nodes = sorted((n for n in every_node(tree) if isinstance(n, (ast.Assign, ast.Call))), key=_start)
        for node in nodes:
            if isinstance(node, ast.Assign):
                trainer = self._tuned_trainer(node.value)
                if trainer is not None:
                    tuners.update((self._key(target), trainer) for target in node.targets if isinstance(target, ast.Name))
            else:
                self._call(node, lr_finds, fitted)
        for call in lr_finds:
            owner = call.func.value
            trainer = self._lookup(tuners, owner) if isinstance(owner, ast.Name) else self._tuned_trainer(owner)
            if trainer is None and isinstance(owner, ast.Attribute) and owner.attr == "tuner":
                trainer = owner.value  # 1.x: ``trainer.tuner.lr_find(...)``
            if trainer is not None and self._throw_away(trainer, fitted):
                continue  # the documented way out: the finder's Trainer is not the one that fits
            self.finders.append((call, f"{_own_code(call.func, call, ctx)}()", self._trainer_call(trainer)))
        for parent in every_node(tree):  # ``Trainer(callbacks=[LearningRateFinder()])``: that Trainer's
            if isinstance(parent, ast.Call) and lightning_name(ctx.imports, parent.func) == "Trainer":
                for callback in _callbacks_of(parent, self):
                    self.finders = [(n, w, parent if n is callback else t) for n, w, t in self.finders]

    def _key(self, name: ast.Name) -> tuple[int, str]:
        return self._scope.get(id(name), 0), name.id

    def _lookup(self, table: dict, name: ast.Name):
        """What ``table`` holds for the name in its scope, else for the module's name of it."""
        key = self._key(name)
        if key in table or key[0] == 0:
            return table.get(key)
        if key in self._bound:
            return None  # bound in its function otherwise: not the module's
        return table.get((0, name.id))

    def bound(self, name: ast.Name) -> ast.expr | None:
        return self._lookup(self._bound, name)

    def _trainer_call(self, trainer: ast.expr | None) -> ast.Call | None:
        """The ``Trainer(...)`` call ``trainer`` is (a call, or a name bound once to one), else None."""
        if isinstance(trainer, ast.Name):
            trainer = self.bound(trainer)
        if isinstance(trainer, ast.Call) and lightning_name(self.ctx.imports, trainer.func) == "Trainer" and id(trainer) in self._devices:
            return trainer
        return None

    def devices_of(self, trainer: ast.Call) -> str | None:
        """How a Trainer's ``devices`` reads when it may be several; None for one device."""
        return self._devices.get(id(trainer))

    def _call(self, node: ast.Call, lr_finds: list[ast.Call], fitted: set[str]) -> None:
        func = node.func
        short = lightning_name(self.ctx.imports, func)
        if short == "LearningRateFinder":
            self.finders.append((node, "the LearningRateFinder callback", None))
        elif isinstance(func, ast.Attribute) and func.attr == "lr_find":
            lr_finds.append(node)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr in FITTING:
            fitted.add(self._key(func.value))
        if short == "Trainer":
            auto = keyword(node, "auto_lr_find")
            devices = keyword(node, "devices") or keyword(node, "gpus")
            described = _several(devices, self.ctx) if devices is not None else "devices=\"auto\" (all available)"
            nodes = keyword(node, "num_nodes")
            if described is None and nodes is not None and not (isinstance(nodes.value, ast.Constant) and nodes.value.value == 1):
                described = f"num_nodes={_keyword_value_code(nodes, self.ctx)}"  # one device per node, several nodes
            accelerator = keyword(node, "accelerator")
            if accelerator is not None and string_value(accelerator.value) == "cpu" and keyword(node, "gpus") is None:
                described = None  # CPU processes sync over gloo, which takes CPU tensors: PL#19813 needs NCCL
            self._devices[id(node)] = described
            if auto is not None and not (isinstance(auto.value, ast.Constant) and auto.value.value is False):
                self.finders.append((auto, "Trainer(auto_lr_find=...)", node))
            if described:
                self.multi_device_trainers.append((node, described))

    def _tuned_trainer(self, node: ast.expr) -> ast.expr | None:
        """The trainer of ``Tuner(trainer)``."""
        if isinstance(node, ast.Call) and lightning_name(self.ctx.imports, node.func) == "Tuner":
            arg = keyword(node, "trainer")
            if arg is not None:
                return arg.value
            return next((a for a in node.args if not isinstance(a, ast.Starred)), None)
        return None

    def _throw_away(self, trainer: ast.expr, fitted: set[str]) -> bool:
        if isinstance(trainer, ast.Call):
            return lightning_name(self.ctx.imports, trainer.func) == "Trainer"
        return isinstance(trainer, ast.Name) and self._key(trainer) not in fitted and (0, trainer.id) not in fitted


def _scopes(tree: ast.Module) -> dict[int, int]:
    """id of each node -> id of the function it runs in (0: the module). A nested function's own."""
    found: dict[int, int] = {}
    pending: list[tuple[ast.AST, int]] = [(tree, 0)]
    while pending:
        node, scope = pending.pop()
        inner = id(node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else scope
        for child in ast.iter_child_nodes(node):
            found[id(child)] = inner
            pending.append((child, inner))
    return found


def _callbacks_of(trainer: ast.Call, scan: _Scan) -> list[ast.AST]:
    """The calls in a Trainer's ``callbacks=`` list (written there, or in a list bound once to the
    name it passes)."""
    given = keyword(trainer, "callbacks")
    value = given.value if given is not None else None
    if isinstance(value, ast.Name):
        value = scan.bound(value)
    if not isinstance(value, (ast.List, ast.Tuple)):
        return []
    return [element for element in value.elts if isinstance(element, ast.Call)]


def _several(devices: ast.keyword, ctx: RuleContext) -> str | None:
    """How the ``devices`` value reads, when it may mean more than one device."""
    value = devices.value
    code = f"devices={_keyword_value_code(devices, ctx)}"
    if isinstance(value, ast.Constant) and type(value.value) is int:  # not a bool: LibCST's ``Integer``
        return None if value.value == 1 else code
    text = string_value(value)
    if text is not None:
        return None if text.strip() in ("1", "0,", "1,") else code
    if isinstance(value, (ast.List, ast.Tuple)):
        return None if len(value.elts) == 1 else code
    return code


def _keyword_value_code(keyword: ast.keyword, ctx: RuleContext) -> str:
    """LibCST's code of a keyword's value: with the parentheses around it, which ``ast`` leaves out
    of the value's range (not of the keyword's)."""
    view, text = ctx.view, ctx.view.text
    start, value_start, end = tree_text.start(keyword, view), tree_text.start(keyword.value, view), tree_text.end(keyword, view)
    equal = text.index("=", start)
    opening = _first_paren(text, equal + 1, value_start)
    return _code(ctx, keyword, opening if opening is not None else value_start, end)


def _code(ctx: RuleContext, node: ast.AST, first: int, stop: int) -> str:
    """The code between two offsets around ``node`` as LibCST prints it (``tree_text.code_between``)."""
    if not tree_text.LINE_BREAK.search(ctx.view.text, first, stop):
        return ctx.view.text[first:stop]
    return tree_text.code_between(ctx.view, first, stop, tree_text.statement_of(ctx.view.tree, node))


def _own_code(func: ast.expr, call: ast.Call, ctx: RuleContext) -> str:
    """LibCST's code of a call's callee: ``(tuner.lr_find)`` keeps the parentheses, which open
    where the call starts and which ``ast`` leaves out of the callee's range."""
    view, text = ctx.view, ctx.view.text
    call_start, func_start, end = tree_text.start(call, view), tree_text.start(func, view), tree_text.end(func, view)
    opened = sum(line.split("#", 1)[0].count("(") for line in text[call_start:func_start].splitlines())
    while opened:  # as many closing as opening ones, around the callee
        end = _after_blanks(text, end)
        if text[end:end + 1] != ")":
            break
        opened -= 1
        end += 1
    return _code(ctx, call, call_start, end)


def _first_paren(text: str, start: int, stop: int) -> int | None:
    """Where the first ``(`` between ``start`` and ``stop`` stands, comments left out."""
    position = _after_blanks(text, start)
    return position if position < stop and text[position] == "(" else None


_LINE_END = lazy_compile(r"[\r\n]")


def _after_blanks(text: str, position: int) -> int:
    """The first place from ``position`` on that is not whitespace, a line continuation or a comment."""
    while position < len(text):
        char = text[position]
        if char == "#":
            end_of_line = _LINE_END.search(text, position)
            position = end_of_line.start() if end_of_line else len(text)
        elif char.isspace() or char == "\\":
            position += 1
        else:
            break
    return position
