"""DDP002 cuda-generator: CUDA generators handed to data loading become CPU generators."""

from __future__ import annotations

import ast
import os
import io
import tokenize
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import field
from itertools import pairwise
from typing import NamedTuple

from ddpfix.ast_walk import child_nodes
from ddpfix import edits
from ddpfix.edits._base import Span
from ddpfix.analysis import lightning as _tree_lightning
from ddpfix.analysis.ast_shapes import every_node, last_name
from ddpfix.analysis.text import GAP, aliased, pattern, word_match
from ddpfix.records import record
from ddpfix.rules.base import Rule, RuleContext

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
      hold a `torch.device`), a `with` over a call not known to enter no device (`with
      accelerator_device():`, whose helper may return a `torch.device`; `with torch.no_grad():`,
      `with open(...)`, `with tqdm(...)` and the like enter none), a context entered by hand
      (`x.__enter__()`, `stack.enter_context(x)`), `set_default_device` / `set_default_tensor_type`
      named in a string (`getattr(torch, "set_default_device")`) and a configuration file that names
      one where the program's loader may call it (`_target_: torch.set_default_device` for hydra's
      `call`) count as such switches;
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
        for node in every_node(tree):
            if isinstance(node, ast.ImportFrom):
                names.update(alias.asname for alias in node.names if alias.name == "Generator" and alias.asname)
            elif isinstance(node, ast.Call) and (node.args or any(k.arg in ("device", None) for k in node.keywords)):
                called.add(last_name(node.func))
        return not names.isdisjoint(called)

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """The one analysis: findings, each fix's applicability, and its typed edit (the device
        argument dropped from the generator call), which the engine carries out on LibCST's tree."""
        scan = _Scan(ctx)
        scan.scan(tree)
        for origin in scan.origins():
            device, kind = _device(origin.call, ctx)
            if kind == "cpu":
                continue
            sites = ", ".join(f"{name} (line {line})" for name, line in origin.sites)
            if kind == "unknown":
                ctx.report(
                    origin.call,
                    f"generator of a non-literal device reaches {_first_site(origin)}",
                    detail=f"generator with a non-literal device reaches {sites}: if it is a CUDA device, data "
                    "loading fails (\"Expected a 'cpu' device type for generator\"); data loading needs a "
                    "CPU generator, torch.Generator()",
                    fixable=False,
                )
                continue
            message, detail, fixable = _verdict(origin, scan.other_use(origin), sites, ctx)
            if fixable:
                _report_fix(origin, device, message, detail, ctx)
            else:
                ctx.report(origin.call, message, detail=detail, fixable=False)


def _device(call: ast.Call, ctx: RuleContext) -> tuple[ast.expr | ast.keyword | None, str]:
    """The generator call's device argument (positional or ``device=``), and what it names:
    ``"cuda"``, ``"cpu"`` (also: none given) or ``"unknown"`` (not a literal, or maybe in
    ``*args`` / ``**kwargs``)."""
    for index, arg in enumerate(_tree_lightning.arguments_in_order(call)):
        if isinstance(arg, ast.Starred) or (isinstance(arg, ast.keyword) and arg.arg is None):
            return None, "unknown"
        if isinstance(arg, ast.keyword):
            if arg.arg == "device":
                return arg, _tree_lightning.device_kind(arg.value, ctx.imports, ctx.view.positions.segment)
        elif index == 0:
            return arg, _tree_lightning.device_kind(arg, ctx.imports, ctx.view.positions.segment)
    return None, "cpu"


def _report_fix(origin: _Origin, device: ast.expr | ast.keyword, message: str, detail: str, ctx: RuleContext) -> None:
    """The finding with its fix, the device argument dropped; none where that would drop a comment."""
    index = _tree_lightning.arguments_in_order(origin.call).index(device)
    if not edits.drop_keeps_comments(ctx.view, origin.call, index):
        ctx.report(origin.call, message, detail=detail + " (not rewritten: it would drop a comment inside the call)",
                   fixable=False)
        return
    why = _unproven(origin, ctx)
    edit = edits.DropArgument(Span.of(ctx.position(origin.call)), index)
    ctx.report(origin.call, message, detail=detail, fixable=True, safe=not why, why=why, edits=[edit])


