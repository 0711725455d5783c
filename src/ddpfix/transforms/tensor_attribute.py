"""DDP007 tensor-attribute: a plain tensor attribute set in ``__init__`` never follows the module."""

from __future__ import annotations

import ast
import io
import tokenize

import libcst as cst

from ddpfix.transforms._args import TargetedTransformer
from ddpfix.transforms._ast_shapes import imports_of, may_be, methods
from ddpfix.imports import TREE_COMPOUND
from ddpfix.transforms._lightning import TENSOR_FACTORIES, lightning_methods
from ddpfix.transforms._tensor_attribute_safety import LIGHTNING_MODULE_ATTRIBUTES, fix_safety, mangle
from ddpfix.transforms._tree_lightning import FUNCTIONS, arguments_in_order
from ddpfix.transforms._tree_lightning import lightning_methods as tree_lightning_methods
from ddpfix.transforms.base import NeedsLibCST, Rule, RuleContext, TreeView
from ddpfix.transforms._walk import walk

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
    (`torch.arange(10).tolist()`, `.split(2)`, `.max(dim=0)`).

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
      values is a literal, every method after the factory is known); the dtype is bool or
      integer; the name is name-mangled (`self.__mask`), so no other file reaches it; no read
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
      floating-point or unknown dtype (cast with the module, where the plain tensor was not); a
      public name, because ddpfix's facts do not follow attributes across files, and a subclass,
      a callback or the training script elsewhere may write it (a float, an ndarray, an update);
      a read beside data on the CPU (the batch in `on_before_batch_transfer`,
      `torch.where(self.mask, torch.zeros(3), torch.ones(3))`): the plain tensor was on the CPU
      there, a buffer is on the rank's GPU ("Expected all tensors to be on the same device"); a
      file that names weight averaging: `AveragedModel(..., use_buffers=True)` (which Lightning's
      `WeightAveraging` builds) averages the buffers too, and fails on a bool one ("Subtraction
      ... with two bool tensors") or an int one on the GPU. Weight averaging named only in another
      file (the training script) is not seen: ddpfix's facts do not record it.
    - **no fix**: the cases of *When it does not fix*.
    """

    code = "DDP007"
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

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        replacements: dict[cst.SimpleStatementLine, cst.SimpleStatementLine] = {}
        for cls, method in lightning_methods(module, ctx.imports, ctx.facts.lightning_modules):
            if method.name.value != "__init__":
                continue
            members = _members(cls)
            other_assignments = _assignments(cls)
            after_super = False
            # Names that are buffers by now: a later ``self.name = tensor`` just sets the buffer's value
            # (so it needs no fix, and the fixed code stays a fixed point).
            buffers: set[str] = set()
            for statement in method.body.body if isinstance(method.body, cst.IndentedBlock) else ():
                if _is_super_init(statement):
                    after_super = True
                registered = _registered_buffer(statement)
                if registered is not None:
                    buffers.add(registered)
                    continue
                target = _tensor_attribute(statement, ctx)
                if target is None:
                    continue
                name, value = target
                if mangle(name, cls.name.value) in buffers or name in MOVED_BY_LIGHTNING:
                    continue
                message = (
                    f"self.{name} is a plain tensor: Lightning moves parameters and buffers to each rank's device, "
                    "not plain attributes, so it stays behind (\"Expected all tensors to be on the same device\"); "
                    "register it as a buffer"
                )
                refusal = None
                earlier = [node for value, node in other_assignments.get(name, ()) if node is not statement.body[0]]
                if "__setattr__" in members or "register_buffer" in members:
                    refusal = "the class defines __setattr__ or register_buffer"
                elif name in _class_attributes(cls) or name in _setattr_targets(cls):
                    refusal = f"{name} is also set on the class or through setattr"
                elif earlier and _line_of(ctx, earlier[0]) < _line_of(ctx, statement):
                    refusal = f"self.{name} is set earlier (line {_line_of(ctx, earlier[0])}), so a buffer of that name cannot be registered"
                elif name in members:
                    refusal = f"{name} is also a method or property of the class"
                elif name in LIGHTNING_MODULE_ATTRIBUTES:
                    refusal = f"{name} is an attribute of LightningModule, so register_buffer would raise KeyError"
                elif not after_super:
                    refusal = "it is set before super().__init__(), where no buffer can be registered"
                else:
                    own = statement.body[0]
                    bad = next(
                        (node for value, node in other_assignments.get(name, ()) if node is not own and not _tensor_like(value, name, ctx)),
                        None,
                    )
                    if bad is not None:
                        refusal = f"self.{name} is assigned a non-tensor on line {ctx.position(bad).start.line}"
                if refusal:
                    ctx.report(statement, f"{message} (not rewritten: {refusal})", fixable=False)
                elif ctx.report(statement, message, fixable=True):
                    replacements[statement] = _register(statement, mangle(name, cls.name.value), value)
                    buffers.add(mangle(name, cls.name.value))
        if not replacements:
            return module
        return module.visit(_ReplaceStatements(replacements, ctx.view.positions))

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """``apply`` on CPython's tree, for the runs that only report."""
        view = ctx.view
        for cls, method in tree_lightning_methods(tree, ctx.imports, ctx.facts.lightning_modules):
            if method.name != "__init__" or view.one_line_body(method.body):
                continue  # ``def __init__(self): ...`` on one line: apply reads no statements there
            members = {s.name for s in cls.body if isinstance(s, FUNCTIONS)}
            other_assignments = _tree_assignments(cls)
            after_super = False
            buffers: set[str] = set()  # as in apply: a later ``self.name = tensor`` just sets the buffer
            for line in view.statement_lines(method.body):
                if _tree_is_super_init(line):
                    after_super = True
                registered = _tree_registered_buffer(line, view)
                if registered is not None:
                    buffers.add(registered)
                    continue
                name = _tree_tensor_attribute(line, ctx)
                if name is None or mangle(name, cls.name) in buffers or name in MOVED_BY_LIGHTNING:
                    continue
                statement = line[0]
                # The message and refusals are apply's, word for word (the two paths are compared).
                message = (
                    f"self.{name} is a plain tensor: Lightning moves parameters and buffers to each rank's device, "
                    "not plain attributes, so it stays behind (\"Expected all tensors to be on the same device\"); "
                    "register it as a buffer"
                )
                refusal = None
                others = [(value, node) for value, node in other_assignments.get(name, ()) if node is not statement]
                if "__setattr__" in members or "register_buffer" in members:
                    refusal = "the class defines __setattr__ or register_buffer"
                elif name in _tree_class_attributes(cls) or name in _tree_setattr_targets(cls, view):
                    refusal = f"{name} is also set on the class or through setattr"
                elif others and others[0][1].lineno < statement.lineno:
                    refusal = f"self.{name} is set earlier (line {others[0][1].lineno}), so a buffer of that name cannot be registered"
                elif name in members:
                    refusal = f"{name} is also a method or property of the class"
                elif name in LIGHTNING_MODULE_ATTRIBUTES:
                    refusal = f"{name} is an attribute of LightningModule, so register_buffer would raise KeyError"
                elif not after_super:
                    refusal = "it is set before super().__init__(), where no buffer can be registered"
                else:
                    bad = next((node for value, node in others if not _tree_tensor_like(value, name, ctx)), None)
                    if bad is not None:
                        refusal = f"self.{name} is assigned a non-tensor on line {bad.lineno}"
                if refusal:
                    ctx.report(statement, f"{message} (not rewritten: {refusal})", fixable=False)
                else:
                    why = (fix_safety(tree, cls, statement, name, ctx.imports, ctx.view.text)
                           or ctx.facts.hazard("weight averaging"))
                    # never fixed here: nothing to remember
                    ctx.report(statement, message, fixable=True, safe=why is None, why=why or "")


def _line_of(ctx: RuleContext, node: cst.CSTNode) -> int:
    return ctx.position(node).start.line


def _class_attributes(cls: cst.ClassDef) -> set[str]:
    """Names assigned in the class body itself (``mask = None``)."""
    names = set()
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else (
                    [small.target] if isinstance(small, cst.AnnAssign) else []
                )
                names.update(t.value for t in targets if isinstance(t, cst.Name))
    return names


def _setattr_targets(cls: cst.ClassDef) -> set[str]:
    """``setattr(self, "name", ...)``: names set in a way the rule cannot follow (any, if not a literal)."""
    names: set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "setattr" and len(node.args) >= 2:
                target = node.args[1].value
                if isinstance(target, cst.SimpleString):
                    names.add(str(target.evaluated_value))

    walk(cls, Collect())
    return names


def _members(cls: cst.ClassDef) -> set[str]:
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    return {s.name.value for s in body if isinstance(s, cst.FunctionDef)}


def _is_super_init(statement: cst.CSTNode) -> bool:
    """The statement line calls ``super(...).__init__(...)`` (in code: a comment or a string that
    names it is not the call)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    found = False

    class Find(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            nonlocal found
            func = call.func
            found |= (isinstance(func, cst.Attribute) and func.attr.value == "__init__" and isinstance(func.value, cst.Call)
                      and isinstance(func.value.func, cst.Name) and func.value.func.value == "super")

    walk(statement, Find())
    return found


def _registered_buffer(statement: cst.CSTNode) -> str | None:
    """"name" for a statement ``self.register_buffer("name", ...)``."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    call = statement.body[0].value if isinstance(statement.body[0], cst.Expr) else None
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "register_buffer"):
        return None
    owner = call.func.value
    if not (isinstance(owner, cst.Name) and owner.value == "self") or not call.args:
        return None
    first = call.args[0].value
    return str(first.evaluated_value) if isinstance(first, cst.SimpleString) else None


