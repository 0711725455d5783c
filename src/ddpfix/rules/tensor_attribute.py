"""DDP007 tensor-attribute: a plain tensor attribute set in ``__init__`` never follows the module."""

from __future__ import annotations

import ast
import io
import tokenize

from ddpfix.ast_walk import walk
from ddpfix import edits
from ddpfix.edits import Span
from ddpfix.imports import TREE_COMPOUND
from ddpfix.analysis.ast_shapes import every_node, imports_of, may_be, methods
from ddpfix.analysis.lightning import TENSOR_FACTORIES
from ddpfix.analysis.lightning import LIGHTNING_MODULE_ATTRIBUTES
from ddpfix.analysis.lightning import FUNCTIONS, arguments_in_order, lightning_methods
from ddpfix.analysis.tree_text import end, start
from ddpfix.rules.base import Rule, RuleContext, TreeView, clip

# torch functions known to return a tensor, besides the factories.
TENSOR_FUNCTIONS = TENSOR_FACTORIES | frozenset(
    f"torch.{name}" for name in (
        "cat", "stack", "where", "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
        "from_numpy", "as_tensor", "clone", "tril", "triu", "exp", "log", "sqrt", "matmul", "einsum", "cumsum",
        "minimum", "maximum", "clamp", "sigmoid", "softmax", "outer", "diag", "flip", "roll",
    )
)
# Tensor methods whose result is not a tensor.
NON_TENSOR_METHODS = frozenset({"tolist", "item", "numpy", "size", "dim", "numel", "data_ptr", "element_size"})
# Tensor methods that make something else than one tensor (a list, a tuple, a number, a bool): a
# factory call followed by one of them is no plain tensor (and ``register_buffer`` would refuse it).
NOT_A_TENSOR = NON_TENSOR_METHODS | frozenset({
    "split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "sort", "topk", "kthvalue",
    "aminmax", "frexp", "slogdet", "stride", "storage", "untyped_storage", "is_contiguous", "is_floating_point",
    "is_complex", "equal", "allclose", "get_device", "nelement", "ndimension", "__len__", "__repr__", "tobytes",
})
# Without arguments these give a tensor; with a dimension (or flags) a tuple.
TUPLE_WITH_ARGUMENTS = frozenset({"max", "min", "median", "nanmedian", "mode", "unique", "unique_consecutive",
                                  "nonzero", "var_mean", "std_mean"})
# Lightning moves ``example_input_array`` to the device itself when it uses it (model summary, graph
# logging): not the pitfall.
MOVED_BY_LIGHTNING = frozenset({"example_input_array"})


