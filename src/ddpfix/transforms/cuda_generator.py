"""DDP002 cuda-generator: CUDA generators handed to data loading become CPU generators."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from ddpfix.transforms._args import ReplaceCalls, comments
from ddpfix.transforms._ast_shapes import last_name
from ddpfix.transforms import _cuda_generator_safety as _safety
from ddpfix.transforms import _tree_lightning
from ddpfix.transforms._lightning import device_kind
from ddpfix.transforms.base import NeedsLibCST, Rule, RuleContext
from ddpfix.transforms._text import GAP, aliased, pattern, word_match
from ddpfix.transforms._walk import walk

GENERATOR = frozenset({"torch.Generator", "torch._C.Generator"})
DATA_PACKAGE = "torch.utils.data."
# Data-loading callables that take a generator, with the position of ``generator`` when passed
# positionally.
GENERATOR_POSITION = {
    "DataLoader": 12,
    "RandomSampler": 3,
    "SubsetRandomSampler": 1,
    "WeightedRandomSampler": 3,
    "random_split": 2,
}
# Data loading that draws with the generator on the CPU whatever the generator, so that a CUDA
# generator can only fail there (under a CPU default device). ``WeightedRandomSampler`` draws on its
# weights' device, which may be CUDA.
CPU_DRAWS = frozenset({"DataLoader", "RandomSampler", "SubsetRandomSampler", "random_split"})
# Calls on a generator variable that make no difference to whether it may live on the CPU
# (``manual_seed`` also returns the generator, so it counts only as a statement of its own).
READ_ONLY_METHODS = frozenset({"seed", "initial_seed"})
_GENERATOR_WITH_ARGUMENTS = pattern("Generator", GAP + rb"\((?!" + GAP + rb"\))")


class CudaGenerator(Rule):
    """
    # DDP002 cuda-generator

    ## What it does
    Finds `torch.Generator` objects created on a CUDA device that are handed to data loading —
    the `generator=` of `DataLoader`, `RandomSampler`, `SubsetRandomSampler`,
    `WeightedRandomSampler` or `random_split` — directly, through `.manual_seed(n)`, through a
    variable (also one bound with `:=`), a parameter's default value, or an attribute
    (`self.gen = torch.Generator(device="cuda")` in a DataModule, used later as `generator=self.gen`),
    and makes them CPU generators. The seed is kept.

    ## Why it breaks under DDP
    Samplers draw shuffle indices with `torch.randperm(n, generator=g)` on the CPU. A CUDA generator
    makes that fail with "Expected a 'cpu' device type for generator but found 'cuda'"; on a
    CPU-only build creating it already fails. Under DDP Lightning replaces a `RandomSampler` with a
    `DistributedSampler` seeded from `seed_everything`, so the generator buys nothing there either.

    The other way round: where the default device is CUDA (`torch.set_default_device("cuda")`,
    `torch.set_default_tensor_type("torch.cuda.FloatTensor")`, a `with torch.device("cuda"):` block,
    Lightning's `init_module()`), samplers draw on CUDA, a CUDA generator is what works there, and a
    CPU one fails with "Expected a 'cuda' device type for generator but found 'cpu'". Then the
    generator and the default-device switch must change together: the finding names both.

    ## Before
    ```python
    g = torch.Generator(device="cuda")
    g.manual_seed(42)
    loader = DataLoader(dataset, shuffle=True, generator=g)
    ```

    ## After
    ```python
    g = torch.Generator()
    g.manual_seed(42)
    loader = DataLoader(dataset, shuffle=True, generator=g)
    ```

    ## Fix safety
    The fix (drop the device argument) is **safe** only when all of these are proven:
    - no file of the run may make CUDA the default device (`set_default_device` or
      `set_default_tensor_type` called or handed around, `with torch.device(...)`, `init_module()`,
      `init_tensor()`, `DeviceContext`, a device used as a context), so the draws are on the CPU,
      where a CUDA generator can only fail;
    - the run read the whole project (the paths named are folders that hold whole projects: see
      README, "Safe and unsafe fixes"). A file named alone in a larger project, stdin, an editor
      buffer or a sub-folder of the project are a partial view, where a switch may stand unseen;
    - the generator is made inline, in a function's local name (also with `:=`) or as a parameter's
      default, and is used for nothing but seeding (`manual_seed` as a statement, `seed()`,
      `initial_seed()`) and the `generator` of `DataLoader`, `RandomSampler`, `SubsetRandomSampler` or
      `random_split`, which draw on the CPU whatever the generator.

    It is **unsafe** (applied with `--unsafe-fixes`) where:
    - a default-device switch stands in another file, in a `with` block, or sets a device that is not
      a literal: the message names the switches; change them together with the generator. A `with`
      whose item is not a call (`with DEV:`, `with cfg.device:`, even `with lock:`, since any name may
      hold a `torch.device`), a context entered by hand (`x.__enter__()`, `stack.enter_context(x)`)
      and `set_default_device` / `set_default_tensor_type` named in a string
      (`getattr(torch, "set_default_device")`) count as such switches;
    - the generator is an attribute (`self.gen`): code outside the class may use it for CUDA work;
    - it is a module-level or class-level name: another file may import it;
    - it reaches a `WeightedRandomSampler`, which draws on its weights' device (a CUDA generator
      works with CUDA weights);
    - the run did not read the whole project.

    ## When it does not fix
    - This file switches the whole process to a literal CUDA default device
      (`torch.set_default_device("cuda")`, `torch.set_default_tensor_type("torch.cuda.FloatTensor")`):
      samplers need the CUDA generator there, so changing it alone breaks working code. Reported with
      both lines.
    - The device is not a literal (`torch.Generator(device=device)`): reported, since only you know
      whether it is a CUDA device.
    - The same generator is also used for other work (`torch.randn(..., device="cuda",
      generator=g)`, or `self.gen` elsewhere in the class): reported; make a separate CPU generator
      for data loading.
    - Names that are not torch's (a class of your own called `Generator`) are never touched.
    """

    code = "DDP002"
    name = "cuda-generator"
    summary = "CUDA generator handed to data loading: samplers draw indices on the CPU and fail"
    fixable = True
    # The run's default-device switches, and whether it read the whole project (``Fix safety``).
    uses_facts = True
    # No "cuda" here: a generator whose device is a variable is reported too.
    triggers = ("Generator", ("DataLoader", "Sampler", "random_split"))

    @classmethod
    def triggered_by(cls, data: bytes) -> bool:
        """The words, then a ``Generator(...)`` call with something in its parentheses (or an alias
        of ``Generator``, which may be called anywhere): ``torch.Generator()`` is a CPU generator."""
        return cls.has_trigger_words(data) and (
            word_match(_GENERATOR_WITH_ARGUMENTS, data) or aliased("Generator", data)
        )

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """Some generator is made with a device argument (positional, ``device=``, or ``*args`` /
        ``**kwargs``): a generator made without one is a CPU generator and never reported."""
        names = {"Generator"}
        called: set[str | None] = set()  # names of the calls with a possible device argument
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names.update(alias.asname for alias in node.names if alias.name == "Generator" and alias.asname)
            elif isinstance(node, ast.Call) and (node.args or any(k.arg in ("device", None) for k in node.keywords)):
                called.add(last_name(node.func))
        return not names.isdisjoint(called)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        scan = _Scan(ctx)
        walk(module, scan)
        to_fix: dict[cst.Call, cst.Call] = {}
        for origin in scan.origins():
            device_arg = _device_arg(origin.call)
            if device_arg is _UNKNOWABLE:
                kind = "unknown"
            else:
                kind = device_kind(device_arg.value, ctx.imports) if device_arg is not None else "cpu"
            if kind == "cpu":
                continue
            sites = ", ".join(f"{name} (line {line})" for name, line in origin.sites)
            if kind == "unknown":
                ctx.report(
                    origin.call,
                    f"generator with a non-literal device reaches {sites}: if it is a CUDA device, data "
                    "loading fails (\"Expected a 'cpu' device type for generator\"); data loading needs a "
                    "CPU generator, torch.Generator()",
                    fixable=False,
                )
                continue
            message, fixable = _verdict(origin, scan.other_use(origin), sites, ctx)
            if not fixable:
                ctx.report(origin.call, message, fixable=False)
                continue
            fixed_call = _without_arg(origin.call, device_arg)
            if fixed_call is None:
                ctx.report(origin.call, message + " (not rewritten: it would drop a comment inside the call)", fixable=False)
            elif ctx.report(origin.call, message, fixable=True):
                to_fix[origin.call] = fixed_call
        if not to_fix:
            return module
        return module.visit(ReplaceCalls(to_fix, ctx.view.positions))

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """``apply`` on CPython's tree, reporting only. Raises ``NeedsLibCST`` where the fix would be
        offered but a comment stands inside the generator call (whether ``_without_arg`` keeps it
        depends on LibCST's whitespace nodes), where a data-loading call stands inside an f-string,
        and where a name that may be another use of the generator has no sure line in ``ast`` (one
        kept as a string in a statement or pattern over several lines, one in a multi-line f-string)."""
        scan = _TreeScan(ctx)
        scan.scan(tree)
        for origin in scan.origins():
            device_arg = _tree_device_arg(origin.call)
            if device_arg is _UNKNOWABLE:
                kind = "unknown"
            elif device_arg is None:
                kind = "cpu"
            else:
                kind = _tree_lightning.device_kind(device_arg, ctx.imports, ctx.view.positions.segment)
            if kind == "cpu":
                continue
            sites = ", ".join(f"{name} (line {line})" for name, line in origin.sites)
            if kind == "unknown":
                ctx.report(
                    origin.call,
                    f"generator with a non-literal device reaches {sites}: if it is a CUDA device, data "
                    "loading fails (\"Expected a 'cpu' device type for generator\"); data loading needs a "
                    "CPU generator, torch.Generator()",
                    fixable=False,
                )
                continue
            message, fixable = _verdict(origin, scan.other_use(origin), sites, ctx)
            if not fixable:
                ctx.report(origin.call, message, fixable=False)
                continue
            if _tree_lightning.has_comment(origin.call, ctx.view):
                raise NeedsLibCST("a comment inside the generator call: whether the fix keeps it is LibCST's to tell")
            why = _unproven(origin, ctx)
            ctx.report(origin.call, message, fixable=True, safe=not why, why=why)


def _verdict(origin: _Origin, other_use: int | None, sites: str, ctx: RuleContext) -> tuple[str, bool]:
    """The finding's message, and whether a fix is offered: the same on both paths (``check`` and
    ``apply`` read the same facts). No fix where the generator has other work, or where this file
    switches the whole process to a literal CUDA default device (samplers need the CUDA generator
    there); a fix naming the switches where one stands elsewhere or its device is not a literal."""
    if other_use is not None:
        return (
            f"CUDA generator reaches {sites} but is also used on line {other_use}: data loading "
            "draws indices on the CPU and fails; give the loader its own CPU generator"
        ), False
    switches = ctx.facts.default_devices
    if switches and _safety.blocking_switch(switches, ctx.path):
        return (
            f"CUDA generator reaches {sites}, and the default device is CUDA "
            f"({_safety.switches_text(switches, ctx.path)}): samplers then draw on CUDA and need this generator, "
            "a CPU one fails with \"Expected a 'cuda' device type for generator but found 'cpu'\"; not rewritten: "
            "change the generator and the default-device switch together, or neither"
        ), False
    message = (
        f"CUDA generator reaches {sites}: indices are drawn with it on the CPU, which fails with "
        "\"Expected a 'cpu' device type for generator but found 'cuda'\"; use a CPU generator"
    )
    if switches:
        message += (
            f"; but the default device may be CUDA ({_safety.switches_text(switches, ctx.path)}), where samplers "
            "need this CUDA generator: change the generator and the default-device switch together"
        )
    return message, True


def _unproven(origin: _Origin, ctx: RuleContext) -> str:
    """Why the fix is not proven to change nothing but the failure; "" where it is. Proven: no
    default-device switch anywhere in a run that read the whole project, the generator made inline,
    in a function's local name or as a parameter's default, and handed only to data loading that
    draws on the CPU (``DataLoader``, ``RandomSampler``, ``SubsetRandomSampler``, ``random_split``),
    besides seeding (``manual_seed``, ``seed``, ``initial_seed``)."""
    if ctx.facts.default_devices:
        return "another file or a `with` block may make CUDA the default device, where samplers need this generator"
    if origin.attribute is not None:
        return f"`self.{origin.attribute[0]}` is an attribute: code outside the class may use the generator for CUDA work"
    if origin.variable is not None and origin.variable[1].kind != "function":
        where = "module" if origin.variable[1].kind == "module" else "class"
        return f"`{origin.variable[0]}` is a {where}-level name: another file may import it and use it for CUDA work"
    loaders = {name for name, _ in origin.sites}
    if not loaders <= CPU_DRAWS:
        return "WeightedRandomSampler draws on its weights' device, which may be CUDA, where a CUDA generator works"
    if not ctx.facts.whole:
        return ("the run did not read the whole project (a file named alone, stdin, an editor buffer, or files "
                "left out): another file may make CUDA the default device, where samplers need this generator")
    return ""


@dataclass
class _Origin:
    """One generator construction that flows into data loading."""

    call: cst.Call
    variable: tuple[str, _Scope] | None
    sites: list[tuple[str, int]] = field(default_factory=list)
    attribute: tuple[str, _Scope] | None = None  # ``self.<name>`` of the class whose scope this is


class _Scope:
    def __init__(self, kind: str, parent: _Scope | None):
        self.kind = kind
        self.parent = parent
        self.assignments: dict[str, list[cst.BaseExpression | None]] = {}
        self.attributes: dict[str, list] = {}  # a class's ``self.<name>`` bindings (None: no plain value)

    def chain(self):
        """This scope and the ones its names resolve through (class bodies are skipped, as Python does)."""
        scope, first = self, True
        while scope is not None:
            if first or scope.kind != "class":
                yield scope
            scope, first = scope.parent, False


class _Scan(cst.CSTVisitor):
    """One pass over the module: assignments per scope, data-loading calls, every name reference."""

    def __init__(self, ctx: RuleContext):
        super().__init__()
        self.ctx = ctx
        self.scope = _Scope("module", None)
        self.loader_args: list[tuple[str, cst.Call, cst.BaseExpression, _Scope]] = []
        self.names: list[tuple[cst.Name, _Scope]] = []
        self.harmless: set[int] = set()  # ids of Name nodes that are not uses of a variable
        self.attribute_uses: list[tuple[cst.Attribute, _Scope]] = []  # ``self.<name>`` in a class

    # scopes
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.names.append((node.name, self.scope))
        self.harmless.add(id(node.name))
        self.scope = _Scope("function", self.scope)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scope = self.scope.parent

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope = _Scope("class", self.scope)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scope = self.scope.parent

    # Comprehensions and lambdas are function scopes: from a class body they see module names.
    def _enter(self, node) -> None:
        self.scope = _Scope("function", self.scope)

    def _leave(self, original_node) -> None:
        self.scope = self.scope.parent

    def _enter_comprehension(self, node) -> None:
        self.scope = _Scope("comprehension", self.scope)

    visit_Lambda = _enter
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _enter_comprehension
    leave_Lambda = leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave

    # bindings
    def _bind(self, target: cst.CSTNode, value: cst.BaseExpression | None) -> None:
        """Record a binding; ``value`` None marks one whose value is not a plain expression (a loop
        target, a parameter, ``del``...), which makes the name unresolvable in that scope."""
        if isinstance(target, cst.Name):
            self.scope.assignments.setdefault(target.value, []).append(value)
            if value is not None:
                self.harmless.add(id(target))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value, None)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, None)
        elif _self_attribute(target) is not None:
            owner = _class_of(self.scope)
            if owner is not None:
                owner.attributes.setdefault(target.attr.value, []).append(value)
                if value is not None:
                    self.harmless.add(id(target))

    def visit_Assign(self, node: cst.Assign) -> None:
        # ``g = h = Generator(...)`` makes two names for one generator: the other name's uses
        # cannot be told apart, so neither is a plain binding.
        single = len(node.targets) == 1
        for target in node.targets:
            self._bind(target.target, node.value if single else None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, None)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, None)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target, None)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bind(node.name, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        # ``(g := Generator(...))`` binds in its scope; in a comprehension, in the one around it.
        self._bind(node.target, node.value if self.scope.kind != "comprehension" else None)

    def visit_Param(self, node: cst.Param) -> None:
        # Parameters belong to the function's scope, which visit_FunctionDef has entered already.
        # A generator as the default is the parameter's value unless a caller passes another.
        default = node.default
        is_generator = default is not None and self._is_generator(_strip_seeding(default))
        self._bind(node.name, default if is_generator else None)

    def _is_generator(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Call) and self.ctx.imports.qualify(node.func) in GENERATOR

    def visit_Del(self, node: cst.Del) -> None:
        self._bind(node.target, None)

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self._bind(item.name, None)

    visit_Nonlocal = visit_Global

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None and isinstance(node.name, cst.Name):
            self._bind(node.name, None)

    # references
    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.harmless.add(id(node.attr))
        if _self_attribute(node) is not None and _class_of(self.scope) is not None:
            self.attribute_uses.append((node, self.scope))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.harmless.add(id(node.keyword))

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append((node, self.scope))

    def visit_Expr(self, node: cst.Expr) -> None:
        # ``g.manual_seed(0)`` as a statement: its result (g itself) goes nowhere.
        call = node.value
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and _plain(call.func.value):
            if call.func.attr.value == "manual_seed":
                self.harmless.add(id(call.func.value))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in READ_ONLY_METHODS and _plain(func.value):
            self.harmless.add(id(func.value))
        qualified = self.ctx.imports.qualify(func)
        if not qualified or not qualified.startswith(DATA_PACKAGE):
            return
        short = qualified.rsplit(".", 1)[1]
        if short not in GENERATOR_POSITION:
            return
        value = _generator_arg(node, GENERATOR_POSITION[short])
        if value is not None:
            self.loader_args.append((short, node, value, self.scope))
            # The generator argument itself (also through ``g.manual_seed(n)``) is the use we fix.
            seeded = _strip_seeding(value)
            if _plain(seeded):
                self.harmless.add(id(seeded))

    # results
    def origins(self) -> list[_Origin]:
        found: dict[int, _Origin] = {}
        for short, call, value, scope in self.loader_args:
            origin = self._resolve(value, scope)
            if origin is None:
                continue
            origin = found.setdefault(id(origin.call), origin)
            origin.sites.append((short, self.ctx.position(call).start.line))
        return list(found.values())

    def _resolve(self, value: cst.BaseExpression, scope: _Scope) -> _Origin | None:
        value = _strip_seeding(value)
        if self._is_generator(value):
            return _Origin(value, None)
        if isinstance(value, cst.NamedExpr):  # ``generator=(g := Generator(...))``
            if scope.kind == "comprehension" or not isinstance(value.target, cst.Name):
                return None
            if len(scope.assignments.get(value.target.value, ())) != 1:
                return None
            inner = _strip_seeding(value.value)
            return _Origin(inner, (value.target.value, scope)) if self._is_generator(inner) else None
        name = _self_attribute(value)
        if name is not None:  # ``generator=self.gen``, bound once in the class
            owner = _class_of(scope)
            assigned = owner.attributes.get(name) if owner is not None else None
            if not assigned or len(assigned) != 1 or assigned[0] is None:
                return None
            bound = _strip_seeding(assigned[0])
            return _Origin(bound, None, attribute=(name, owner)) if self._is_generator(bound) else None
        if not isinstance(value, cst.Name):
            return None
        for candidate in scope.chain():
            assigned = candidate.assignments.get(value.value)
            if assigned is None:
                continue
            if len(assigned) != 1:
                return None  # rebound: which generator reaches the loader is not decidable here
            if assigned[0] is None:
                return None
            bound = _strip_seeding(assigned[0])
            if isinstance(bound, cst.Call) and self.ctx.imports.qualify(bound.func) in GENERATOR:
                return _Origin(bound, (value.value, candidate))
            return None
        return None

    def other_use(self, origin: _Origin) -> int | None:
        """The line of a use of the generator's variable other than seeding or data loading."""
        if origin.attribute is not None:
            name, owner = origin.attribute
            for node, scope in self.attribute_uses:
                if node.attr.value == name and id(node) not in self.harmless and _class_of(scope) is owner:
                    return self.ctx.position(node).start.line
            return None
        if origin.variable is None:
            return None
        name, home = origin.variable
        for node, scope in self.names:
            if node.value != name or id(node) in self.harmless:
                continue
            if _inside(scope, home):
                return self.ctx.position(node).start.line
        return None