def _tensor_attribute(statement: cst.CSTNode, ctx: RuleContext) -> tuple[str, cst.BaseExpression] | None:
    """("mask", value) for ``self.mask = torch.ones(...)[.tril()...]`` standing alone on its line."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return None
    target = assign.targets[0].target
    if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"):
        return None
    return (target.attr.value, assign.value) if _makes_tensor(assign.value, ctx) else None


def _makes_tensor(value: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A torch factory call, possibly followed by tensor methods (``torch.ones(4).tril()``) that
    give a tensor (not ``.tolist()``, ``.split(2)``, ``.max(dim=0)``)."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and ctx.imports.qualify(value.func) is None:
        method = value.func.attr.value
        if method in NOT_A_TENSOR or (method in TUPLE_WITH_ARGUMENTS and value.args):
            return False
        value = value.func.value
    return isinstance(value, cst.Call) and ctx.imports.qualify(value.func) in TENSOR_FACTORIES


def _assignments(cls: cst.ClassDef) -> dict[str, list[tuple[cst.BaseExpression, cst.CSTNode]]]:
    """Every ``self.<name> = value`` of the class: (value, the Assign node)."""
    found: dict[str, list] = {}

    def add(target, value, node) -> None:
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            found.setdefault(target.attr.value, []).append((value, node))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                add(element.value, None, node)  # unpacked: its value is unknown

    class Collect(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                add(target.target, node.value if len(node.targets) == 1 else None, node)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            add(node.target, node.value, node)

    walk(cls, Collect())
    return found


def _tensor_like(value: cst.BaseExpression | None, name: str, ctx: RuleContext) -> bool:
    if value is None:
        return False  # unpacked from a tuple, or annotated without a value: unknown
    if isinstance(value, cst.Name) and value.value == "None":
        return True
    if isinstance(value, cst.Call):
        qualified = ctx.imports.qualify(value.func) or ""
        if qualified in TENSOR_FUNCTIONS or _makes_tensor(value, ctx):
            return True
        func = value.func
        # ``self.mask.to(...)``, ``self.mask.clone()``: a tensor method on the attribute itself.
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Attribute)
            and func.value.attr.value == name
            and func.attr.value not in NON_TENSOR_METHODS
        ):
            return True
    if isinstance(value, cst.BinaryOperation):
        return True  # arithmetic on tensors gives tensors; on a buffer that is what it holds
    return False


def _register(statement: cst.SimpleStatementLine, name: str, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    call = cst.parse_expression(f'self.register_buffer("{name}", VALUE, persistent=False)')
    call = call.with_changes(args=[call.args[0], call.args[1].with_changes(value=value), call.args[2]])
    return statement.with_changes(body=[cst.Expr(call)])


class _ReplaceStatements(TargetedTransformer):
    def __init__(self, replacements, positions=None):
        super().__init__(replacements, positions)
        self.replacements = replacements

    def leave_SimpleStatementLine(self, original_node, updated_node):
        return self.replacements.get(original_node, updated_node)


# --- the same questions on CPython's tree (``check``) ------------------------------------------


def _line_end(view: TreeView, line: int) -> int:
    """The offset just past ``line`` (its newline included)."""
    try:
        return view.positions.line_start(line + 1)
    except IndexError:
        return len(view.text)


def _tree_is_super_init(line: list[ast.stmt]) -> bool:
    """``_is_super_init`` on CPython's tree: the statement line calls ``super(...).__init__(...)``."""
    if isinstance(line[0], TREE_COMPOUND):
        return False
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__"
        and isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name) and node.func.value.func.id == "super"
        for statement in line for node in ast.walk(statement)
    )


