"""DDP002 cuda-generator: CUDA generators handed to data loading become CPU generators."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import libcst as cst

from ddpfix.transforms._args import ReplaceCalls, comments
from ddpfix.transforms._ast_shapes import last_name
from ddpfix.transforms._lightning import device_kind
from ddpfix.transforms.base import Rule, RuleContext
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
    `WeightedRandomSampler` or `random_split` — directly, through `.manual_seed(n)`, or through a
    variable, and makes them CPU generators. The seed is kept.

    ## Why it breaks under DDP
    Samplers draw shuffle indices with `torch.randperm(n, generator=g)` on the CPU. A CUDA generator
    makes that fail with "Expected a 'cpu' device type for generator but found 'cuda'" (or the
    mirror error when the default device is CUDA); on a CPU-only build creating it already fails.
    Under DDP Lightning replaces a `RandomSampler` with a `DistributedSampler` seeded from
    `seed_everything`, so the generator buys nothing there either.

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

    ## When it does not fix
    - The device is not a literal (`torch.Generator(device=device)`): reported, since only you know
      whether it is a CUDA device.
    - The same generator is also used for other work (`torch.randn(..., device="cuda",
      generator=g)`): reported; make a separate CPU generator for data loading.
    - Names that are not torch's (a class of your own called `Generator`) are never touched.
    """

    code = "DDP002"
    name = "cuda-generator"
    summary = "CUDA generator handed to data loading: samplers draw indices on the CPU and fail"
    fixable = True
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
            other_use = scan.other_use(origin)
            if other_use is not None:
                ctx.report(
                    origin.call,
                    f"CUDA generator reaches {sites} but is also used on line {other_use}: data loading "
                    "draws indices on the CPU and fails; give the loader its own CPU generator",
                    fixable=False,
                )
                continue
            message = (
                f"CUDA generator reaches {sites}: indices are drawn with it on the CPU, which fails with "
                "\"Expected a 'cpu' device type for generator but found 'cuda'\"; use a CPU generator"
            )
            fixed_call = _without_arg(origin.call, device_arg)
            if fixed_call is None:
                ctx.report(origin.call, message + " (not rewritten: it would drop a comment inside the call)", fixable=False)
            elif ctx.report(origin.call, message, fixable=True):
                to_fix[origin.call] = fixed_call
        if not to_fix:
            return module
        return module.visit(ReplaceCalls(to_fix, ctx.view.positions))


@dataclass
class _Origin:
    """One generator construction that flows into data loading."""

    call: cst.Call
    variable: tuple[str, _Scope] | None
    sites: list[tuple[str, int]] = field(default_factory=list)


class _Scope:
    def __init__(self, kind: str, parent: _Scope | None):
        self.kind = kind
        self.parent = parent
        self.assignments: dict[str, list[cst.BaseExpression | None]] = {}

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

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _enter
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
        self._bind(node.target, None)

    def visit_Param(self, node: cst.Param) -> None:
        # Parameters belong to the function's scope, which visit_FunctionDef has entered already.
        self._bind(node.name, None)

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

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.harmless.add(id(node.keyword))

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append((node, self.scope))

    def visit_Expr(self, node: cst.Expr) -> None:
        # ``g.manual_seed(0)`` as a statement: its result (g itself) goes nowhere.
        call = node.value
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name):
            if call.func.attr.value == "manual_seed":
                self.harmless.add(id(call.func.value))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in READ_ONLY_METHODS and isinstance(func.value, cst.Name):
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
            if isinstance(seeded, cst.Name):
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
        if isinstance(value, cst.Call) and self.ctx.imports.qualify(value.func) in GENERATOR:
            return _Origin(value, None)
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
        if origin.variable is None:
            return None
        name, home = origin.variable
        for node, scope in self.names:
            if node.value != name or id(node) in self.harmless:
                continue
            if _inside(scope, home):
                return self.ctx.position(node).start.line
        return None


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
