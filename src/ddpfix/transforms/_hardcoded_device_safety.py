"""When DDP006's fixes are safe: what CPython's tree proves about a file, a hook and a tensor's uses.

Only ``hardcoded_device.check`` asks (applicability is decided on CPython's tree). Every test is an
allowlist: what is not shown here to be harmless makes a fix unsafe.
"""

from __future__ import annotations

import ast
import re

from ddpfix.transforms import _tree_lightning as tree_lightning
from ddpfix.transforms._lightning import lightning_name

# Factories whose values do not depend on where they are made. The random ones draw from the
# device's generator once given a device: other numbers, and the CPU generator no longer advances.
DETERMINISTIC_FACTORIES = frozenset(
    f"torch.{name}" for name in ("zeros", "ones", "empty", "full", "arange", "linspace", "eye", "tensor")
)
RANDOM_FACTORIES = frozenset(f"torch.{name}" for name in ("rand", "randn", "randint"))
# Arithmetic whose CPU and CUDA results agree wherever mixing the devices does not fail: a CUDA
# operand with a CPU one fails unless the CPU one is 0-dimensional, and then the op runs on CUDA.
SAFE_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult)
# Where each step hook gets the batch that Lightning's loops moved to the module's device (the
# position among the parameters after ``self``). ``on_before_batch_transfer`` is not here: the
# batch is still on the CPU there.
_STEPS = ("training_step", "validation_step", "test_step", "predict_step", "on_after_batch_transfer")
_STAGES = ("train", "validation", "test", "predict")
BATCH_POSITION = {
    **{name: 0 for name in _STEPS},
    **{f"on_{stage}_batch_start": 0 for stage in _STAGES},
    **{f"on_{stage}_batch_end": 1 for stage in _STAGES},
}
_ORDINAL = re.compile(r"cuda:(\d+)")


def ddp_file(tree: ast.Module, imports) -> bool:
    """The file builds a Trainer (or Fabric), and every one it builds has a literal DDP strategy:
    the module this file trains runs one process per GPU, where ``self.device`` is the rank's."""
    builders = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
                and lightning_name(imports, node.func) in ("Trainer", "Fabric")]
    if not builders:
        return False
    for call in builders:
        strategy = tree_lightning.keyword(call, "strategy")
        if strategy is None or not tree_lightning.is_ddp_strategy(strategy.value, imports):
            return False
    return True


def other_ordinals(tree: ast.Module) -> list[int]:
    """CUDA devices other than 0 that the file names (``"cuda:1"``, ``.cuda(1)``, ``.to(1)``,
    ``torch.device("cuda", 1)``, ``device=1``): the file places parts of its work on chosen GPUs
    (model parallelism), and one ``self.device`` for all would move them."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(int(n) for n in _ORDINAL.findall(node.value) if int(n) != 0)
        elif isinstance(node, ast.Call):
            values = [k.value for k in node.keywords if k.arg == "device"]
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("cuda", "to", "device") and node.args:
                values.append(node.args[0])
            if last_name(func) == "device" and len(node.args) > 1:
                values.append(node.args[1])  # torch.device("cuda", 1)
            for value in values:
                if isinstance(value, ast.Constant) and type(value.value) is int and value.value != 0:
                    found.add(value.value)
    return sorted(found)


def last_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


class MethodFacts:
    """What one hook's body shows: its parents, how often each name is bound, the batch names."""

    def __init__(self, method: ast.FunctionDef | ast.AsyncFunctionDef):
        self.method = method
        self.parents: dict[int, ast.AST] = {}
        self.stores: dict[str, int] = {}
        self.loads: dict[str, list[ast.Name]] = {}
        for node in ast.walk(method):
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    self.loads.setdefault(node.id, []).append(node)
                else:
                    self.stores[node.id] = self.stores.get(node.id, 0) + 1
            elif isinstance(node, ast.arg):
                self.stores[node.arg] = self.stores.get(node.arg, 0) + 1
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for name in node.names:
                    self.stores[name] = self.stores.get(name, 0) + 2  # never a single binding
        self.batch: set[str] = set()
        self._batch_names()

    def _batch_names(self) -> None:
        """The hook's batch parameter (moved by Lightning before the hook runs) and the names bound
        once from it (``x, y = batch``, ``images = batch["images"]``)."""
        position = BATCH_POSITION.get(self.method.name)
        arguments = self.method.args
        params = [a.arg for a in (*arguments.posonlyargs, *arguments.args)][1:]
        if position is None or position >= len(params):
            return
        batch = params[position]
        if batch == "dataloader_iter" or self.stores.get(batch) != 1:
            return  # ``training_step(self, dataloader_iter)``: Lightning moves nothing
        names = self.batch
        names.add(batch)
        grew = True
        while grew:
            grew = False
            for node in ast.walk(self.method):
                if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not self.on_device(node.value):
                    continue
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    targets = [target]
                elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(node.value, ast.Name):
                    targets = target.elts  # ``x, y = batch``: each element of the moved batch
                else:
                    continue
                for element in targets:
                    if isinstance(element, ast.Name) and element.id not in names and self.stores.get(element.id) == 1:
                        names.add(element.id)
                        grew = True

    def on_device(self, node: ast.expr) -> bool:
        """A tensor of the moved batch: a batch name, or an item or slice of one."""
        if isinstance(node, ast.Name):
            return node.id in self.batch
        if isinstance(node, ast.Subscript):
            return self.on_device(node.value)
        return False

    def factory_uses_are_math(self, call: ast.Call) -> tuple[bool, str]:
        """Whether every use of a factory's tensor is arithmetic with a tensor of the moved batch:
        there a CPU tensor either fails ("Expected all tensors to be on the same device") or, being
        0-dimensional, gives the same result as one on the device. (ok, what is not proven)."""
        parent = self.parents.get(id(call))
        if isinstance(parent, ast.Assign) and parent.value is call:
            if len(parent.targets) != 1 or not isinstance(parent.targets[0], ast.Name):
                return False, "the tensor is bound to something other than one local name"
            name = parent.targets[0].id
            if self.stores.get(name) != 1:
                return False, f"`{name}` is bound more than once in {self.method.name}"
            for load in self.loads.get(name, ()):
                if not self._math_with_batch(load):
                    return False, (f"`{name}` is used other than in arithmetic with a tensor of the batch "
                                   "(it may be meant for the CPU: indexing, .numpy(), a library call)")
            return True, ""
        if self._math_with_batch(call):
            return True, ""
        return False, ("the tensor is used other than in arithmetic with a tensor of the batch (it may be "
                       "meant for the CPU: indexing, .numpy(), a library call)")

    def _math_with_batch(self, node: ast.expr) -> bool:
        parent = self.parents.get(id(node))
        if not isinstance(parent, ast.BinOp) or not isinstance(parent.op, SAFE_OPERATORS):
            return False
        other = parent.right if parent.left is node else parent.left
        return self.on_device(other)
