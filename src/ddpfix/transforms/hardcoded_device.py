"""DDP006 hardcoded-device: ``.cuda()``, ``.to("cuda")`` and device-less tensors in a LightningModule."""

from __future__ import annotations

import ast
import re

import libcst as cst

from ddpfix.transforms import _tree_lightning as tree_lightning
from ddpfix.transforms import _hardcoded_device_safety as safety
from ddpfix.transforms import _tree_text as tree_text
from ddpfix.transforms._args import ReplaceCalls, keyword, with_keyword
from ddpfix.transforms._ast_shapes import imports_of, last_name, may_be, methods
from ddpfix.transforms._lightning import (
    TENSOR_FACTORIES,
    device_kind,
    lightning_methods,
    runs_on_device,
)
from ddpfix.transforms._walk import walk
from ddpfix.transforms.base import NeedsLibCST, Rule, RuleContext

SELF_DEVICE = "self.device"


class HardcodedDevice(Rule):
    """
    # DDP006 hardcoded-device

    ## What it does
    In the methods of a LightningModule that run on the device (`forward`, `*_step`,
    `on_*_batch_*`, `on_*_epoch_*`, `on_after_batch_transfer`, ...):
    - `x.cuda()`, `x.cuda(0)`, `x.to("cuda")`, `x.to("cuda:0")`, `x.to(torch.device("cuda"))`,
      `x.to(device="cuda")` become `x.to(self.device)`; other arguments (a dtype,
      `non_blocking=True`) are kept;
    - tensor factories (`torch.zeros/ones/empty/full/rand/randn/randint/arange/linspace/eye/tensor`)
      with a literal CUDA device get `device=self.device`, and so do those with no device at all.
    A `torch.device("cuda")` stored in a variable, and hard-coded moves in other methods, are
    reported. A device-less factory whose tensor is moved right away
    (`torch.tensor(x).to(self.device)`, `torch.arange(n).float().cuda()`) or used on the CPU at once
    (`.numpy()`, `.tolist()`, `.item()`, `.cpu()`, `.pin_memory()`, `generator=`, an index) is not
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

    ## Fix safety
    - **unsafe**, every fix of a file that names a CUDA device other than 0 (`"cuda:1"`, `.cuda(1)`,
      `.to(1)`, `torch.device("cuda", 1)`): that is model parallelism, and one `self.device` would
      move its parts onto a single GPU.
    - A literal device replaced by `self.device` (`.to("cuda")`, `.to("cuda:0")`, `.to(0)`,
      `device="cuda"` in a factory): **safe** only in a file that builds a Trainer (or Fabric) and
      every one it builds has a literal DDP strategy and `devices` left out, `"auto"`, `-1`, a literal
      count, or the indices 0..n-1 in order (`[0, 1]`, `"0,1"`). There rank N runs on `cuda:N`, rank
      0's `self.device` is the device the literal names and on rank N the literal was the failure.
      Elsewhere **unsafe**: with `devices=[1]` or `[2, 3]` (or a value ddpfix cannot read) rank 0's
      `self.device` is not `cuda:0`, and a fixed GPU may be the one meant (a teacher model kept on
      GPU 0); in one process a fixed GPU may be the one meant, and a file without the Trainer does
      not say how its module runs.
    - `.cuda(...)` rebuilt as `.to(self.device)`: as above, and **safe** only when its receiver is a
      tensor factory's result; an unknown receiver's `.to()` may not be `.cuda()`'s twin.
    - `device=self.device` added to a device-less factory: **unsafe** for the random factories
      (`rand`, `randn`, `randint`: with a device they draw from that device's generator, other
      numbers, and later CPU draws shift). For the others **safe** only where all of these hold:
      - the file's Trainers are DDP ones on GPUs 0..n-1, as for a literal device above (a file
        without a Trainer, or with an MPS one, does not say the device is a rank's GPU);
      - the tensor's dtype is known not to be float64, which MPS cannot hold: `dtype=` a known
        dtype other than float64 (and complex), or none with `zeros`/`ones`/`empty`/`eye`, number
        literals in `tensor`/`full`, ints (literals, `.shape[i]`, `.size(i)`, `len(...)`) or
        number literals in `arange`/`linspace`, and the file does not change the default dtype.
        A value ddpfix cannot see (`torch.tensor(np.sqrt(d))` is float64) or
        `dtype=torch.float64`: **unsafe**;
      - every use of the tensor (the call itself, or a local name bound to it once) is
        `+ - * / @` with a tensor of the batch Lightning moved to the device (the step hook's batch
        parameter, names bound once from it, items of those). A CPU tensor there either fails or,
        0-dimensional, gives the same result as one on the device. Any other use (indexing,
        `.numpy()`, a library call such as scikit-learn, a return value, a call of a submodule) may
        want the CPU: **unsafe**.
    - A call with a comment inside that the rewrite would lose or repeat: no fix (reported).

    ## When it does not fix
    In `__init__`, `setup` and the other methods that run before the module is placed (there
    `self.device` is still the CPU; register tensors as buffers instead, see DDP007), in helper
    methods whose caller is unknown, and for a device stored in a variable: reported only. In
    `on_before_batch_transfer` the batch is still on the CPU: a hard-coded move there is reported
    (leave the move to Lightning, or make it in `on_after_batch_transfer`), and device-less factories
    are right and not reported. Plain PyTorch modules and scripts are not Lightning's business and
    are left alone.
    """

    code = "DDP006"
    name = "hardcoded-device"
    summary = "Hard-coded CUDA device or device-less tensor in a LightningModule: wrong device on rank N"
    fixable = True
    # "torch", not "torch.": ``from torch import arange`` names a factory with neither word.
    triggers = (("cuda", "torch", ".to("), "self")  # ``.to(0)``: an ordinal is a GPU
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
            on_device = _on_device(method.name.value)
            for call in _calls(method, ctx):
                fixed, what = _rewrite(call, ctx, on_device)
                if what is None:
                    continue
                if fixed is None:
                    ctx.report(call, f"{what} in {method.name.value}: {_why(method.name.value)}", fixable=False)
                    continue
                message = f"{what} in {method.name.value}: on rank N the tensor must be on cuda:N; use self.device"
                if ctx.report_fix(call, message, call, fixed):
                    # Rebuilt from the updated call, so a fixed call nested inside this one stays fixed.
                    replacements[call] = lambda updated, ctx=ctx: _rewrite(updated, ctx, True)[0] or updated
            for assign, text in _device_variables(method, ctx):
                ctx.report(assign, f"{text} in {method.name.value}: moves to it put every rank's tensors on one GPU; "
                           "use self.device", fixable=False)
        return module.visit(ReplaceCalls(replacements, ctx.view.positions)) if replacements else module

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """``apply``'s findings, from CPython's tree (report-only runs). Whether a fix keeps the
        call's comments (``report_fix``) is read from where they stand. Raises ``NeedsLibCST`` where
        the text cannot say what LibCST's tree would: an argument or a target in parentheses of its
        own (LibCST's code of it has them), a comment both lost and repeated by a fix, a finding
        inside an f-string, a string or line continuation over several lines quoted in a message,
        and identifiers that Python renames (NFKC)."""
        ddp = safety.ddp_file_why(tree, ctx.imports)
        default_dtype_changed = safety.sets_default_dtype(tree)
        ordinals = safety.other_ordinals(tree)
        for _cls, method in tree_lightning.lightning_methods(tree, ctx.imports, ctx.facts.lightning_modules):
            on_device = _on_device(method.name)
            facts = safety.MethodFacts(method) if on_device else None
            for call, statement, in_fstring in _tree_calls(method, ctx):
                what, edited = _tree_placement(call, statement, ctx, on_device)
                if what is None:
                    continue
                if in_fstring:
                    raise NeedsLibCST("a finding inside an f-string")
                if edited is None:
                    ctx.report(call, f"{what} in {method.name}: {_why(method.name)}", fixable=False)
                    continue
                message = f"{what} in {method.name}: on rank N the tensor must be on cuda:N; use self.device"
                if _tree_fix_loses_comment(call, edited, ctx):
                    ctx.report(call, message + " (not rewritten: a comment inside the call would be lost)", fixable=False)
                else:
                    safe, why = _tree_safety(call, edited, facts, ddp, ordinals, ctx, default_dtype_changed)
                    ctx.report(call, message, fixable=True, safe=safe, why=why)
            for assign, text in _tree_device_variables(method, ctx):
                ctx.report(assign, f"{text} in {method.name}: moves to it put every rank's tensors on one GPU; "
                           "use self.device", fixable=False)


