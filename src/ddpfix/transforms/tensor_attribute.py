"""DDP007 tensor-attribute: a plain tensor attribute set in ``__init__`` never follows the module."""

from __future__ import annotations

import libcst as cst

from ddpfix.transforms._lightning import TENSOR_FACTORIES, lightning_methods
from ddpfix.transforms.base import Rule, RuleContext

# Values that may be assigned to a buffer later: tensors (torch calls, tensor methods), None.
_TENSOR_RESULT_PREFIX = "torch."


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

    ## When it does not fix
    When the attribute is assigned something other than a tensor or None elsewhere in the class (a
    buffer refuses that), when the class defines `__setattr__`, when the assignment comes before
    `super().__init__()` (a buffer cannot be registered yet), or when the name is also a method or
    property of the class: reported.
    """

    code = "DDP007"
    name = "tensor-attribute"
    summary = "Plain tensor attribute in __init__: it does not move with the module to the rank's device"
    fixable = True
    triggers = ("__init__", "self.", "torch")
    uses_facts = True

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        replacements: dict[cst.SimpleStatementLine, cst.SimpleStatementLine] = {}
        for cls, method in lightning_methods(module, ctx.imports, ctx.facts.lightning_modules):
            if method.name.value != "__init__":
                continue
            members = _members(cls)
            other_assignments = _assignments(cls)
            after_super = False
            for statement in method.body.body if isinstance(method.body, cst.IndentedBlock) else ():
                if _is_super_init(statement):
                    after_super = True
                target = _tensor_attribute(statement, ctx)
                if target is None:
                    continue
                name, value = target
                message = (
                    f"self.{name} is a plain tensor: Lightning moves parameters and buffers to each rank's device, "
                    "not plain attributes, so it stays behind (\"Expected all tensors to be on the same device\"); "
                    "register it as a buffer"
                )
                refusal = None
                if "__setattr__" in members:
                    refusal = "the class defines __setattr__"
                elif name in members:
                    refusal = f"{name} is also a method or property of the class"
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
                    replacements[statement] = _register(statement, name, value)
        if not replacements:
            return module
        return module.visit(_ReplaceStatements(replacements))


def _members(cls: cst.ClassDef) -> set[str]:
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    return {s.name.value for s in body if isinstance(s, cst.FunctionDef)}


def _is_super_init(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    code = cst.Module([]).code_for_node(statement)
    return "super(" in code and "__init__(" in code


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
    """A torch factory call, possibly followed by tensor methods (``torch.ones(4).tril()``)."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and ctx.imports.qualify(value.func) is None:
        value = value.func.value
    return isinstance(value, cst.Call) and ctx.imports.qualify(value.func) in TENSOR_FACTORIES


def _assignments(cls: cst.ClassDef) -> dict[str, list[tuple[cst.BaseExpression, cst.CSTNode]]]:
    """Every ``self.<name> = value`` of the class: (value, the Assign node)."""
    found: dict[str, list] = {}

    class Collect(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                t = target.target
                if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                    found.setdefault(t.attr.value, []).append((node.value, node))

    cls.visit(Collect())
    return found


def _tensor_like(value: cst.BaseExpression, name: str, ctx: RuleContext) -> bool:
    if isinstance(value, cst.Name) and value.value == "None":
        return True
    if isinstance(value, cst.Call):
        qualified = ctx.imports.qualify(value.func) or ""
        if qualified.startswith(_TENSOR_RESULT_PREFIX) or _makes_tensor(value, ctx):
            return True
        func = value.func
        # ``self.mask.to(...)``, ``self.mask.clone()``: a tensor method on the attribute itself.
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute) and func.value.attr.value == name:
            return True
    if isinstance(value, cst.BinaryOperation):
        return True  # arithmetic on tensors gives tensors; on a buffer that is what it holds
    return False


def _register(statement: cst.SimpleStatementLine, name: str, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    call = cst.parse_expression(f'self.register_buffer("{name}", VALUE, persistent=False)')
    call = call.with_changes(args=[call.args[0], call.args[1].with_changes(value=value), call.args[2]])
    return statement.with_changes(body=[cst.Expr(call)])


class _ReplaceStatements(cst.CSTTransformer):
    def __init__(self, replacements):
        super().__init__()
        self.replacements = replacements

    def leave_SimpleStatementLine(self, original_node, updated_node):
        return self.replacements.get(original_node, updated_node)
