"""DDP007's proof that turning ``self.name = torch.<factory>(...)`` into a non-persistent buffer
changes nothing the program computes except where the tensor lives (``check`` only).

A buffer is not a plain attribute: ``register_buffer`` raises ``KeyError`` for a name the class
or a base already has, assigning it a float or an ndarray later raises ``TypeError``, DDP
(``broadcast_buffers=True``, Lightning's default) copies rank 0's buffers to every rank when it
wraps the module and before every forward, and ``module.to(dtype)`` (``precision="16-true"``,
``.half()``, ``.double()``) casts floating-point buffers. So a fix is safe only where all of these
are known not to matter (an allowlist; anything else is unsafe, with what was not proven):

* the class derives only from LightningModule / ``torch.nn.Module`` (directly or through classes
  of this file that are checked too): an unknown base may define or write the name;
* the value is built on every rank alike: no random factory, no ``torch.empty``, and every
  argument that decides the values (not the shape) is a literal; every method in the chain is one
  known to compute values from its literal arguments;
* its dtype is known not to be floating point, so no ``.to(dtype)`` casts it;
* nothing writes it after ``__init__``: no other assignment, ``+=``, ``[i] =``, ``del``, in-place
  method (``.add_()``, ``.copy_()``...), and it is never kept under another name or handed to a
  call that is not known to leave its arguments alone; the class does not walk its buffers;
* no other file can reach it: the name is private to the class by Python's name mangling
  (``self.__name``), since ddpfix's facts do not follow attributes across files.
* no read meets data on the CPU (a hook that works on the CPU's data, a tensor made without a
  device beside it): there the plain tensor was on the CPU and a buffer is on the rank's GPU;
* the file names no weight averaging (``AveragedModel(use_buffers=True)`` averages buffers, and
  cannot average a bool or an int one).
"""

from __future__ import annotations

import ast

from ddpfix.ast_walk import child_nodes, walk
from ddpfix.facts import PROJECT_HAZARDS
from ddpfix.imports import ImportTable
from ddpfix.lazy_regex import lazy_compile
from ddpfix.analysis.ast_shapes import every_node
from ddpfix.analysis.lightning import lightning_name
from ddpfix.analysis.names import bound_names

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)

RANDOM_FACTORIES = frozenset(f"torch.{n}" for n in ("rand", "randn", "randint", "randperm", "rand_like", "randn_like",
                                                    "normal", "bernoulli", "multinomial", "poisson"))
SIZE_ONLY_FACTORIES = frozenset(f"torch.{n}" for n in ("zeros", "ones", "eye"))
# Keywords of a factory that decide neither values nor placement on the rank.
FACTORY_KEYWORDS = frozenset({"dtype", "device", "layout", "pin_memory", "memory_format", "size"})

INT_DTYPES = frozenset(f"torch.{n}" for n in ("int8", "uint8", "int32", "int64", "int", "long"))
#: Integer dtypes that neither gloo nor NCCL carries: DDP broadcasts every buffer when it wraps the
#: module, and stops with "Invalid scalar type" (gloo, run in review round 15) or an unsupported
#: NCCL type. As a plain tensor attribute nothing synced it.
UNCARRIED_DTYPES = frozenset(f"torch.{n}" for n in ("int16", "short", "uint16", "uint32", "uint64"))
FLOAT_DTYPES = frozenset(f"torch.{n}" for n in ("float", "float16", "float32", "float64", "bfloat16", "half", "double",
                                                "complex64", "complex128", "cfloat", "cdouble"))

# Methods of a tensor that keep the values' kind and only reshape, copy or move them (any arguments).
LAYOUT_METHODS = frozenset({"view", "reshape", "unsqueeze", "squeeze", "expand", "repeat", "permute", "transpose",
                            "t", "flatten", "contiguous", "clone", "detach", "flip", "cpu", "cuda"})
# Methods whose values follow from the tensor and their literal arguments, keeping the dtype.
VALUE_METHODS = frozenset({"tril", "triu", "neg", "abs", "roll", "diag", "diagonal", "fliplr", "flipud"})
TO_BOOL = frozenset({"bool", "eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and", "logical_or"})
TO_INT = frozenset({"long", "int", "byte", "char"})
TO_FLOAT = frozenset({"float", "half", "double", "bfloat16"})