# Hooks whose names look like device hooks but that get the batch while it is still on the CPU.
CPU_DATA_HOOKS = frozenset({"on_before_batch_transfer"})


def _on_device(method_name: str) -> bool:
    """Lightning calls this hook with the module, and the batch, on the rank's device."""
    return runs_on_device(method_name) and method_name not in CPU_DATA_HOOKS


def _why(method_name: str) -> str:
    if method_name in CPU_DATA_HOOKS:
        return (f"{method_name} runs while the batch is still on the CPU, before Lightning moves it to the rank's "
                "device: leave the move to Lightning (or make it in on_after_batch_transfer)")
    return ("this method runs before Lightning places the module (or its caller is unknown), so self.device "
            "may still be the CPU here; create tensors as buffers (register_buffer) or move them in a *_step hook")


# A tensor used this way belongs on the CPU: .numpy(), .tolist()... of a factory's result.
CPU_CONSUMERS = frozenset({"numpy", "tolist", "item", "cpu", "pin_memory"})
# Factory arguments that tie the result to the CPU.
CPU_ARGUMENTS = frozenset({"generator", "pin_memory", "out"})
# Methods between a factory and a move that keep the tensor where it is: ``torch.tensor(x).float().to(d)``.
KEEPS_PLACE = frozenset({"float", "half", "double", "bfloat16", "long", "int", "bool", "contiguous", "detach",
                         "clone", "t", "unsqueeze", "squeeze", "view", "reshape", "flatten", "requires_grad_"})


