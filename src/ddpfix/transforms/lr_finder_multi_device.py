"""DDP009 lr-finder-multi-device: the LR finder on several devices crashes Lightning before 2.4.0."""

from __future__ import annotations

import ast

import libcst as cst

from ddpfix.transforms._args import keyword
from ddpfix.transforms._ast_shapes import imports_of, last_name, resolved
from ddpfix.transforms._lightning import lightning_name, string_value
from ddpfix.transforms.base import Rule, RuleContext
from ddpfix.transforms._walk import walk


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
    """

    code = "DDP009"
    name = "lr-finder-multi-device"
    summary = "LR finder on several devices with Lightning < 2.4.0: 'No backend type associated with device type cpu'"
    fixable = False
    triggers = (("lr_find", "LearningRateFinder", "auto_lr_find"), "Trainer")
    lightning_only = True
    uses_facts = True

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """A call of something that may be a Trainer, and a finder: ``<x>.lr_find(...)``, something
        that may be ``LearningRateFinder(...)``, or a Trainer with ``auto_lr_find=``. Lightning's
        own tuner modules name both and call neither."""
        imported = imports_of(tree)

        def may_name(func: ast.expr, short: str) -> bool:
            return last_name(func) == short or any(full.rsplit(".", 1)[-1] == short for full in resolved(func, imported))

        trainer = finder = False
        for node in ast.walk(tree):
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

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        scan = _Scan(ctx)
        walk(module, scan)
        if not scan.finders or not scan.multi_device_trainers:
            return module
        pin = ctx.facts.pins.get(ctx.path) if ctx.path in ctx.facts.pins else _own_pin(ctx)
        if pin is not None and pin.verdict == "fixed":
            return module
        if pin is None:
            version = "the Lightning version could not be found (no pin, nothing installed); if it is below 2.4.0"
        elif pin.verdict == "affected":
            version = f"Lightning {pin.spec} ({pin.source}) is below 2.4.0, and"
        else:
            version = f"Lightning {pin.spec} ({pin.source}) allows versions below 2.4.0; with one of them"
        devices = scan.multi_device_trainers[0][1]
        for node, what in scan.finders:
            ctx.report(
                node,
                f"{what} with a Trainer on {devices}: {version} the first sync after the finder fails with "
                "\"RuntimeError: No backend type associated with device type cpu\" (PL#19813). Upgrade to "
                "lightning>=2.4.0, or run the finder on a separate throw-away Trainer and build a fresh Trainer for fit",
                fixable=False,
            )
        return module


def _own_pin(ctx: RuleContext):
    from ddpfix.facts import lightning_pin

    return lightning_pin(ctx.path)


class _Scan(cst.CSTVisitor):
    def __init__(self, ctx: RuleContext):
        super().__init__()
        self.ctx = ctx
        self.finders: list[tuple[cst.CSTNode, str]] = []
        self.multi_device_trainers: list[tuple[cst.Call, str]] = []
        self.lr_finds: list[cst.Call] = []
        self.tuners: dict[str, cst.BaseExpression] = {}  # tuner variable -> the trainer it tunes
        self.fitted: set[str] = set()  # trainer variables that run fit/validate/test/predict

    def visit_Assign(self, node: cst.Assign) -> None:
        trainer = self._tuned_trainer(node.value)
        if trainer is not None:
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self.tuners[target.target.value] = trainer

    def _tuned_trainer(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """The trainer of ``Tuner(trainer)``."""
        if isinstance(node, cst.Call) and lightning_name(self.ctx.imports, node.func) == "Tuner":
            arg = keyword(node, "trainer") or next((a for a in node.args if a.keyword is None and not a.star), None)
            return arg.value if arg is not None else None
        return None

    def leave_Module(self, original_node: cst.Module) -> None:
        for call in self.lr_finds:
            owner = call.func.value
            trainer = self.tuners.get(owner.value) if isinstance(owner, cst.Name) else self._tuned_trainer(owner)
            if trainer is not None and self._throw_away(trainer):
                continue  # the documented way out: the finder's Trainer is not the one that fits
            self.finders.append((call, f"{cst.Module([]).code_for_node(call.func)}()"))
    def _throw_away(self, trainer: cst.BaseExpression) -> bool:
        if isinstance(trainer, cst.Call):
            return lightning_name(self.ctx.imports, trainer.func) == "Trainer"
        return isinstance(trainer, cst.Name) and trainer.value not in self.fitted

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        short = lightning_name(self.ctx.imports, func)
        if short == "LearningRateFinder":
            self.finders.append((node, "the LearningRateFinder callback"))
        elif isinstance(func, cst.Attribute) and func.attr.value == "lr_find":
            self.lr_finds.append(node)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in FITTING:
            self.fitted.add(func.value.value)
        if short == "Trainer":
            auto = keyword(node, "auto_lr_find")
            if auto is not None and not (isinstance(auto.value, cst.Name) and auto.value.value == "False"):
                self.finders.append((auto, "Trainer(auto_lr_find=...)"))
            devices = keyword(node, "devices") or keyword(node, "gpus")
            described = _several(devices.value) if devices is not None else "devices=\"auto\" (all available)"
            if described:
                self.multi_device_trainers.append((node, described))


FITTING = frozenset({"fit", "validate", "test", "predict"})


def _several(value: cst.BaseExpression) -> str | None:
    """How the ``devices`` value reads, when it may mean more than one device."""
    code = cst.Module([]).code_for_node(value)
    if isinstance(value, cst.Integer):
        return None if value.evaluated_value == 1 else f"devices={code}"
    if isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Integer):
        return f"devices={code}"  # -1: all of them
    text = string_value(value)
    if text is not None:
        return None if text.strip() in ("1", "0,", "1,") else f"devices={code}"
    if isinstance(value, (cst.List, cst.Tuple)):
        return None if len(value.elements) == 1 else f"devices={code}"
    return f"devices={code}"