def _single_string(node: ast.expr, view: TreeView) -> str | None:
    """``str(evaluated_value)`` of what LibCST calls a ``SimpleString`` (one literal, ``b"..."``
    included); None for strings concatenated in the source (LibCST: ``ConcatenatedString``)."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))):
        return None
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(view.positions.segment(node)).readline)
                  if t.type == tokenize.STRING]
    except (tokenize.TokenError, SyntaxError):
        raise NeedsLibCST("a string literal the tokenizer cannot follow") from None
    return str(node.value) if len(tokens) == 1 else None


def _argument_value(argument: ast.expr | ast.keyword) -> ast.expr:
    """The value LibCST's ``Arg`` holds: a keyword's value, a starred argument's operand."""
    if isinstance(argument, (ast.keyword, ast.Starred)):
        return argument.value
    return argument


def _tree_registered_buffer(line: list[ast.stmt], view: TreeView) -> str | None:
    """``_registered_buffer``: "name" for a statement line ``self.register_buffer("name", ...)``."""
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


def _tree_tensor_attribute(line: list[ast.stmt], ctx: RuleContext) -> str | None:
    """``_tensor_attribute``: "mask" for a line ``self.mask = torch.ones(...)[.tril()...]`` alone."""
    if len(line) != 1 or not isinstance(line[0], ast.Assign) or len(line[0].targets) != 1:
        return None
    target = line[0].targets[0]
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
        return None
    return target.attr if _tree_makes_tensor(line[0].value, ctx) else None