def _calls(method: cst.FunctionDef, ctx: RuleContext) -> list[cst.Call]:
    """The calls of a method that may be about placement: not inside ``self.register_buffer(...)``
    (a buffer follows the module), not inside a ``with torch.device(...)`` block (the author chose
    the device there), not an index into another tensor, not a tensor made for the CPU, and not a
    device-less factory whose tensor is moved right away (``torch.tensor(x).to(self.device)``)."""
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
            moved = _moved_factory(node, ctx)
            if moved is not None:
                skipped.add(id(moved))
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


def _moved_factory(call: cst.Call, ctx: RuleContext) -> cst.Call | None:
    """The device-less factory call that ``call`` moves to a device (``.cuda(...)``, or ``.to(...)``
    with a device), through methods that keep the tensor's place; None if there is none."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in ("to", "cuda"):
        return None
    if func.attr.value == "to":
        device = keyword(call, "device")
        positional = [a for a in call.args if a.keyword is None]
        if device is None and positional and not positional[0].star:
            device = positional[0]
        if device is None or not _names_a_device(device.value, ctx):
            return None
    receiver = func.value
    while (isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute)
           and receiver.func.attr.value in KEEPS_PLACE):
        receiver = receiver.func.value
    if (isinstance(receiver, cst.Call) and ctx.imports.qualify(receiver.func) in TENSOR_FACTORIES
            and keyword(receiver, "device") is None):
        return receiver
    return None


def _names_a_device(value: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A literal device, ``<x>.device``, or a name ending in ``device``: not a dtype or a tensor."""
    if isinstance(value, cst.Attribute):
        return value.attr.value == "device"
    if isinstance(value, cst.Name):
        return value.value.endswith("device")
    return device_kind(value, ctx.imports) != "unknown"


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


# --- the same, on CPython's tree (``check``) ---------------------------------------------------

# What a fix of ``_rewrite`` edits: ``.cuda(...)`` rebuilt as ``.to(self.device, ...)``, a
# ``device=self.device`` appended, or one argument's value (an ``ast`` node, replaced by ``self.device``).
REBUILT = "rebuilt"
APPENDED = "appended"