def _class_of(scope: _Scope | None) -> _Scope | None:
    """The class whose ``self.<name>`` a method (or code nested in one) at ``scope`` refers to."""
    while scope is not None and scope.kind != "class":
        scope = scope.parent
    return scope


def _self_attribute(node) -> str | None:
    """``self.<name>`` (LibCST's or CPython's tree): the name; else None."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _plain(node) -> bool:
    """A name or ``self.<name>``: what a generator may be held in."""
    return isinstance(node, (cst.Name, ast.Name)) or _self_attribute(node) is not None


def _inside(scope: _Scope | None, home: _Scope) -> bool:
    while scope is not None:
        if scope is home:
            return True
        scope = scope.parent
    return False


def _strip_seeding(value: cst.BaseExpression) -> cst.BaseExpression:
    """``torch.Generator(...).manual_seed(0)`` -> ``torch.Generator(...)`` (manual_seed returns the generator)."""
    while (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value == "manual_seed"
    ):
        value = value.func.value
    return value


def _generator_arg(call: cst.Call, position: int) -> cst.BaseExpression | None:
    positional: int | None = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == "generator":
                return arg.value
        elif arg.star:
            positional = None  # positions after *args are unknowable; keywords still count
        elif positional is not None:
            if positional == position:
                return arg.value
            positional += 1
    return None


# ``torch.Generator(*args)`` / ``(**kwargs)``: the device may be in there, but which is unknowable.
_UNKNOWABLE = cst.Arg(cst.Name("unknowable"))


def _device_arg(call: cst.Call) -> cst.Arg | None:
    for index, arg in enumerate(call.args):
        if arg.star:
            return _UNKNOWABLE
        if (arg.keyword is not None and arg.keyword.value == "device") or (index == 0 and arg.keyword is None):
            return arg
    return None


def _without_arg(call: cst.Call, drop: cst.Arg) -> cst.Call | None:
    """``call`` without the argument ``drop``; comments around it move to the opening parenthesis.

    None when a comment would still be lost: then the fix is not offered.
    """
    index = call.args.index(drop)
    args = list(call.args)
    del args[index]
    if args:
        if index == len(args):  # dropped the last one: the new last must not keep a dangling comma
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        new = call.with_changes(args=args)
    else:
        before = call.whitespace_before_args
        comma = drop.comma
        if not comments(before) and isinstance(comma, cst.Comma) and comments(comma.whitespace_after):
            before = comma.whitespace_after  # ``device="cuda",  # why`` keeps its comment
        if not comments(before):
            before = cst.SimpleWhitespace("")
        elif isinstance(before, cst.ParenthesizedWhitespace):
            before = before.with_changes(last_line=cst.SimpleWhitespace(""))
        new = call.with_changes(args=(), whitespace_before_args=before)
    return new if sorted(comments(new)) == sorted(comments(call)) else None


# --- the same scan on CPython's tree (``check``) ---------------------------------------------------


def _unknown_line() -> int:
    raise NeedsLibCST("a name that may use the generator has no line of its own in CPython's tree")


class _TreeScan:
    """``_Scan`` on CPython's tree: the same scopes, bindings, data-loading calls and name uses.

    LibCST's visitor enters a function's (or class's) scope before visiting its children, so a
    ``def``'s decorators, defaults and annotations (a class's bases) count as inside it: kept here.
    Names that LibCST holds as ``Name`` nodes and ``ast`` as plain strings (parameters, imports,
    ``global``, ``except ... as``, a class's name, match captures) are uses too, found with their line.
    The walk order does not matter: data-loading calls are sorted into LibCST's (pre-order, source)
    order, and the first other use of a variable is the one on the lowest line.
    """

    def __init__(self, ctx: RuleContext):
        self.ctx = ctx
        self.loader_args: list[tuple[str, ast.Call, ast.expr, _Scope]] = []
        self.names: list[tuple[ast.Name, _Scope, Callable[[], int]]] = []
        self.identifiers: list[tuple[str, _Scope, Callable[[], int]]] = []  # the names ``ast`` keeps as strings
        self.harmless: set[int] = set()  # ids of Name nodes that are not uses of a variable
        self.attribute_uses: list[tuple[ast.Attribute, _Scope, Callable[[], int]]] = []  # ``self.<name>`` in a class
        self._defaults: dict[int, ast.expr] = {}  # id of a parameter -> its default, where it is a generator
        self._text = ctx.view.text
        self._positions = ctx.view.positions

    def scan(self, tree: ast.Module) -> None:
        # (node, scope, f-string): 0 outside one, 1 in a one-line f-string, 2 in a longer one,
        # where Python 3.11 may misplace the lines of the expressions inside.
        pending: list[tuple[ast.AST, _Scope, int]] = [(tree, _Scope("module", None), 0)]
        while pending:
            node, scope, fstring = pending.pop()
            kind = type(node)
            if kind is ast.Name:
                line = _unknown_line if fstring == 2 else (lambda n=node: n.lineno)
                self.names.append((node, scope, line))
                continue
            if kind is ast.JoinedStr:
                fstring = max(fstring, 1 if node.lineno == node.end_lineno else 2)
            visit = _TREE_VISITS.get(kind)
            if visit is not None:
                scope = visit(self, node, scope, fstring) or scope
            pending.extend((child, scope, fstring) for child in ast.iter_child_nodes(node))

    # scopes (the returned scope is the one the node's children live in)
    def _function(self, node, scope: _Scope, fstring: int) -> _Scope:
        arguments = getattr(node, "args", None)
        if isinstance(arguments, ast.arguments):
            positional = [*arguments.posonlyargs, *arguments.args]
            pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
            pairs += [(arg, default) for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default is not None]
            for arg, default in pairs:
                if self._is_generator(_tree_strip_seeding(default)):
                    self._defaults[id(arg)] = default
        return _Scope("function", scope)

    def _comprehension(self, node, scope: _Scope, fstring: int) -> _Scope:
        return _Scope("comprehension", scope)

    def _class(self, node: ast.ClassDef, scope: _Scope, fstring: int) -> _Scope:
        inner = _Scope("class", scope)
        # LibCST visits the class's name inside its scope, and nothing marks it harmless.
        self._identifier(node.name, inner, self._line_after(node, rf"class[ \t]+{re.escape(node.name)}\b"))
        return inner

    # bindings
    def _bind(self, scope: _Scope, target: ast.AST, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            scope.assignments.setdefault(target.id, []).append(value)
            if value is not None:
                self.harmless.add(id(target))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind(scope, element.value if isinstance(element, ast.Starred) else element, None)
        elif isinstance(target, ast.Starred):
            self._bind(scope, target.value, None)
        elif _self_attribute(target) is not None:
            owner = _class_of(scope)
            if owner is not None:
                owner.attributes.setdefault(target.attr, []).append(value)
                if value is not None:
                    self.harmless.add(id(target))

    def _identifier(self, name: str, scope: _Scope, line: Callable[[], int], bind: bool = False) -> None:
        """A name LibCST holds as a ``Name`` node (a use) and ``ast`` as a string; ``bind``: also a
        binding without a plain value, as LibCST's parameters, ``as`` names and ``global`` are."""
        if bind:
            scope.assignments.setdefault(name, []).append(None)
        self.identifiers.append((name, scope, line))

    def _assign(self, node: ast.Assign, scope: _Scope, fstring: int) -> None:
        single = len(node.targets) == 1  # ``g = h = Generator(...)``: neither name is a plain binding
        for target in node.targets:
            self._bind(scope, target, node.value if single else None)

    def _ann_assign(self, node: ast.AnnAssign, scope: _Scope, fstring: int) -> None:
        self._bind(scope, node.target, node.value)

    def _rebind(self, node, scope: _Scope, fstring: int) -> None:
        self._bind(scope, node.target, None)

    def _delete(self, node: ast.Delete, scope: _Scope, fstring: int) -> None:
        for target in node.targets:
            self._bind(scope, target, None)

    def _with_item(self, node: ast.withitem, scope: _Scope, fstring: int) -> None:
        if node.optional_vars is not None:
            self._bind(scope, node.optional_vars, None)

    def _parameter(self, node: ast.arg, scope: _Scope, fstring: int) -> None:
        default = self._defaults.get(id(node))
        if default is not None:  # a generator as the default: the parameter's value, and no use
            scope.assignments.setdefault(node.arg, []).append(default)
            return
        line = _unknown_line if fstring == 2 else (lambda: node.lineno)  # a lambda's, in an f-string
        self._identifier(node.arg, scope, line, bind=True)

    def _named(self, node: ast.NamedExpr, scope: _Scope, fstring: int) -> None:
        # ``(g := Generator(...))`` binds in its scope; in a comprehension, in the one around it.
        self._bind(scope, node.target, node.value if scope.kind != "comprehension" else None)

    def _attribute(self, node: ast.Attribute, scope: _Scope, fstring: int) -> None:
        if _self_attribute(node) is not None and _class_of(scope) is not None:
            line = _unknown_line if fstring == 2 else (lambda: node.lineno)
            self.attribute_uses.append((node, scope, line))

    def _alias(self, node: ast.alias, scope: _Scope, fstring: int) -> None:
        if node.name == "*":
            return
        root = node.name.split(".", 1)[0]
        # LibCST binds ``import a`` and ``from m import a``, not ``import a.b`` (an Attribute there).
        self._identifier(root, scope, lambda: node.lineno, bind=node.asname is None and root == node.name)
        if node.asname is not None:
            self._identifier(node.asname, scope, lambda: node.end_lineno, bind=True)

    def _import_from(self, node: ast.ImportFrom, scope: _Scope, fstring: int) -> None:
        if node.module:
            root = node.module.split(".", 1)[0]
            self._identifier(root, scope, self._line_after(node, rf"from[ \t.]*{re.escape(root)}\b"))

    def _handler(self, node: ast.ExceptHandler, scope: _Scope, fstring: int) -> None:
        if node.name is None or node.type is None:
            return
        start = self._positions.offset(node.type.end_lineno, node.type.end_col_offset)
        pattern = re.compile(rf"[ \t)]*as[ \t]+{re.escape(node.name)}\b")
        line = (lambda: node.type.end_lineno) if pattern.match(self._text, start) else _unknown_line
        self._identifier(node.name, scope, line, bind=True)

    def _global(self, node, scope: _Scope, fstring: int) -> None:
        line = self._one_line(node)
        for name in node.names:
            self._identifier(name, scope, line, bind=True)

    def _match_name(self, node, scope: _Scope, fstring: int) -> None:
        """``case g``, ``case [*g]``, ``case {**g}``, ``case C(g=...)``: uses, not bindings, to LibCST."""
        names = [getattr(node, "name", None), getattr(node, "rest", None), *getattr(node, "kwd_attrs", ())]
        for name in names:
            if name is not None:
                self._identifier(name, scope, self._one_line(node))

    # references
    def _expression_statement(self, node: ast.Expr, scope: _Scope, fstring: int) -> None:
        # ``g.manual_seed(0)`` as a statement: its result (g itself) goes nowhere.
        call = node.value
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and _plain(call.func.value) and call.func.attr == "manual_seed"):
            self.harmless.add(id(call.func.value))

    def _call(self, node: ast.Call, scope: _Scope, fstring: int) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in READ_ONLY_METHODS and _plain(func.value):
            self.harmless.add(id(func.value))
        qualified = self.ctx.imports.qualify(func)
        if not qualified or not qualified.startswith(DATA_PACKAGE):
            return
        short = qualified.rsplit(".", 1)[1]
        if short not in GENERATOR_POSITION:
            return
        value = _tree_generator_arg(node, GENERATOR_POSITION[short])
        if value is not None:
            if fstring:
                raise NeedsLibCST("a data-loading call inside an f-string, whose positions Python 3.11 may misplace")
            self.loader_args.append((short, node, value, scope))
            seeded = _tree_strip_seeding(value)
            if _plain(seeded):
                self.harmless.add(id(seeded))

    # lines of the names ``ast`` keeps as strings
    def _line_after(self, node: ast.stmt, pattern: str) -> Callable[[], int]:
        """The statement's first line when ``pattern`` matches at its start (the name on the keyword's line)."""
        start = self._positions.offset(node.lineno, node.col_offset)
        return (lambda: node.lineno) if re.compile(pattern).match(self._text, start) else _unknown_line

    @staticmethod
    def _one_line(node: ast.AST) -> Callable[[], int]:
        return (lambda: node.lineno) if node.lineno == node.end_lineno else _unknown_line

    # results
    def origins(self) -> list[_Origin]:
        found: dict[int, _Origin] = {}
        # LibCST's walk meets calls in source order, an outer call before the calls inside it.
        ordered = sorted(self.loader_args, key=lambda item: (item[1].lineno, item[1].col_offset,
                                                             -item[1].end_lineno, -item[1].end_col_offset))
        for short, call, value, scope in ordered:
            origin = self._resolve(value, scope)
            if origin is None:
                continue
            origin = found.setdefault(id(origin.call), origin)
            origin.sites.append((short, call.lineno))
        return list(found.values())

    def _is_generator(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Call) and self.ctx.imports.qualify(node.func) in GENERATOR

    def _resolve(self, value: ast.expr, scope: _Scope) -> _Origin | None:
        value = _tree_strip_seeding(value)
        if self._is_generator(value):
            return _Origin(value, None)
        if isinstance(value, ast.NamedExpr):  # ``generator=(g := Generator(...))``
            if scope.kind == "comprehension" or len(scope.assignments.get(value.target.id, ())) != 1:
                return None
            inner = _tree_strip_seeding(value.value)
            return _Origin(inner, (value.target.id, scope)) if self._is_generator(inner) else None
        name = _self_attribute(value)
        if name is not None:  # ``generator=self.gen``, bound once in the class
            owner = _class_of(scope)
            assigned = owner.attributes.get(name) if owner is not None else None
            if not assigned or len(assigned) != 1 or assigned[0] is None:
                return None
            bound = _tree_strip_seeding(assigned[0])
            return _Origin(bound, None, attribute=(name, owner)) if self._is_generator(bound) else None
        if not isinstance(value, ast.Name):
            return None
        for candidate in scope.chain():
            assigned = candidate.assignments.get(value.id)
            if assigned is None:
                continue
            if len(assigned) != 1 or assigned[0] is None:
                return None  # rebound, or bound without a plain value
            bound = _tree_strip_seeding(assigned[0])
            return _Origin(bound, (value.id, candidate)) if self._is_generator(bound) else None
        return None

    def other_use(self, origin: _Origin) -> int | None:
        """The line of the first use of the generator's variable other than seeding or data loading."""
        if origin.attribute is not None:
            name, owner = origin.attribute
            lines = [line() for node, scope, line in self.attribute_uses
                     if node.attr == name and id(node) not in self.harmless and _class_of(scope) is owner]
            return min(lines, default=None)
        if origin.variable is None:
            return None
        name, home = origin.variable
        lines = [line() for node, scope, line in self.names
                 if node.id == name and id(node) not in self.harmless and _inside(scope, home)]
        lines += [line() for identifier, scope, line in self.identifiers if identifier == name and _inside(scope, home)]
        return min(lines, default=None)


