"""DDP006 hardcoded-device: ``.cuda()``, ``.to("cuda")`` and device-less tensors in a LightningModule."""

from __future__ import annotations

import ast

import libcst as cst

from ddpfix.transforms._args import ReplaceCalls, keyword, with_keyword
from ddpfix.transforms._ast_shapes import imports_of, last_name, may_be, methods
from ddpfix.transforms._lightning import (
    TENSOR_FACTORIES,
    device_kind,
    lightning_methods,
    runs_on_device,
)
from ddpfix.transforms.base import Rule, RuleContext
from ddpfix.transforms._walk import walk

SELF_DEVICE = "self.device"


class HardcodedDevice(Rule):
    """
    # DDP006 hardcoded-device

    ## What it does
    In the methods of a LightningModule that run on the device (`forward`, `*_step`,
    `on_*_batch_*`, `on_*_epoch_*`, ...):
    - `x.cuda()`, `x.cuda(0)`, `x.to("cuda")`, `x.to("cuda:0")`, `x.to(torch.device("cuda"))`,
      `x.to(device="cuda")` become `x.to(self.device)`; other arguments (a dtype,
      `non_blocking=True`) are kept;
    - tensor factories (`torch.zeros/ones/empty/full/rand/randn/randint/arange/linspace/eye/tensor`)
      with a literal CUDA device get `device=self.device`, and so do those with no device at all.
    A `torch.device("cuda")` stored in a variable, and hard-coded moves in other methods, are
    reported.

    ## Why it breaks under DDP
    Rank N runs on `cuda:N`. `"cuda"` means `cuda:0` (the current device, which Lightning sets, but
    `"cuda:0"` and `.cuda(0)` do not follow it), and a tensor made without a device is on the CPU:
    "Expected all tensors to be on the same device". `self.device` is always the rank's device.

    ## Before
    ```python
    def training_step(self, batch, batch_idx):
        noise = torch.randn(batch.shape)
        mask = self.mask.cuda()
    ```

    ## After
    ```python
    def training_step(self, batch, batch_idx):
        noise = torch.randn(batch.shape, device=self.device)
        mask = self.mask.to(self.device)
    ```

    ## When it does not fix
    In `__init__`, `setup` and the other methods that run before the module is placed (there
    `self.device` is still the CPU; register tensors as buffers instead, see DDP007), in helper
    methods whose caller is unknown, and for a device stored in a variable: reported only. Plain
    PyTorch modules and scripts are not Lightning's business and are left alone.
    """

    code = "DDP006"
    name = "hardcoded-device"
    summary = "Hard-coded CUDA device or device-less tensor in a LightningModule: wrong device on rank N"
    fixable = True
    triggers = (("cuda", "torch."), "self")
    lightning_only = True
    module_only = True
    uses_facts = True

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """A method of some class calls ``.cuda(...)``, ``.to(<a literal or a call>)``, a torch
        factory with ``device=`` (or without one, in a hook that runs on the device), or assigns a
        ``torch.device(...)``: ``apply``'s cases, without asking which classes are LightningModules
        or what the device is. Lightning's own modules pass the trigger words and have none."""
        for _cls, method in methods(tree):
            on_device = runs_on_device(method.name)
            for node in ast.walk(method):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                    func = node.value.func
                    if last_name(func) == "device" or may_be(func, {"torch.device"}, imports_of(tree)):
                        return True
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr == "cuda":
                    return True
                if isinstance(func, ast.Attribute) and func.attr == "to":
                    device = next((k.value for k in node.keywords if k.arg == "device"), None)
                    if device is None and node.args and not isinstance(node.args[0], ast.Starred):
                        device = node.args[0]
                    if isinstance(device, (ast.Constant, ast.JoinedStr, ast.Call)):
                        return True
                    continue
                if may_be(func, TENSOR_FACTORIES, imports_of(tree)) and (on_device or any(k.arg == "device" for k in node.keywords)):
                    return True
        return False

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        replacements: dict[cst.Call, cst.Call] = {}
        for _cls, method in lightning_methods(module, ctx.imports, ctx.facts.lightning_modules):
            on_device = runs_on_device(method.name.value)
            for call in _calls(method):
                fixed, what = _rewrite(call, ctx, on_device)
                if what is None:
                    continue
                if fixed is None:
                    ctx.report(call, f"{what} in {method.name.value}: {_why(on_device)}", fixable=False)
                    continue
                message = f"{what} in {method.name.value}: on rank N the tensor must be on cuda:N; use self.device"
                if ctx.report_fix(call, message, call, fixed):
                    # Rebuilt from the updated call, so a fixed call nested inside this one stays fixed.
                    replacements[call] = lambda updated, ctx=ctx: _rewrite(updated, ctx, True)[0] or updated
            for assign, text in _device_variables(method, ctx):
                ctx.report(assign, f"{text} in {method.name.value}: moves to it put every rank's tensors on one GPU; "
                           "use self.device", fixable=False)
        return module.visit(ReplaceCalls(replacements, ctx.view.positions)) if replacements else module