# Tensor methods that read their tensor arguments and return a new tensor (``x.masked_fill(self.mask, 0)``).
READING_METHODS = frozenset({
    "masked_fill", "masked_select", "matmul", "mm", "bmm", "mul", "add", "sub", "div", "where", "type_as", "to",
    "expand_as", "view_as", "reshape_as", "index_select", "gather", "eq", "ne", "lt", "le", "gt", "ge", "maximum",
    "minimum", "pow", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "dot", "outer",
})
# Builtins that read a tensor and keep no reference to it.
READING_BUILTINS = frozenset({"len", "print", "isinstance", "float", "int", "bool", "str", "repr", "format"})
# Parents through which the same object (or a view of it) flows on.
PASS_THROUGH = (ast.IfExp, ast.BoolOp)
# Parents that only read the value and make something new of it.
READING_PARENTS = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.FormattedValue, ast.Assert, ast.If, ast.While, ast.Expr)


def mangle(name: str, class_name: str) -> str:
    """The name Python stores ``self.<name>`` under inside class ``class_name``."""
    stripped = class_name.lstrip("_")
    if name.startswith("__") and not name.endswith("__") and stripped:
        return f"_{stripped}{name}"
    return name


def fix_safety(tree: ast.Module, cls: ast.ClassDef, statement: ast.Assign, name: str, imports: ImportTable,
               text: str = "") -> str | None:
    """None when the fix of ``statement`` (``self.<name> = <tensor>`` in ``cls.__init__``) is proven
    safe; else what was not proven (the finding's ``why``). ``text``: the file's source."""
    for question in (
        lambda: _requires_grad(statement.value, imports),
        lambda: _averaging(text),
        lambda: _bases(tree, cls, name, imports, set()),
        lambda: _writes(tree, cls, statement, name, imports),
        lambda: _reads_beside_cpu_data(tree, cls, statement, name, imports),
        lambda: _value(statement.value, imports),
        lambda: _other_files(name),
    ):
        try:
            why = question()
        except RecursionError:
            return "an expression nested too deeply to analyse"
        if why is not None:
            return why
    return None