def _tree_makes_tensor(value: ast.expr, ctx: RuleContext) -> bool:
    """``_makes_tensor``."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and ctx.imports.qualify(value.func) is None:
        method = value.func.attr
        if method in NOT_A_TENSOR or (method in TUPLE_WITH_ARGUMENTS and (value.args or value.keywords)):
            return False
        value = value.func.value
    return isinstance(value, ast.Call) and ctx.imports.qualify(value.func) in TENSOR_FACTORIES


def _tree_class_attributes(cls: ast.ClassDef) -> set[str]:
    """``_class_attributes``: names assigned in the class body itself."""
    names = set()
    for statement in cls.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else (
            [statement.target] if isinstance(statement, ast.AnnAssign) else []
        )
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _tree_setattr_targets(cls: ast.ClassDef, view: TreeView) -> set[str]:
    """``_setattr_targets``: literal names of ``setattr(self, "name", ...)`` anywhere in the class."""
    names = set()
    for node in ast.walk(cls):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"):
            continue
        arguments = arguments_in_order(node)
        if len(arguments) >= 2:
            name = _single_string(_argument_value(arguments[1]), view)
            if name is not None:
                names.add(name)
    return names


def _tree_assignments(cls: ast.ClassDef) -> dict[str, list[tuple[ast.expr | None, ast.stmt]]]:
    """``_assignments``: every ``self.<name> = value`` of the class, in source order (LibCST's walk;
    assignments never nest, so their starts give it)."""
    found: dict[str, list] = {}

    def add(target, value, node) -> None:
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            found.setdefault(target.attr, []).append((value, node))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                add(element, None, node)  # unpacked: its value is unknown

    nodes = sorted((n for n in ast.walk(cls) if isinstance(n, (ast.Assign, ast.AnnAssign))),
                   key=lambda n: (n.lineno, n.col_offset))
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                add(target, node.value if len(node.targets) == 1 else None, node)
        else:
            add(node.target, node.value, node)
    return found


def _tree_tensor_like(value: ast.expr | None, name: str, ctx: RuleContext) -> bool:
    """``_tensor_like``."""
    if value is None:
        return False
    if isinstance(value, ast.Constant) and value.value is None:
        return True
    if isinstance(value, ast.Call):
        qualified = ctx.imports.qualify(value.func) or ""
        if qualified in TENSOR_FUNCTIONS or _tree_makes_tensor(value, ctx):
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