class TensorAttribute(Rule):
    """
    # DDP007 tensor-attribute

    ## What it does
    In a LightningModule's `__init__`, rewrites `self.name = torch.<factory>(...)` (a plain tensor,
    not a Parameter or a Module) to `self.register_buffer("name", torch.<factory>(...),
    persistent=False)`.

    ## Why it breaks under DDP
    Lightning moves the module's parameters and buffers to each rank's device. A plain tensor
    attribute is neither: it stays on the CPU (or on `cuda:0` if it was made there), and the first
    operation that mixes it with the rank's tensors fails with "Expected all tensors to be on the
    same device". A buffer moves with the module; `persistent=False` keeps it out of the
    `state_dict`, so old checkpoints still load.

    ## Before
    ```python
    def __init__(self):
        super().__init__()
        self.mask = torch.ones(16, 16).tril()
    ```

    ## After
    ```python
    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.ones(16, 16).tril(), persistent=False)
    ```

    A name-mangled attribute (`self.__mask` in class `Model`) is registered under the name Python
    stores it by (`"_Model__mask"`), so `self.__mask` still finds the buffer.

    ## When it does not fix
    When the attribute is assigned something other than a tensor or None elsewhere in the class (a
    buffer refuses that), when the class defines `__setattr__`, when the assignment comes before
    `super().__init__()` (a buffer cannot be registered yet), when the name is also a method or
    property of the class, or when it is an attribute of LightningModule itself (`global_step`,
    `device`...: `register_buffer` raises `KeyError`): reported. `self.example_input_array` is not
    reported (Lightning moves it to the device itself), nor is a chain that makes no tensor
    (`torch.arange(10).tolist()`, `.split(2)`, `.max(dim=0)`). An assignment whose target holds a
    comment (`(self.mask  # why\n) = ...`) is reported without a fix: the rewrite would lose it.

    Not reported where every read of the attribute in the class moves it first
    (`self.z.type_as(imgs)`, `self.z.to(self.device)`): the plain tensor breaks nothing there.

    ## Fix safety
    A safe fix also needs the whole project read with no weight averaging named in any file of it
    (`WeightAveraging` in the training script averages the new buffer too): in a partial view (a file
    named alone, stdin, an editor buffer, staged files) the fix is **unsafe**.

    A buffer is not a plain attribute: DDP (`broadcast_buffers=True`, Lightning's default) copies
    rank 0's buffers to every rank when it wraps the module and before every forward; a buffer
    takes only a tensor or None (a float or an ndarray assigned later raises `TypeError`);
    `register_buffer` raises `KeyError` for a name a base class already has; and `.to(dtype)`
    (`precision="16-true"`/`"bf16-true"`, `.half()`, `.double()`) casts floating-point buffers. The
    fix writes `persistent=False`, so `state_dict` keys do not change: old checkpoints still load
    with strict loading, and new ones load into the old code.

    - **safe** when all of this is proven: the class derives only from LightningModule or
      `torch.nn.Module` (or from classes of the file that do and never name the attribute); the
      attribute is never written after `__init__` (no other assignment, `+=`, `[i] =`, `del`,
      in-place method such as `.add_()`, `.copy_()`, `.fill_()`, no `out=`), never kept under
      another name, returned or handed to a call other than `torch.*` functions, a few reading
      builtins (`len`, `print`...) and reading tensor methods (`x.masked_fill(self.mask, 0)`), and
      the class does not walk its buffers (`self.buffers()`, `__dict__`, `getattr`); the values are
      the same on every rank (no random factory, no `torch.empty`, every argument that decides the
      values is a literal, every method after the factory is known); the dtype is bool or an
      integer type gloo and NCCL carry (`int8`, `uint8`, `int32`, `int64`); the name is name-mangled (`self.__mask`), so no other file reaches it; no read
      meets data on the CPU: none in `on_before_batch_transfer`, `transfer_batch_to_device`,
      `prepare_data` or a `*_dataloader` hook (nor a method they call, nor a function defined
      inside a method, such as a collate_fn), and none in an expression that also makes a tensor
      on the CPU (a factory without `device=`, `.cpu()`, `.numpy()`, `.to("cpu")`) or reads a
      local name bound to one; and the file names no weight averaging (`WeightAveraging`,
      `EMAWeightAveraging`, `StochasticWeightAveraging`, torch's `AveragedModel`/`swa_utils`, an
      EMA).
    - **unsafe** otherwise, saying what was not proven: a base class ddpfix does not know (it may
      define the name); a tensor written after `__init__` (as a buffer, each rank's writes would
      be replaced by rank 0's: a per-rank accumulator of label counts [16, 16] became [15, 17]);
      `requires_grad` (a tensor trained by hand needs `nn.Parameter`); random values or values
      built from names ddpfix cannot see (ranks may differ, and DDP makes them rank 0's); a
      floating-point or unknown dtype (cast with the module, where the plain tensor was not); an
      `int16` or unsigned type wider than 8 bits (`.short()`, `torch.uint32`): DDP broadcasts every
      buffer when it wraps the module, and neither gloo ("Invalid scalar type") nor NCCL carries
      them (review round 15); a
      public name, because ddpfix's facts do not follow attributes across files, and a subclass,
      a callback or the training script elsewhere may write it (a float, an ndarray, an update);
      a read beside data on the CPU (the batch in `on_before_batch_transfer`,
      `torch.where(self.mask, torch.zeros(3), torch.ones(3))`): the plain tensor was on the CPU
      there, a buffer is on the rank's GPU ("Expected all tensors to be on the same device"); a
      file that names weight averaging: `AveragedModel(..., use_buffers=True)` (which Lightning's
      `WeightAveraging` builds) averages the buffers too, and fails on a bool one ("Subtraction
      ... with two bool tensors") or an int one on the GPU; weight averaging named in another file
      that may run with this one (the training script) counts too.
    - **no fix**: the cases of *When it does not fix*.
    """

    code = "DDP007"
    gpu_only = True
    name = "tensor-attribute"
    summary = "Plain tensor attribute in __init__: it does not move with the module to the rank's device"
    fixable = True
    triggers = ("__init__", "self.", "torch")
    lightning_only = True
    module_only = True
    uses_facts = True

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """Some class's ``__init__`` has a statement ``self.<name> = <a torch factory call, maybe
        followed by tensor methods>`` (``_tensor_attribute``, whatever the class)."""
        for _cls, method in methods(tree):
            if method.name != "__init__":
                continue
            for statement in method.body:
                if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
                    continue
                target = statement.targets[0]
                if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
                    continue
                imported = imports_of(tree)
                value = statement.value
                while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and not may_be(value.func, TENSOR_FACTORIES, imported):
                    value = value.func.value
                if isinstance(value, ast.Call) and may_be(value.func, TENSOR_FACTORIES, imported):
                    return True
        return False

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """The one analysis: findings, each fix's applicability, and its typed edit (the statement
        rebuilt around its value as a ``register_buffer`` call), which the engine carries out on
        LibCST's tree."""
        # Imported here, not at the top: a run loads every rule, and only files this rule checks need it.
        from ddpfix.rules._tensor_attribute_safety import fix_safety, mangle

        view = ctx.view
        for cls, method in lightning_methods(tree, ctx.imports, ctx.facts.of_kind("LightningModule", ctx.path)):
            if method.name != "__init__" or view.one_line_body(method.body):
                continue  # ``def __init__(self): ...`` on one line: no statement of its own to rebuild
            members = {s.name for s in cls.body if isinstance(s, FUNCTIONS)}
            assignments = _assignments(cls)
            after_super = False
            # Names that are buffers by now: a later ``self.name = tensor`` just sets the buffer's value
            # (so it needs no fix, and the fixed code stays a fixed point).
            buffers: set[str] = set()
            for line in view.statement_lines(method.body):
                if _is_super_init(line):
                    after_super = True
                registered = _registered_buffer(line, view)
                if registered is not None:
                    buffers.add(registered)
                    continue
                name = _tensor_attribute(line, ctx)
                if name is None or mangle(name, cls.name) in buffers or name in MOVED_BY_LIGHTNING:
                    continue
                if _moved_wherever_read(cls, name):
                    continue  # ``self.z.type_as(x)``, ``self.z.to(self.device)``: each use moves it first
                statement = line[0]
                message = (
                    f"self.{name} is a plain tensor: Lightning moves parameters and buffers to each rank's device, "
                    "not plain attributes, so it stays behind (\"Expected all tensors to be on the same device\"); "
                    "register it as a buffer"
                )
                others = [(value, node) for value, node in assignments.get(name, ()) if node is not statement]
                refusal = _refusal(cls, members, others, statement, name, after_super, ctx)
                short = f"self.{name} is a tensor, not a buffer: it stays on one device"
                if refusal:
                    ctx.report(statement, short, detail=f"{message} (not rewritten: {refusal})", fixable=False)
                    continue
                buffer = mangle(name, cls.name)
                why = fix_safety(tree, cls, statement, name, ctx.imports, view.text) or ctx.facts.hazard("weight averaging", ctx.path)
                edit = edits.ReplaceAroundValue(Span.of(ctx.position(statement)),
                                                f'self.register_buffer("{buffer}", {edits.HOLE}, persistent=False)')
                if ctx.report(statement, short, detail=message, fixable=True, safe=why is None, why=why or "", edits=[edit]):
                    buffers.add(buffer)