def _tree_calls(method: ast.FunctionDef | ast.AsyncFunctionDef, ctx: RuleContext):
    """``_calls`` on CPython's tree: (call, the statement it is in, whether it is inside an
    f-string) for the same calls, in LibCST's order (pre-order, source order)."""
    found: list[tuple[ast.Call, ast.stmt, bool]] = []
    skipped: set[int] = set()
    pending: list[tuple[ast.AST, ast.stmt, bool]] = [(s, s, False) for s in reversed(method.body)]
    while pending:
        node, statement, in_fstring = pending.pop()
        children = list(ast.iter_child_nodes(node))
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "register_buffer":
                continue
            if isinstance(func, ast.Attribute) and func.attr in CPU_CONSUMERS and isinstance(func.value, ast.Call):
                skipped.add(id(func.value))
            if any(k.arg in CPU_ARGUMENTS for k in node.keywords):
                skipped.add(id(node))
            moved = _tree_moved_factory(node, ctx)
            if moved is not None:
                skipped.add(id(moved))
            found.append((node, statement, in_fstring))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            if any(isinstance(item.context_expr, ast.Call) and _tree_names_a_device(item.context_expr, ctx)
                   for item in node.items):
                continue
        elif isinstance(node, ast.Subscript):
            children = [node.value]  # ``table[torch.arange(3)]``: an index follows the tensor it indexes
        in_fstring = in_fstring or isinstance(node, ast.JoinedStr)
        pending.extend((child, child if isinstance(child, ast.stmt) else statement, in_fstring)
                       for child in reversed(children))
    calls = [entry for entry in found if id(entry[0]) not in skipped]
    # LibCST visits in source order; ``ast`` keeps positional and keyword arguments apart.
    return sorted(calls, key=lambda e: (e[0].lineno, e[0].col_offset, -e[0].end_lineno, -e[0].end_col_offset))


def _tree_moved_factory(call: ast.Call, ctx: RuleContext) -> ast.Call | None:
    """``_moved_factory`` on CPython's tree."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in ("to", "cuda"):
        return None
    if func.attr == "to":
        device = tree_lightning.keyword(call, "device")
        if device is not None:
            value = device.value
        elif call.args and not isinstance(call.args[0], ast.Starred):
            value = call.args[0]
        else:
            return None
        if not _tree_value_names_a_device(value, ctx):
            return None
    receiver = func.value
    while (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute)
           and receiver.func.attr in KEEPS_PLACE):
        receiver = receiver.func.value
    if (isinstance(receiver, ast.Call) and ctx.imports.qualify(receiver.func) in TENSOR_FACTORIES
            and tree_lightning.keyword(receiver, "device") is None):
        return receiver
    return None


def _tree_value_names_a_device(value: ast.expr, ctx: RuleContext) -> bool:
    """``_names_a_device`` on CPython's tree."""
    if isinstance(value, ast.Attribute):
        return value.attr == "device"
    if isinstance(value, ast.Name):
        return value.id.endswith("device")
    return tree_lightning.device_kind(value, ctx.imports, ctx.view.positions.segment) != "unknown"


def _tree_safety(call: ast.Call, edited: object, facts, ddp: str | None, ordinals: list[int],
                 ctx: RuleContext, default_dtype_changed: bool) -> tuple[bool, str]:
    """(whether the fix is proven to change nothing but the failure, what was not proven).
    ``ddp``: None where every Trainer of the file is a literal DDP one on GPUs 0..n-1
    (``_hardcoded_device_safety.ddp_file_why``), else why not."""
    if ordinals:
        return False, (f"the file names CUDA device {ordinals[0]}: model parallelism, which one self.device "
                       "would move to a single GPU")
    if edited is APPENDED:
        qualified = ctx.imports.qualify(call.func)
        if qualified in safety.RANDOM_FACTORIES:
            return False, ("with a device it draws from that device's generator instead of the CPU's: other "
                           "numbers, and later CPU draws shift")
        if qualified not in safety.DETERMINISTIC_FACTORIES:
            return False, "the factory is not known to give the same values on every device"
        if ddp is not None:
            return False, ddp
        why = safety.dtype_why(call, qualified, ctx.imports, default_dtype_changed)
        if why is not None:
            return False, why
        return facts.factory_uses_are_math(call)
    if ddp is not None:
        return False, ddp
    if edited is REBUILT:
        receiver = call.func.value
        if not (isinstance(receiver, ast.Call) and ctx.imports.qualify(receiver.func) in TENSOR_FACTORIES):
            return False, "the receiver of .cuda() is not known to be a tensor (its .to() may differ)"
    return True, ""