def _why(on_device: bool) -> str:
    if on_device:
        return "the device is not a literal"
    return ("this method runs before Lightning places the module (or its caller is unknown), so self.device "
            "may still be the CPU here; create tensors as buffers (register_buffer) or move them in a *_step hook")


# A tensor used this way belongs on the CPU: .numpy(), .tolist()... of a factory's result.
CPU_CONSUMERS = frozenset({"numpy", "tolist", "item", "cpu"})
# Factory arguments that tie the result to the CPU.
CPU_ARGUMENTS = frozenset({"generator", "pin_memory", "out"})


def _calls(method: cst.FunctionDef) -> list[cst.Call]:
    """The calls of a method that may be about placement: not inside ``self.register_buffer(...)``
    (a buffer follows the module), not inside a ``with torch.device(...)`` block (the author chose
    the device there), not an index into another tensor, and not a tensor made for the CPU."""
    found: list[cst.Call] = []
    skipped: set[int] = set()

    class Collect(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> bool:
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "register_buffer":
                return False
            if isinstance(func, cst.Attribute) and func.attr.value in CPU_CONSUMERS and isinstance(func.value, cst.Call):
                skipped.add(id(func.value))
            if any(a.keyword is not None and a.keyword.value in CPU_ARGUMENTS for a in node.args):
                skipped.add(id(node))
            if id(node) not in skipped:
                found.append(node)
            return True

        def visit_With(self, node: cst.With) -> bool:
            return not any(
                isinstance(item.item, cst.Call) and cst.Module([]).code_for_node(item.item.func).endswith("device")
                for item in node.items
            )

        def visit_SubscriptElement(self, node: cst.SubscriptElement) -> bool:
            return False  # ``table[torch.arange(3)]``: an index follows the tensor it indexes

    walk(method.body, Collect())
    return [call for call in found if id(call) not in skipped]


def _rewrite(call: cst.Call, ctx: RuleContext, on_device: bool) -> tuple[cst.Call | None, str | None]:
    """(the fixed call or None, a description) for a hard-coded placement; (None, None) if there is none."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "cuda" and ctx.imports.qualify(func) is None:
        if any(arg.star for arg in call.args):
            return None, None
        kept = [a for a in call.args if a.keyword is not None and a.keyword.value == "non_blocking"]
        others = [a for a in call.args if a not in kept and not (a.keyword is None or a.keyword.value == "device")]
        if others:
            return None, None  # an argument we do not know: not the Tensor/Module.cuda we mean
        fixed = call.with_changes(func=func.with_changes(attr=cst.Name("to")), args=[])
        fixed = with_keyword(fixed, "__device__", SELF_DEVICE)
        fixed = _positional_device(fixed)
        for arg in kept:
            fixed = with_keyword(fixed, "non_blocking", cst.Module([]).code_for_node(arg.value))
        return (fixed if on_device else None), ".cuda()"
    if isinstance(func, cst.Attribute) and func.attr.value == "to" and ctx.imports.qualify(func) is None:
        device = keyword(call, "device")
        positional = [a for a in call.args if a.keyword is None]
        if device is None and positional and not positional[0].star:
            device = positional[0]
        if device is None or device_kind(device.value, ctx.imports) != "cuda":
            return None, None
        code = cst.Module([]).code_for_node(device.value)
        fixed = call.with_changes(args=[a.with_changes(value=cst.parse_expression(SELF_DEVICE)) if a is device else a for a in call.args])
        return (fixed if on_device else None), f".to({code})"
    qualified = ctx.imports.qualify(func)
    if qualified in TENSOR_FACTORIES:
        device = keyword(call, "device")
        name = qualified.split(".", 1)[1]
        if device is None:
            # Device-less tensors are only wrong where the module computes on its device.
            if not on_device or any(arg.star for arg in call.args) or keyword(call, "out") is not None:
                return None, None
            return with_keyword(call, "device", SELF_DEVICE), f"torch.{name}() without a device"
        if device_kind(device.value, ctx.imports) != "cuda":
            return None, None
        fixed = call.with_changes(args=[a.with_changes(value=cst.parse_expression(SELF_DEVICE)) if a is device else a for a in call.args])
        return (fixed if on_device else None), f"torch.{name}(device={cst.Module([]).code_for_node(device.value)})"
    return None, None


def _positional_device(call: cst.Call) -> cst.Call:
    """``x.to(__device__=self.device)`` -> ``x.to(self.device)`` (a placeholder keeps ``with_keyword``'s layout)."""
    args = [a.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT) if a.keyword is not None and a.keyword.value == "__device__" else a for a in call.args]
    return call.with_changes(args=args)


def _device_variables(method: cst.FunctionDef, ctx: RuleContext):
    """``device = torch.device("cuda")`` (or ``self.device_ = ...``) inside the method."""
    found = []

    class Collect(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            value = node.value
            if isinstance(value, cst.Call) and ctx.imports.qualify(value.func) == "torch.device" and device_kind(value, ctx.imports) == "cuda":
                found.append((node, f"{cst.Module([]).code_for_node(node.targets[0].target)} = torch.device(...) names a fixed CUDA device"))

    walk(method.body, Collect())
    return found