#: Methods that give a tensor on another device (and dtype): called on the attribute at each read,
#: the attribute's own device does not matter.
MOVING_METHODS = frozenset({"type_as", "to", "cuda"})


def _moved_wherever_read(cls: ast.ClassDef, name: str) -> bool:
    """Every read of ``self.<name>`` in the class is the receiver of a moving call (the basic GAN's
    ``self.validation_z.type_as(imgs)``), and there is one: a plain tensor breaks nothing there."""
    reads = moved = 0
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(cls):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in ast.walk(cls):
        if (isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.ctx, ast.Load)
                and isinstance(node.value, ast.Name) and node.value.id == "self"):
            reads += 1
            method = parents.get(id(node))
            call = parents.get(id(method)) if method is not None else None
            if (isinstance(method, ast.Attribute) and method.value is node and method.attr in MOVING_METHODS
                    and isinstance(call, ast.Call) and call.func is method and (call.args or call.keywords or method.attr == "cuda")):
                moved += 1
    return reads > 0 and moved == reads


def _refusal(cls: ast.ClassDef, members: set[str], others: list[tuple[ast.expr | None, ast.stmt]],
             statement: ast.Assign, name: str, after_super: bool, ctx: RuleContext) -> str | None:
    """Why ``statement`` (``self.<name> = <tensor>`` in ``cls.__init__``) cannot become a buffer at
    all (``register_buffer`` would raise, a later write would, or the rewrite would lose a comment);
    None when it can. ``members``: the class's methods; ``others``: the other assignments of the
    attribute in the class, in source order."""
    if "__setattr__" in members or "register_buffer" in members:
        return "the class defines __setattr__ or register_buffer"
    if name in _class_attributes(cls) or name in _setattr_targets(cls, ctx.view):
        return f"{name} is also set on the class or through setattr"
    if others and others[0][1].lineno < statement.lineno:
        return f"self.{name} is set earlier (line {others[0][1].lineno}), so a buffer of that name cannot be registered"
    if name in members:
        return f"{name} is also a method or property of the class"
    if name in LIGHTNING_MODULE_ATTRIBUTES:
        return f"{name} is an attribute of LightningModule, so register_buffer would raise KeyError"
    if not after_super:
        return "it is set before super().__init__(), where no buffer can be registered"
    bad = next(((value, node) for value, node in others if not _tensor_like(value, name, ctx)), None)
    if bad is not None:
        return f"self.{name} is assigned {_what_is_assigned(bad[0], ctx)} on line {bad[1].lineno}, which a buffer cannot hold"
    if _comment_before_equals(statement, ctx.view):
        return "a comment in the assignment's target would be lost"
    return None