_TREE_VISITS = {
    ast.FunctionDef: _TreeScan._function,
    ast.AsyncFunctionDef: _TreeScan._function,
    ast.Lambda: _TreeScan._function,
    # Comprehensions are function scopes: from a class body they see module names.
    ast.ListComp: _TreeScan._comprehension,
    ast.SetComp: _TreeScan._comprehension,
    ast.DictComp: _TreeScan._comprehension,
    ast.GeneratorExp: _TreeScan._comprehension,
    ast.ClassDef: _TreeScan._class,
    ast.Assign: _TreeScan._assign,
    ast.AnnAssign: _TreeScan._ann_assign,
    ast.AugAssign: _TreeScan._rebind,
    ast.For: _TreeScan._rebind,
    ast.AsyncFor: _TreeScan._rebind,
    ast.comprehension: _TreeScan._rebind,
    ast.NamedExpr: _TreeScan._named,
    ast.Attribute: _TreeScan._attribute,
    ast.Delete: _TreeScan._delete,
    ast.withitem: _TreeScan._with_item,
    ast.arg: _TreeScan._parameter,
    ast.alias: _TreeScan._alias,
    ast.ImportFrom: _TreeScan._import_from,
    ast.ExceptHandler: _TreeScan._handler,
    ast.Global: _TreeScan._global,
    ast.Nonlocal: _TreeScan._global,
    ast.MatchAs: _TreeScan._match_name,
    ast.MatchStar: _TreeScan._match_name,
    ast.MatchMapping: _TreeScan._match_name,
    ast.MatchClass: _TreeScan._match_name,
    ast.Expr: _TreeScan._expression_statement,
    ast.Call: _TreeScan._call,
}