def _first_site(origin: _Origin) -> str:
    """Where the generator goes, for the finding line: the first loader, and how many more."""
    name, line = origin.sites[0]
    more = len(origin.sites) - 1
    return f"{name} (line {line})" + (f" and {more} more" if more else "")


def _verdict(origin: _Origin, other_use: int | None, sites: str, ctx: RuleContext) -> tuple[str, str, bool]:
    """The finding's message and detail, and whether a fix is offered. No fix where the generator has other
    work, or where this file switches the whole process to a literal CUDA default device (samplers
    need the CUDA generator there); a fix naming the switches where one stands elsewhere or its
    device is not a literal."""
    # Imported here, not at the top: a run loads every rule, and only files this rule checks need it.
    from ddpfix.rules import _cuda_generator_safety as _safety

    first = _first_site(origin)
    if other_use is not None:
        return f"CUDA generator reaches {first} and CUDA work on line {other_use}", (
            f"CUDA generator reaches {sites} but is also used on line {other_use}: data loading "
            "draws indices on the CPU and fails; give the loader its own CPU generator"
        ), False
    # The switches that may run in this file's process: the same list the fix's safety reads, so the
    # message never names a switch the proof leaves out (review helper-42, g06).
    switches = ctx.facts.default_devices_for(ctx.path)
    if switches and _safety.blocking_switch(switches, ctx.path):
        return f"CUDA generator reaches {first}; the default device is CUDA", (
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
    return f"CUDA generator reaches {first}, which draws on the CPU", message, True


def _unproven(origin: _Origin, ctx: RuleContext) -> str:
    """Why the fix is not proven to change nothing but the failure; "" where it is. Proven: no
    default-device switch anywhere in a run that read the whole project, the generator made inline,
    in a function's local name or as a parameter's default, and handed only to data loading that
    draws on the CPU (``DataLoader``, ``RandomSampler``, ``SubsetRandomSampler``, ``random_split``),
    besides seeding (``manual_seed``, ``seed``, ``initial_seed``)."""
    switches = ctx.facts.default_devices_for(ctx.path)
    if switches:
        first = switches[0]
        more = f" (and {len(switches) - 1} more)" if len(switches) > 1 else ""
        place = f" ({_shown(first.path)}:{first.line})" if first.line else ""  # (0: a switch no line holds)
        return (f"{first.what}{place}{more} may make CUDA the default device, where samplers need this generator")
    if origin.attribute is not None:
        return f"`self.{origin.attribute[0]}` is an attribute: code outside the class may use the generator for CUDA work"
    if origin.variable is not None and origin.variable[1].kind != "function":
        where = "module" if origin.variable[1].kind == "module" else "class"
        return f"`{origin.variable[0]}` is a {where}-level name: another file may import it and use it for CUDA work"
    loaders = {name for name, _ in origin.sites}
    if not loaders <= CPU_DRAWS:
        return "WeightedRandomSampler draws on its weights' device, which may be CUDA, where a CUDA generator works"
    if not ctx.facts.whole:
        return ("the run did not read the whole project (stdin without --stdin-filename, an unsaved buffer, or files "
                "left out): another file may make CUDA the default device, where samplers need this generator")
    return ""


def _shown(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


@record
class _Origin:
    """One generator construction that flows into data loading."""

    call: ast.Call
    variable: tuple[str, _Scope] | None
    sites: list[tuple[str, int]] = field(default_factory=list)
    attribute: tuple[str, _Scope] | None = None  # ``self.<name>`` of the class whose scope this is


class _Scope:
    def __init__(self, kind: str, parent: _Scope | None):
        self.kind = kind
        self.parent = parent
        self.assignments: dict[str, list[ast.expr | None]] = {}  # None: bound without a plain value
        self.attributes: dict[str, list] = {}  # a class's ``self.<name>`` bindings (None: no plain value)

    def chain(self):
        """This scope and the ones its names resolve through (class bodies are skipped, as Python does)."""
        scope, first = self, True
        while scope is not None:
            if first or scope.kind != "class":
                yield scope
            scope, first = scope.parent, False


def _class_of(scope: _Scope | None) -> _Scope | None:
    """The class whose ``self.<name>`` a method (or code nested in one) at ``scope`` refers to."""
    while scope is not None and scope.kind != "class":
        scope = scope.parent
    return scope


def _self_attribute(node: ast.AST) -> str | None:
    """``self.<name>``: the name; else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _plain(node: ast.AST) -> bool:
    """A name or ``self.<name>``: what a generator may be held in."""
    return isinstance(node, ast.Name) or _self_attribute(node) is not None


def _inside(scope: _Scope | None, home: _Scope) -> bool:
    while scope is not None:
        if scope is home:
            return True
        scope = scope.parent
    return False


class _Scan:
    """One pass over the module: bindings per scope, data-loading calls with a generator, and every
    name that may be another use of a generator's variable, with its line.

    A function's (or class's) scope holds everything under its node: a ``def``'s decorators,
    defaults and annotations (a class's bases) count as inside it, so a name there that matches a
    variable of an enclosing scope still counts as a use. Names ``ast`` keeps as plain strings
    (parameters, imports, ``global``, ``except ... as``, a class's name, match captures) count as
    uses too, their line read off the text when it is needed. The walk order does not matter:
    data-loading calls are sorted into source order (an outer call before the calls inside it),
    and the first other use of a variable is the one on the lowest line.
    """

    def __init__(self, ctx: RuleContext):
        self.ctx = ctx
        self.loader_args: list[tuple[str, ast.Call, ast.expr, _Scope]] = []
        self.names: list[tuple[ast.Name, _Scope]] = []
        self.identifiers: list[tuple[str, _Scope, Callable[[], int]]] = []  # the names ``ast`` keeps as strings
        self.harmless: set[int] = set()  # ids of Name nodes that are not uses of a variable
        self.attribute_uses: list[tuple[ast.Attribute, _Scope]] = []  # ``self.<name>`` in a class
        self._by_name: dict[str, dict[str, list]] | None = None
        self._defaults: dict[int, ast.expr] = {}  # id of a parameter -> its default, where it is a generator
        self._text = ctx.view.text
        self._positions = ctx.view.positions

    def scan(self, tree: ast.Module) -> None:
        pending: list[tuple[ast.AST, _Scope]] = [(tree, _Scope("module", None))]
        while pending:
            node, scope = pending.pop()
            kind = type(node)
            if kind is ast.Name:
                self.names.append((node, scope))
                continue
            visit = _VISITS.get(kind)
            if visit is not None:
                scope = visit(self, node, scope) or scope
            pending.extend((child, scope) for child in child_nodes(node))

    # scopes (the returned scope is the one the node's children live in)
    def _function(self, node, scope: _Scope) -> _Scope:
        arguments = getattr(node, "args", None)
        if isinstance(arguments, ast.arguments):
            positional = [*arguments.posonlyargs, *arguments.args]
            pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
            pairs += [(arg, default) for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default is not None]
            for arg, default in pairs:
                if self._is_generator(_strip_seeding(default)):
                    self._defaults[id(arg)] = default
        return _Scope("function", scope)

    def _comprehension(self, node, scope: _Scope) -> _Scope:
        return _Scope("comprehension", scope)

    def _class(self, node: ast.ClassDef, scope: _Scope) -> _Scope:
        inner = _Scope("class", scope)
        # The class's name counts as a use inside its own scope: nothing marks it harmless.
        self._identifier(node.name, inner, lambda: self._line_after_keyword(node))
        return inner

    # bindings
    def _bind(self, scope: _Scope, target: ast.AST, value: ast.expr | None) -> None:
        """Record a binding; ``value`` None marks one whose value is not a plain expression (a loop
        target, a parameter, ``del``...), which makes the name unresolvable in that scope."""
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
        """A name ``ast`` holds as a string, a use; ``bind``: also a binding without a plain value
        (a parameter, an ``as`` name, ``global``), which makes the name unresolvable in ``scope``."""
        if bind:
            scope.assignments.setdefault(name, []).append(None)
        self.identifiers.append((name, scope, line))

    def _assign(self, node: ast.Assign, scope: _Scope) -> None:
        # ``g = h = Generator(...)`` makes two names for one generator: the other name's uses
        # cannot be told apart, so neither is a plain binding.
        single = len(node.targets) == 1
        for target in node.targets:
            self._bind(scope, target, node.value if single else None)

    def _ann_assign(self, node: ast.AnnAssign, scope: _Scope) -> None:
        self._bind(scope, node.target, node.value)

    def _rebind(self, node, scope: _Scope) -> None:
        self._bind(scope, node.target, None)

    def _delete(self, node: ast.Delete, scope: _Scope) -> None:
        for target in node.targets:
            self._bind(scope, target, None)

    def _with_item(self, node: ast.withitem, scope: _Scope) -> None:
        if node.optional_vars is not None:
            self._bind(scope, node.optional_vars, None)

    def _parameter(self, node: ast.arg, scope: _Scope) -> None:
        default = self._defaults.get(id(node))
        if default is not None:  # a generator as the default: the parameter's value unless a caller passes another
            scope.assignments.setdefault(node.arg, []).append(default)
            return
        self._identifier(node.arg, scope, lambda: node.lineno, bind=True)

    def _named(self, node: ast.NamedExpr, scope: _Scope) -> None:
        # ``(g := Generator(...))`` binds in its scope; in a comprehension, in the one around it.
        self._bind(scope, node.target, node.value if scope.kind != "comprehension" else None)

    def _attribute(self, node: ast.Attribute, scope: _Scope) -> None:
        if _self_attribute(node) is not None and _class_of(scope) is not None:
            self.attribute_uses.append((node, scope))

    def _alias(self, node: ast.alias, scope: _Scope) -> None:
        if node.name == "*":
            return
        root = node.name.split(".", 1)[0]
        # ``import a`` and ``from m import a`` bind ``a``; ``import a.b`` (which binds ``a`` too) is
        # counted as a use only, which already keeps a generator called ``a`` from being fixed.
        self._identifier(root, scope, lambda: node.lineno, bind=node.asname is None and root == node.name)
        if node.asname is not None:
            self._identifier(node.asname, scope, lambda: node.end_lineno, bind=True)

    def _import_from(self, node: ast.ImportFrom, scope: _Scope) -> None:
        if node.module:
            root = node.module.split(".", 1)[0]
            self._identifier(root, scope, lambda: self._line_after_keyword(node))

    def _handler(self, node: ast.ExceptHandler, scope: _Scope) -> None:
        if node.name is None or node.type is None:
            return
        self._identifier(node.name, scope, lambda: self._line_after_as(node), bind=True)

    def _global(self, node, scope: _Scope) -> None:
        for name in node.names:
            self._identifier(name, scope, lambda name=name: self._line_spelled(node, name), bind=True)

    def _match_name(self, node, scope: _Scope) -> None:
        """``case g``, ``case [*g]``, ``case {**g}``, ``case C(g=...)``: uses, and no binding of a generator."""
        if isinstance(node, ast.MatchClass):
            for name in node.kwd_attrs:
                self._identifier(name, scope, lambda name=name: self._line_spelled(node, name, keyword=True))
            return
        name = node.rest if isinstance(node, ast.MatchMapping) else node.name
        if name is not None:
            self._identifier(name, scope, lambda: self._line_spelled(node, name, last=True))

    # references
    def _expression_statement(self, node: ast.Expr, scope: _Scope) -> None:
        # ``g.manual_seed(0)`` as a statement: its result (g itself) goes nowhere.
        call = node.value
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and _plain(call.func.value) and call.func.attr == "manual_seed"):
            self.harmless.add(id(call.func.value))

    def _call(self, node: ast.Call, scope: _Scope) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in READ_ONLY_METHODS and _plain(func.value):
            self.harmless.add(id(func.value))
        qualified = self.ctx.imports.qualify(func)
        if not qualified or not qualified.startswith(DATA_PACKAGE):
            return
        short = qualified.rsplit(".", 1)[1]
        if short not in GENERATOR_POSITION:
            return
        value = _generator_arg(node, GENERATOR_POSITION[short])
        if value is not None:
            self.loader_args.append((short, node, value, scope))
            # The generator argument itself (also through ``g.manual_seed(n)``) is the use we fix.
            seeded = _strip_seeding(value)
            if _plain(seeded):
                self.harmless.add(id(seeded))

    # lines of the names ``ast`` keeps as strings (asked only of a name that may use a generator)
    def _line_after_keyword(self, node: ast.stmt) -> int:
        """The line of the name after a statement's keyword: ``class C``, ``from m import``."""
        for index, token in enumerate(self._tokens(node)):
            if index and token.kind == tokenize.NAME:
                return token.line
        return node.lineno

    def _line_after_as(self, node: ast.ExceptHandler) -> int:
        """The line of ``e`` in ``except E as e``."""
        after_as = False
        for token in self._tokens(node):
            if token.kind == tokenize.NAME:
                if after_as:
                    return token.line
                after_as = token.string == "as" and token.depth == 0
        return node.lineno

    def _line_spelled(self, node: ast.AST, name: str, *, last: bool = False, keyword: bool = False) -> int:
        """The line of the first name token spelled ``name`` in ``node`` (``global a, b``); ``last``:
        of the last one (``case [x] as name``, ``case {**name}``); ``keyword``: of the one that names
        a keyword of a class pattern (``case C(name=...)``)."""
        line = None
        for token, following in pairwise([*self._tokens(node), None]):
            if token.kind != tokenize.NAME or not _spelled(token.string, name):
                continue
            if keyword and not (token.depth == 1 and following is not None and following.string == "="):
                continue
            if not last:
                return token.line
            line = token.line
        return line if line is not None else node.lineno

    def _tokens(self, node: ast.AST) -> Iterator[_Token]:
        """The tokens of ``node``'s source, each with its line in the file and its bracket depth;
        as far as the tokenizer follows."""
        first = self._positions.offset(node.lineno, node.col_offset)
        stop = self._positions.offset(node.end_lineno, node.end_col_offset)
        depth = 0
        try:
            for token in tokenize.generate_tokens(io.StringIO(self._text[first:stop]).readline):
                if token.type == tokenize.OP and token.string in _CLOSE:
                    depth -= 1
                yield _Token(node.lineno + token.start[0] - 1, depth, token.type, token.string)
                if token.type == tokenize.OP and token.string in _OPEN:
                    depth += 1
        except (tokenize.TokenError, SyntaxError, IndentationError):
            return

    # results
    def origins(self) -> list[_Origin]:
        found: dict[int, _Origin] = {}
        # In source order, an outer call before the calls inside it: the sites' order in messages.
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
        value = _strip_seeding(value)
        if self._is_generator(value):
            return _Origin(value, None)
        if isinstance(value, ast.NamedExpr):  # ``generator=(g := Generator(...))``
            if scope.kind == "comprehension" or len(scope.assignments.get(value.target.id, ())) != 1:
                return None
            inner = _strip_seeding(value.value)
            return _Origin(inner, (value.target.id, scope)) if self._is_generator(inner) else None
        name = _self_attribute(value)
        if name is not None:  # ``generator=self.gen``, bound once in the class
            owner = _class_of(scope)
            assigned = owner.attributes.get(name) if owner is not None else None
            if not assigned or len(assigned) != 1 or assigned[0] is None:
                return None
            bound = _strip_seeding(assigned[0])
            return _Origin(bound, None, attribute=(name, owner)) if self._is_generator(bound) else None
        if not isinstance(value, ast.Name):
            return None
        for candidate in scope.chain():
            assigned = candidate.assignments.get(value.id)
            if assigned is None:
                continue
            if len(assigned) != 1 or assigned[0] is None:
                return None  # rebound (which generator reaches the loader is not decidable here), or no plain value
            bound = _strip_seeding(assigned[0])
            return _Origin(bound, (value.id, candidate)) if self._is_generator(bound) else None
        return None

    def other_use(self, origin: _Origin) -> int | None:
        """The line of the first use of the generator's variable other than seeding or data loading."""
        uses = self._uses_by_name()
        if origin.attribute is not None:
            name, owner = origin.attribute
            lines = [node.lineno for node, scope in uses["attribute"].get(name, ())
                     if id(node) not in self.harmless and _class_of(scope) is owner]
            return min(lines, default=None)
        if origin.variable is None:
            return None
        name, home = origin.variable
        lines = [node.lineno for node, scope in uses["name"].get(name, ())
                 if id(node) not in self.harmless and _inside(scope, home)]
        lines += [line() for _identifier, scope, line in uses["identifier"].get(name, ()) if _inside(scope, home)]
        return min(lines, default=None)

    def _uses_by_name(self) -> dict[str, dict[str, list]]:
        """The names, identifiers and ``self.<name>`` uses the scan found, by name, built once the
        scan is over: a file with many generators asked of every name in it for each one."""
        if self._by_name is None:
            by_name: dict[str, dict[str, list]] = {"name": {}, "identifier": {}, "attribute": {}}
            for entry in self.names:
                by_name["name"].setdefault(entry[0].id, []).append(entry)
            for entry in self.identifiers:
                by_name["identifier"].setdefault(entry[0], []).append(entry)
            for entry in self.attribute_uses:
                by_name["attribute"].setdefault(entry[0].attr, []).append(entry)
            self._by_name = by_name
        return self._by_name


class _Token(NamedTuple):
    line: int
    depth: int
    kind: int
    string: str


_OPEN = frozenset("([{")
_CLOSE = frozenset(")]}")


def _spelled(token: str, name: str) -> bool:
    """Whether a name token is ``name`` as ``ast`` holds it (NFKC-normalised: ``ｇ`` is ``g``)."""
    return token == name or (not token.isascii() and unicodedata.normalize("NFKC", token) == name)


_VISITS = {
    ast.FunctionDef: _Scan._function,
    ast.AsyncFunctionDef: _Scan._function,
    ast.Lambda: _Scan._function,
    # Comprehensions are function scopes: from a class body they see module names.
    ast.ListComp: _Scan._comprehension,
    ast.SetComp: _Scan._comprehension,
    ast.DictComp: _Scan._comprehension,
    ast.GeneratorExp: _Scan._comprehension,
    ast.ClassDef: _Scan._class,
    ast.Assign: _Scan._assign,
    ast.AnnAssign: _Scan._ann_assign,
    ast.AugAssign: _Scan._rebind,
    ast.For: _Scan._rebind,
    ast.AsyncFor: _Scan._rebind,
    ast.comprehension: _Scan._rebind,
    ast.NamedExpr: _Scan._named,
    ast.Attribute: _Scan._attribute,
    ast.Delete: _Scan._delete,
    ast.withitem: _Scan._with_item,
    ast.arg: _Scan._parameter,
    ast.alias: _Scan._alias,
    ast.ImportFrom: _Scan._import_from,
    ast.ExceptHandler: _Scan._handler,
    ast.Global: _Scan._global,
    ast.Nonlocal: _Scan._global,
    ast.MatchAs: _Scan._match_name,
    ast.MatchStar: _Scan._match_name,
    ast.MatchMapping: _Scan._match_name,
    ast.MatchClass: _Scan._match_name,
    ast.Expr: _Scan._expression_statement,
    ast.Call: _Scan._call,
}


def _strip_seeding(value: ast.expr) -> ast.expr:
    """``torch.Generator(...).manual_seed(0)`` -> ``torch.Generator(...)`` (manual_seed returns the generator)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "manual_seed":
        value = value.func.value
    return value


def _generator_arg(call: ast.Call, position: int) -> ast.expr | None:
    """The generator handed to a data-loading call: ``generator=``, or the positional argument at
    ``position`` where no ``*args`` stands before it."""
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