def _tree_names_a_device(call: ast.Call, ctx: RuleContext) -> bool:
    """``with torch.device(...)``: ``_calls``'s test that the code of the called expression ends
    with ``device``. LibCST's code of a parenthesised ``(torch.device)`` ends with ``)``."""
    if not ctx.view.positions.segment(call.func).endswith("device"):
        return False
    after = ctx.view.text[tree_text.end(call.func, ctx.view):tree_text.end(call, ctx.view)].lstrip()
    if after.startswith("("):
        return True
    if after.startswith(")"):
        return False
    raise NeedsLibCST("a comment or a continuation after the called expression of a with item")


def _tree_placement(call: ast.Call, statement: ast.stmt, ctx: RuleContext, on_device: bool) -> tuple[str | None, object]:
    """``_rewrite`` on CPython's tree: (the description, what its fix edits: ``REBUILT``, ``APPENDED``, the
    value node it replaces, or None where there is no fix); (None, None) if there is no finding."""
    func, imports = call.func, ctx.imports
    segment = ctx.view.positions.segment
    if isinstance(func, ast.Attribute) and func.attr == "cuda" and imports.qualify(func) is None:
        if tree_lightning.has_star(call):
            return None, None
        if any(k.arg not in ("non_blocking", "device") for k in call.keywords):
            return None, None  # an argument we do not know: not the Tensor/Module.cuda we mean
        return ".cuda()", (REBUILT if on_device else None)
    if isinstance(func, ast.Attribute) and func.attr == "to" and imports.qualify(func) is None:
        device = tree_lightning.keyword(call, "device")
        if device is None and call.args and not isinstance(call.args[0], ast.Starred):
            value = call.args[0]
        elif device is not None:
            value = device.value
        else:
            return None, None
        if tree_lightning.device_kind(value, imports, segment) != "cuda":
            return None, None
        if device is not None:
            tree_text.keyword_value(device, ctx.view)
        elif tree_text.squeezed(ctx.view, tree_text.end(func, ctx.view), tree_text.start(value, ctx.view)) != "(":
            raise NeedsLibCST("a first argument in its own parentheses")
        return f".to({tree_text.quoted(value, statement, ctx.view)})", (value if on_device else None)
    qualified = imports.qualify(func)
    if qualified in TENSOR_FACTORIES:
        device = tree_lightning.keyword(call, "device")
        name = qualified.split(".", 1)[1]
        if device is None:
            # Device-less tensors are only wrong where the module computes on its device.
            if not on_device or tree_lightning.has_star(call) or tree_lightning.keyword(call, "out") is not None:
                return None, None
            return f"torch.{name}() without a device", APPENDED
        if tree_lightning.device_kind(device.value, imports, segment) != "cuda":
            return None, None
        code = tree_text.quoted(tree_text.keyword_value(device, ctx.view), statement, ctx.view)
        return f"torch.{name}(device={code})", (device.value if on_device else None)
    return None, None


def _tree_fix_loses_comment(call: ast.Call, edited: object, ctx: RuleContext) -> bool:
    """Whether ``report_fix`` would find the comments of the fixed call changed (lost or repeated)."""
    if edited is REBUILT:
        lost, repeated = _tree_rebuild_comments(call, ctx)
        if lost and repeated:
            raise NeedsLibCST("a comment lost and one repeated: whether the two cancel is LibCST's to say")
        return lost or repeated
    if edited is APPENDED:
        return _tree_append_repeats_comment(call, ctx)
    return tree_lightning.has_comment(edited, ctx.view)  # a replaced value takes its comments along