def _segment(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # pragma: no cover - unparse covers every expression
        return "an expression"
    return text if len(text) <= 40 else text[:37] + "..."


# --- the class and its bases -------------------------------------------------------------------


def _bases(tree: ast.Module, cls: ast.ClassDef, name: str, imports: ImportTable, seen: set[str]) -> str | None:
    """None when every base of ``cls`` is LightningModule, ``torch.nn.Module`` or a class of this
    file that is the same and never names ``name``."""
    if cls.keywords:
        return f"{cls.name} has class keywords (a metaclass?) that may define attributes"
    seen.add(cls.name)
    local = {c.name: c for c in every_node(tree) if isinstance(c, ast.ClassDef)}
    for base in cls.bases:
        if lightning_name(imports, base) == "LightningModule" or imports.qualify(base) == "torch.nn.Module":
            continue
        if isinstance(base, ast.Name) and base.id in local and base.id not in seen:
            parent = local[base.id]
            if _names(parent, name):
                return f"base class {parent.name} uses the name {name} too"
            why = _bases(tree, parent, name, imports, seen)
            if why is None:
                continue
            return why
        return f"base class {_segment(base)} is not known: it may define the name or write it"
    return None


def _names(cls: ast.ClassDef, name: str) -> bool:
    """``cls`` names ``name`` as an attribute, a method or a class attribute."""
    return any(
        (isinstance(n, ast.Attribute) and n.attr == name) or (isinstance(n, FUNCTIONS) and n.name == name)
        or (isinstance(n, ast.Name) and n.id == name)
        for n in every_node(cls)
    )


# --- the value -----------------------------------------------------------------------------------


def _literal(node: ast.expr) -> object:
    """The value of a literal (numbers, bools, nested lists/tuples, arithmetic on them); raises
    ValueError for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float, complex)):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal(node.operand)
        if isinstance(value, list):
            raise ValueError
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        left, right = _literal(node.left), _literal(node.right)
        if isinstance(left, list) or isinstance(right, list) or isinstance(left, bool) or isinstance(right, bool):
            raise ValueError
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ValueError
        if any(isinstance(v, int) and v.bit_length() > 256 for v in (left, right)):
            raise ValueError  # not a literal anyone writes for a tensor: not worth computing
        try:
            return {ast.Add: lambda: left + right, ast.Sub: lambda: left - right, ast.Mult: lambda: left * right,
                    ast.Div: lambda: left / right, ast.Pow: lambda: left ** right}[type(node.op)]()
        except (ArithmeticError, ValueError, TypeError):
            raise ValueError from None
    raise ValueError


def _is_literal(node: ast.expr) -> bool:
    try:
        _literal(node)
    except ValueError:
        return False
    return True


def _kind_of_literal(value: object) -> str:
    """"bool", "int" or "float": the dtype torch.tensor gives a literal."""
    items = []

    def flatten(v):
        if isinstance(v, list):
            for x in v:
                flatten(x)
        else:
            items.append(v)

    flatten(value)
    if items and all(isinstance(v, bool) for v in items):
        return "bool"
    if all(isinstance(v, int) for v in items):
        return "int"
    return "float"


def _dtype_argument(node: ast.expr, imports: ImportTable) -> str:
    qualified = imports.qualify(node) or ""
    if qualified == "torch.bool":
        return "bool"
    if qualified in INT_DTYPES:
        return "int"
    if qualified in UNCARRIED_DTYPES:
        return "uncarried"
    if qualified in FLOAT_DTYPES:
        return "float"
    return "unknown"


def _chain(value: ast.expr, imports: ImportTable) -> tuple[ast.Call, list[ast.Call]]:
    """(the factory call, the method calls after it, innermost first), as ``_tree_makes_tensor`` reads them."""
    methods = []
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and imports.qualify(value.func) is None:
        methods.append(value)
        value = value.func.value
    assert isinstance(value, ast.Call)
    return value, methods[::-1]


def _requires_grad(value: ast.expr, imports: ImportTable) -> str | None:
    factory, methods = _chain(value, imports)
    for call in (factory, *methods):
        grad = next((k for k in call.keywords if k.arg == "requires_grad"), None)
        if (grad is not None and not (isinstance(grad.value, ast.Constant) and grad.value.value is False)) or (
            call is not factory and call.func.attr == "requires_grad_"
        ):
            return ("requires_grad: a tensor trained by hand needs nn.Parameter; as a buffer DDP neither "
                    "averages its gradients nor keeps a rank's updates (it copies rank 0's)")
    return None


def _value(value: ast.expr, imports: ImportTable) -> str | None:
    """None when the tensor is built alike on every rank and is not floating point."""
    factory, methods = _chain(value, imports)
    for call in (factory, *methods):
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return "arguments unpacked with * or **, which ddpfix cannot read"
    qualified = imports.qualify(factory.func) or ""
    short = qualified.rsplit(".", 1)[-1]
    kind = "unknown"
    if qualified in RANDOM_FACTORIES:
        return (f"{short}() draws random values on each rank, and DDP copies rank 0's buffers to every rank, "
                "so the other ranks would use rank 0's values")
    if short == "empty":
        return "torch.empty holds uninitialised values, so it must be written later"
    keywords = {k.arg: k.value for k in factory.keywords}
    if "out" in keywords:
        return "out= writes into another tensor"
    if qualified in SIZE_ONLY_FACTORIES:
        kind = "float"
    elif short == "full":
        fill = factory.args[1] if len(factory.args) > 1 else keywords.get("fill_value")
        if fill is None or not _is_literal(fill):
            return _not_seen(fill or factory)
        kind = _kind_of_literal(_literal(fill))
    elif short == "arange":
        positional = list(factory.args) + [keywords[k] for k in ("start", "end", "step") if k in keywords]
        bad = next((a for a in positional if not _is_literal(a)), None)
        if bad is not None and len(positional) > 1:
            return _not_seen(bad)  # a start or a step decides the values, not only how many
        literal = bad is None and all(isinstance(_literal(a), int) and not isinstance(_literal(a), bool) for a in positional)
        kind = "int" if literal else "unknown"
    elif short in ("linspace", "logspace"):
        bad = next((a for a in [*factory.args, *(v for k, v in keywords.items() if k not in FACTORY_KEYWORDS)]
                    if not _is_literal(a)), None)
        if bad is not None:
            return _not_seen(bad)
        kind = "float"
    elif short in ("tensor", "as_tensor"):
        data = factory.args[0] if factory.args else keywords.get("data")
        if data is None or not _is_literal(data):
            return _not_seen(data or factory)
        literal = _literal(data)
        kind = "float" if literal == [] else _kind_of_literal(literal)
    else:
        return f"torch.{short} is not a factory ddpfix knows"
    unknown = [k for k in keywords if k not in FACTORY_KEYWORDS | {"fill_value", "data", "start", "end", "step",
                                                                    "requires_grad", "steps", "base", "n", "m"}]
    if unknown:
        return f"{short}() takes {unknown[0]}=, which ddpfix does not know"
    if "dtype" in keywords:
        kind = _dtype_argument(keywords["dtype"], imports)
    for call in methods:
        method = call.func.attr
        arguments = [*call.args, *(k.value for k in call.keywords)]
        # A dtype handed to any method gives its result that dtype: ``.view(torch.int16)``
        # reinterprets the bytes (review round 16), ``.sum(dtype=...)``, ``.new_zeros(..., dtype=...)``.
        dtypes = [kind for kind in (_dtype_argument(a, imports) for a in arguments) if kind != "unknown"]
        if method in LAYOUT_METHODS and not dtypes:
            continue
        if method in LAYOUT_METHODS or method not in ("to", "type") and dtypes:
            kind = dtypes[-1]
            continue
        if method in ("to", "type"):
            dtypes = [_dtype_argument(a, imports) for a in arguments]
            known = [d for d in dtypes if d != "unknown"]
            others = [a for a, d in zip(arguments, dtypes) if d == "unknown"
                      and not (isinstance(a, ast.Constant) and isinstance(a.value, (str, bool)))]
            if others:
                return f".{method}({_segment(others[0])}) may change the dtype in a way ddpfix cannot see"
            if known:
                kind = known[-1]
            continue
        bad = next((a for a in arguments if not _is_literal(a)), None)
        if bad is not None:
            return _not_seen(bad)
        if method in TO_BOOL:
            kind = "bool"
        elif method in TO_INT:
            kind = "int"
        elif method == "short":
            kind = "uncarried"
        elif method in TO_FLOAT:
            kind = "float"
        elif method not in VALUE_METHODS:
            return f".{method}() is not a method ddpfix knows to give the same values on every rank"
    if kind == "uncarried":
        return ("its dtype (int16 or an unsigned type wider than 8 bits) is one gloo and NCCL do not carry: DDP "
                "broadcasts every buffer when it wraps the module, and stops there")
    if kind != "bool" and kind != "int":
        return ("a floating-point (or unknown) dtype: a buffer is cast with the module (precision=\"bf16-true\", "
                ".half(), .double()), the plain tensor was not")
    return None


def _not_seen(node: ast.expr) -> str:
    return (f"its values come from {_segment(node)}, which ddpfix cannot see: ranks may build different values, and "
            "DDP copies rank 0's buffers to every rank")


# --- what writes it --------------------------------------------------------------------------


def _subclasses(tree: ast.Module, cls: ast.ClassDef) -> list[ast.ClassDef]:
    """``cls`` and the classes of this file that derive from it (by name, at any depth)."""
    found = [cls]
    names = {cls.name}
    grew = True
    while grew:
        grew = False
        for other in every_node(tree):
            if isinstance(other, ast.ClassDef) and other not in found and any(
                isinstance(b, ast.Name) and b.id in names for b in other.bases
            ):
                found.append(other)
                names.add(other.name)
                grew = True
    return found




def _writes(tree: ast.Module, cls: ast.ClassDef, statement: ast.Assign, name: str, imports: ImportTable) -> str | None:
    stored = mangle(name, cls.name)
    family = _subclasses(tree, cls)
    inside = {id(n) for c in family for n in every_node(c)}
    for node in every_node(tree):
        if id(node) not in inside and isinstance(node, ast.Attribute) and node.attr in (name, stored):
            return f"code outside the class uses .{node.attr} (line {node.lineno})"
    for c in family:
        for node in every_node(c):
            if isinstance(node, ast.Attribute) and node.attr in ("buffers", "named_buffers", "_buffers", "__dict__"):
                return f"{c.name} walks its buffers or its __dict__ (line {node.lineno}), where a new buffer shows"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "vars"):
                return f"{c.name} reads attributes by name (line {node.lineno}), which ddpfix does not follow"
    parents = {}
    for c in family:
        for node in every_node(c):
            for child in child_nodes(node):
                parents[child] = node
    bound = bound_names(tree)
    target = statement.targets[0]
    for c in family:
        own = name if c is cls else None  # in a subclass ``self.__name`` is another attribute
        for node in every_node(c):
            if node is target or not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                                      and node.value.id == "self" and node.attr in (own, stored)):
                continue
            why = _use(node, parents, imports, bound)
            if why is not None:
                return (f"self.{name} {why} (line {node.lineno}): a buffer takes only a tensor or None, and DDP "
                        "replaces what each rank writes with rank 0's buffer")
    return None


def _use(node: ast.Attribute, parents: dict, imports: ImportTable, bound: set[str]) -> str | None:
    """None when this use of the attribute only reads it; else how it may write it."""
    if isinstance(parents.get(node), ast.AugAssign) and parents[node].target is node:
        return "is updated in place (an augmented assignment)"
    if isinstance(node.ctx, ast.Del):
        return "is deleted"
    if isinstance(node.ctx, ast.Store):
        return "is set again"
    current = node
    while True:
        parent = parents.get(current)
        if isinstance(parent, ast.Attribute) and parent.value is current:
            if parent.attr.endswith("_") or parent.attr.startswith("__"):
                return f"is written in place (.{parent.attr})"
            if isinstance(parent.ctx, (ast.Store, ast.Del)):
                return f"has .{parent.attr} set"
        elif isinstance(parent, ast.Subscript) and parent.value is current:
            if isinstance(parent.ctx, (ast.Store, ast.Del)):
                return "is written by item ([...] =)"
        elif isinstance(parent, ast.Call) and parent.func is current:
            pass
        elif isinstance(parent, PASS_THROUGH) and not (isinstance(parent, ast.IfExp) and parent.test is current):
            pass
        else:
            break
        current = parent
    parent = parents.get(current)
    if isinstance(parent, ast.IfExp) and parent.test is current:
        return None
    if isinstance(parent, ast.AugAssign):
        return "is updated in place (an augmented assignment)"
    if isinstance(parent, ast.Subscript) and parent.slice is current:
        return None  # an index: ``x[self.mask]``
    if isinstance(parent, READING_PARENTS):
        return None
    call = parent
    if isinstance(parent, ast.keyword):
        if parent.arg == "out":
            return "is written through out="
        call = parents.get(parent)
    if isinstance(call, ast.Call) and call.func is not current:
        func = call.func
        qualified = imports.qualify(func) or ""
        if any(k.arg == "out" for k in call.keywords):
            return "is handed to a call with out="
        if qualified.startswith("torch.") and not qualified.rsplit(".", 1)[-1].endswith("_") and not (
            qualified.startswith("torch.distributed")
        ):
            return None
        if isinstance(func, ast.Name) and func.id in READING_BUILTINS and func.id not in bound:
            return None
        if isinstance(func, ast.Attribute) and func.attr in READING_METHODS and qualified == "":
            return None
        return f"is handed to {_segment(func)}(), which may write it"
    return f"is kept or passed on ({type(parent).__name__.lower()}), which ddpfix does not follow"


# --- weight averaging ----------------------------------------------------------------------------

#: Names of what averages a module's buffers with its own (Lightning's ``WeightAveraging`` and
#: ``EMAWeightAveraging`` build torch's ``AveragedModel(..., use_buffers=True)``), or may: averaging a
#: bool buffer fails ("Subtraction, the `-` operator, with two bool tensors is not supported"), an
#: int one fails on the GPU. Any mention in the file (code, a string, a comment) counts; the other
#: files of the project are the facts' (``ProjectFacts.hazard("weight averaging")``).
AVERAGING = lazy_compile(PROJECT_HAZARDS["weight averaging"])


def _whole_word(text: str, start: int, end: int) -> str:
    """The word a match stands in (the pattern matches ``WeightAverag`` in ``EMAWeightAveraging``)."""
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    return text[start:end]


def _averaging(text: str) -> str | None:
    found = AVERAGING.search(text)
    if found is None:
        return None
    named = _whole_word(text, found.start(), found.end())
    return (f"the file names {named}: weight averaging (WeightAveraging, StochasticWeightAveraging, "
            "AveragedModel(use_buffers=True)) walks the module's buffers too, and cannot average a bool or an "
            "int one")


# --- where it is read --------------------------------------------------------------------------

#: LightningModule hooks that work on data still on the CPU (the batch before Lightning moves it,
#: the datasets and loaders): a buffer is on the rank's GPU there, the plain tensor was not.
CPU_DATA_HOOKS = frozenset({"on_before_batch_transfer", "transfer_batch_to_device", "prepare_data",
                            "train_dataloader", "val_dataloader", "test_dataloader", "predict_dataloader"})
#: torch calls that make a tensor on the CPU unless given ``device=``.
CPU_FACTORIES = frozenset(f"torch.{n}" for n in (
    "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "tensor", "as_tensor", "from_numpy",
    "rand", "randn", "randint", "randperm", "normal", "Tensor", "FloatTensor", "LongTensor", "BoolTensor",
    "IntTensor", "DoubleTensor", "ByteTensor"))
#: Tensor methods that give (or need) a tensor on the CPU.
CPU_METHODS = frozenset({"cpu", "numpy"})


def _makes_cpu_tensor(node: ast.AST, imports: ImportTable) -> bool:
    """``node`` holds a call that makes a tensor on the CPU: a device-less factory, ``.cpu()``,
    ``.numpy()``, ``.to("cpu")``."""
    for call in walk(node):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if imports.qualify(func) in CPU_FACTORIES and not any(k.arg == "device" for k in call.keywords):
            return True
        if isinstance(func, ast.Attribute) and imports.qualify(func) is None:
            if func.attr in CPU_METHODS:
                return True
            if func.attr == "to" and any(isinstance(a, ast.Constant) and a.value == "cpu"
                                         for a in [*call.args, *(k.value for k in call.keywords)]):
                return True
    return False


def _reads_beside_cpu_data(tree: ast.Module, cls: ast.ClassDef, statement: ast.Assign, name: str,
                           imports: ImportTable) -> str | None:
    """None when no read of the attribute meets data on the CPU: none in a hook that works on the
    CPU's data (or a method it calls, or a function defined inside a method: a collate_fn), and none
    in an expression that also makes a tensor on the CPU (``torch.where(self.mask, torch.zeros(3),
    ...)``) or reads a local name bound to one. The plain tensor was on the CPU there; a buffer is
    on the rank's GPU: "Expected all tensors to be on the same device"."""
    stored = mangle(name, cls.name)
    for c in _subclasses(tree, cls):
        own = name if c is cls else None
        methods = {m.name: m for m in c.body if isinstance(m, FUNCTIONS)}
        cpu = {m for m in methods if m in CPU_DATA_HOOKS}
        grew = True
        while grew:  # the methods the CPU hooks call (``self.helper(batch)``)
            grew = False
            for hook in list(cpu):
                for node in every_node(methods[hook]):
                    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                            and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"
                            and node.func.attr in methods and node.func.attr not in cpu):
                        cpu.add(node.func.attr)
                        grew = True
        for method in methods.values():
            parents = {}
            for node in every_node(method):
                for child in child_nodes(node):
                    parents[child] = node
            cpu_names = {n.id for node in every_node(method) if isinstance(node, (ast.Assign, ast.AnnAssign))
                         and node.value is not None and _makes_cpu_tensor(node.value, imports)
                         for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                         for n in walk(target) if isinstance(n, ast.Name)}
            for node in every_node(method):
                if node is statement.targets[0] or not (
                        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                        and node.value.id == "self" and node.attr in (own, stored)):
                    continue
                if method.name in cpu:
                    return (f"self.{name} is read in {method.name} (line {node.lineno}), which works on data still "
                            "on the CPU, where a buffer on the rank's GPU does not mix")
                ancestors = list(_ancestors(node, parents, method))
                if any(isinstance(a, (ast.Lambda, *FUNCTIONS)) for a in ancestors):
                    return (f"self.{name} is read in a function defined inside {method.name} (line {node.lineno}), "
                            "which may run on data still on the CPU (a collate_fn, a transform)")
                root = node
                for ancestor in ancestors:
                    if isinstance(ancestor, ast.stmt):
                        break
                    root = ancestor
                if _makes_cpu_tensor(root, imports) or any(
                        isinstance(n, ast.Name) and n.id in cpu_names for n in walk(root)):
                    return (f"self.{name} is read beside a tensor made or needed on the CPU (line {node.lineno}): "
                            "the plain tensor was on the CPU there, a buffer is on the rank's GPU")
    return None


def _ancestors(node: ast.AST, parents: dict, stop: ast.AST):
    """The nodes above ``node`` up to (not including) ``stop``, nearest first."""
    node = parents.get(node)
    while node is not None and node is not stop:
        yield node
        node = parents.get(node)


def _other_files(name: str) -> str | None:
    if name.startswith("__") and not name.endswith("__"):
        return None  # name-mangled: no other class or file reaches it by this name
    return (f"other files (a subclass, a callback, the training script) may write .{name} or give it another "
            "value, and ddpfix's facts do not follow attributes across files")