def _tree_strip_seeding(value: ast.expr) -> ast.expr:
    """``_strip_seeding`` on CPython's tree."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "manual_seed":
        value = value.func.value
    return value


def _tree_generator_arg(call: ast.Call, position: int) -> ast.expr | None:
    """``_generator_arg`` on CPython's tree (arguments in source order, as LibCST lists them)."""
    positional: int | None = 0
    for arg in _tree_lightning.arguments_in_order(call):
        if isinstance(arg, ast.keyword) and arg.arg is not None:
            if arg.arg == "generator":
                return arg.value
        elif isinstance(arg, (ast.Starred, ast.keyword)):
            positional = None  # positions after *args are unknowable; keywords still count
        elif positional is not None:
            if positional == position:
                return arg
            positional += 1
    return None


def _tree_device_arg(call: ast.Call):
    """``_device_arg`` on CPython's tree: the device expression, None, or ``_UNKNOWABLE``."""
    for index, arg in enumerate(_tree_lightning.arguments_in_order(call)):
        if isinstance(arg, ast.Starred) or (isinstance(arg, ast.keyword) and arg.arg is None):
            return _UNKNOWABLE
        if isinstance(arg, ast.keyword):
            if arg.arg == "device":
                return arg.value
        elif index == 0:
            return arg
    return None