def _tree_rebuild_comments(call: ast.Call, ctx: RuleContext) -> tuple[bool, bool]:
    """(a comment lost, a comment repeated) when ``_rewrite`` rebuilds ``x.cuda(...)``: every
    argument goes, with its commas and the whitespace up to ``)``; a ``non_blocking`` value comes
    back from its code, and ``with_keyword`` separates it with a copy of the whitespace after ``(``."""
    arguments = tree_lightning.arguments_in_order(call)
    if not arguments:
        return False, False
    opened = _tree_open_paren(call, ctx)
    first, closing = tree_text.start(arguments[0], ctx.view), tree_text.end(call, ctx.view) - 1
    if tree_text.squeezed(ctx.view, opened, first):
        raise NeedsLibCST("a first argument in its own parentheses")
    non_blocking = tree_lightning.keyword(call, "non_blocking")
    if non_blocking is None:
        return tree_text.comment_in(ctx.view, first, closing), False
    value = tree_text.keyword_value(non_blocking, ctx.view)  # the code LibCST re-parses, comments and all
    lost = (tree_text.comment_in(ctx.view, first, tree_text.start(value, ctx.view))
            or tree_text.comment_in(ctx.view, tree_text.end(value, ctx.view), closing))
    return lost, tree_text.comment_in(ctx.view, opened, first)


def _tree_append_repeats_comment(call: ast.Call, ctx: RuleContext) -> bool:
    """Whether ``with_keyword`` repeats a comment when it appends ``device=``: it separates the new
    argument with a copy of the whitespace before the last one (after the previous comma, or after
    ``(``), and after a trailing comma it repeats what stood between the last value and that comma."""
    arguments = tree_lightning.arguments_in_order(call)
    if not arguments:
        return False
    last = arguments[-1]
    if len(arguments) > 1:
        separator = _tree_comma(ctx, tree_text.end(arguments[-2], ctx.view), tree_text.start(last, ctx.view)) + 1
    else:
        separator = _tree_open_paren(call, ctx)
    if tree_text.squeezed(ctx.view, separator, tree_text.start(last, ctx.view)):
        raise NeedsLibCST("a last argument in its own parentheses")
    if tree_text.comment_in(ctx.view, separator, tree_text.start(last, ctx.view)):
        return True
    after, closing = tree_text.end(last, ctx.view), tree_text.end(call, ctx.view) - 1
    trailing = tree_text.squeezed(ctx.view, after, closing)
    if trailing == "":
        return False
    if trailing != ",":
        raise NeedsLibCST("a last argument in its own parentheses")
    return tree_text.comment_in(ctx.view, after, _tree_comma(ctx, after, closing))


def _tree_open_paren(call: ast.Call, ctx: RuleContext) -> int:
    """The offset just after the ``(`` that opens the call's arguments."""
    end = tree_text.end(call.func, ctx.view)
    rest = ctx.view.text[end:tree_text.end(call, ctx.view)]
    if not rest.lstrip().startswith("("):
        raise NeedsLibCST("a comment, a continuation or a parenthesis after the called expression")
    return end + len(rest) - len(rest.lstrip()) + 1


def _tree_comma(ctx: RuleContext, start: int, stop: int) -> int:
    """The offset of the one comma between two arguments (or after the last), comments aside."""
    if tree_text.squeezed(ctx.view, start, stop) != ",":
        raise NeedsLibCST("parentheses around an argument")
    offset = start
    for line in re.split(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)", ctx.view.text[start:stop]):
        code = line.split("#", 1)[0]
        if "," in code:
            return offset + code.index(",")
        offset += len(line)
    raise NeedsLibCST("no comma found")  # not reached: the squeezed text had one


def _tree_device_variables(method: ast.FunctionDef | ast.AsyncFunctionDef, ctx: RuleContext):
    """``_device_variables`` on CPython's tree: ``device = torch.device("cuda")`` in the method."""
    found = []
    segment = ctx.view.positions.segment
    for statement in method.body:
        for node in ast.walk(statement):
            if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
                continue
            value = node.value
            if ctx.imports.qualify(value.func) != "torch.device" or tree_lightning.device_kind(value, ctx.imports, segment) != "cuda":
                continue
            target = node.targets[0]
            if (target.lineno, target.col_offset) != (node.lineno, node.col_offset):
                raise NeedsLibCST("an assignment target in its own parentheses")  # LibCST's code has them
            found.append((node, f"{tree_text.quoted(target, node, ctx.view)} = torch.device(...) names a fixed CUDA device"))
    # LibCST's walk is in source order; ``ast.walk`` is breadth first.
    return sorted(found, key=lambda pair: (pair[0].lineno, pair[0].col_offset))