def _comment_before_equals(statement: ast.Assign, view: TreeView) -> bool:
    """Whether a comment stands in ``(self.name  # ...\\n) =``: the fix keeps the value (with its
    own parentheses and comments) and the line's comments, not the target it replaces. The target
    holds no string, so a ``#`` before the first ``=`` after it starts a comment."""
    target_end = end(statement.targets[0], view)
    equals = view.text.index("=", target_end)
    return "#" in view.text[start(statement, view):equals]


def _is_super_init(line: list[ast.stmt]) -> bool:
    """The statement line calls ``super(...).__init__(...)`` (in code: a comment or a string that
    names it is not the call)."""
    if isinstance(line[0], TREE_COMPOUND):
        return False
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__"
        and isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name) and node.func.value.func.id == "super"
        for statement in line for node in walk(statement)
    )


def _single_string(node: ast.expr, view: TreeView) -> str | None:
    """The value of one string literal (``b"..."`` included, as ``str`` writes it); None for a
    non-string and for strings concatenated in the source (``"a" "b"``: a name built that way is
    not followed)."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))):
        return None
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(view.positions.segment(node)).readline)
                  if t.type == tokenize.STRING]
    except (tokenize.TokenError, SyntaxError):
        # Never seen for a literal's own text; taken as one literal, which both callers read as
        # the cautious answer (a name that is a buffer already, or set through setattr).
        return str(node.value)
    return str(node.value) if len(tokens) == 1 else None


def _argument_value(argument: ast.expr | ast.keyword) -> ast.expr:
    """An argument's value: a keyword's value, a starred argument's operand."""
    if isinstance(argument, (ast.keyword, ast.Starred)):
        return argument.value
    return argument


def _registered_buffer(line: list[ast.stmt], view: TreeView) -> str | None:
    """"name" for a statement line ``self.register_buffer("name", ...)``."""
    if len(line) != 1 or not isinstance(line[0], ast.Expr):
        return None
    call = line[0].value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "register_buffer"):
        return None
    owner = call.func.value
    arguments = arguments_in_order(call)
    if not (isinstance(owner, ast.Name) and owner.id == "self") or not arguments:
        return None
    return _single_string(_argument_value(arguments[0]), view)


def _tensor_attribute(line: list[ast.stmt], ctx: RuleContext) -> str | None:
    """"mask" for a line ``self.mask = torch.ones(...)[.tril()...]`` standing alone."""
    if len(line) != 1 or not isinstance(line[0], ast.Assign) or len(line[0].targets) != 1:
        return None
    target = line[0].targets[0]
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
        return None
    return target.attr if _makes_tensor(line[0].value, ctx) else None


def _makes_tensor(value: ast.expr, ctx: RuleContext) -> bool:
    """A torch factory call, possibly followed by tensor methods (``torch.ones(4).tril()``) that
    give a tensor (not ``.tolist()``, ``.split(2)``, ``.max(dim=0)``)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and ctx.imports.qualify(value.func) is None:
        method = value.func.attr
        if method in NOT_A_TENSOR or (method in TUPLE_WITH_ARGUMENTS and (value.args or value.keywords)):
            return False
        value = value.func.value
    return isinstance(value, ast.Call) and ctx.imports.qualify(value.func) in TENSOR_FACTORIES


def _class_attributes(cls: ast.ClassDef) -> set[str]:
    """Names assigned in the class body itself (``mask = None``)."""
    names = set()
    for statement in cls.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else (
            [statement.target] if isinstance(statement, ast.AnnAssign) else []
        )
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _setattr_targets(cls: ast.ClassDef, view: TreeView) -> set[str]:
    """``setattr(self, "name", ...)`` anywhere in the class: names set in a way the rule cannot
    follow (literal names only)."""
    names = set()
    for node in every_node(cls):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"):
            continue
        arguments = arguments_in_order(node)
        if len(arguments) >= 2:
            name = _single_string(_argument_value(arguments[1]), view)
            if name is not None:
                names.add(name)
    return names
def _assignments(cls: ast.ClassDef) -> dict[str, list[tuple[ast.expr | None, ast.stmt]]]:
    """Every ``self.<name> = value`` of the class: (value, the assignment), in source order
    (assignments never nest, so their starts give it); the value is None where unknown (unpacked,
    several targets, annotated without one)."""
    found: dict[str, list] = {}

    def add(target, value, node) -> None:
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            found.setdefault(target.attr, []).append((value, node))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                add(element, None, node)  # unpacked: its value is unknown

    nodes = sorted((n for n in every_node(cls) if isinstance(n, (ast.Assign, ast.AnnAssign))),
                   key=lambda n: (n.lineno, n.col_offset))
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                add(target, node.value if len(node.targets) == 1 else None, node)
        else:
            add(node.target, node.value, node)
    return found


def _what_is_assigned(value: ast.expr | None, ctx: RuleContext) -> str:
    """What a later assignment puts in the attribute, in words that are true of it: an
    ``nn.Parameter`` is a tensor, but one a buffer's name cannot take (Module.__setattr__ would make
    it a parameter); anything else ddpfix does not know to be a plain tensor is named as written."""
    if value is None:
        return "a value through an augmented or deleting statement"
    if isinstance(value, ast.Call):
        qualified = ctx.imports.qualify(value.func) or ""
        if qualified.endswith("nn.Parameter") or qualified.endswith("parameter.Parameter"):
            return "an nn.Parameter (a parameter, not a buffer)"
        return f"{clip(ast.unparse(value.func), 40)}(...), which ddpfix cannot tell is a plain tensor"
    if isinstance(value, ast.Constant):
        return f"a {type(value.value).__name__} constant"
    return f"`{clip(ast.unparse(value), 40)}`, which ddpfix cannot tell is a plain tensor"


def _tensor_like(value: ast.expr | None, name: str, ctx: RuleContext) -> bool:
    """Whether ``value``, assigned to ``self.<name>`` elsewhere, is something a buffer holds: None,
    a tensor from torch, arithmetic, or a tensor method on the attribute itself (``self.mask.to(...)``)."""
    if value is None:
        return False
    if isinstance(value, ast.Constant) and value.value is None:
        return True
    if isinstance(value, ast.Call):
        qualified = ctx.imports.qualify(value.func) or ""
        if qualified in TENSOR_FUNCTIONS or _makes_tensor(value, ctx):
            return True
        func = value.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Attribute)
            and func.value.attr == name
            and func.attr not in NON_TENSOR_METHODS
        ):
            return True
    return isinstance(value, ast.BinOp)
