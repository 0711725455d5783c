"""Where a class of the program is built, and what each construction hands it.

A LightningModule that keeps what it is handed (``self.model = model`` in ``__init__``) holds
whatever its callers build: ``LightningModel(AutoModelForSequenceClassification.from_pretrained(...))``
in a notebook, ``LitClassifier(Backbone(hidden_dim=64))`` in ``cli_main``. What it holds is known only
where every place that may build the class is read:

- ``class_uses``: in one file, the calls that build a class by its name (``Model(...)``,
  ``module.Model(...)``), or the first use of the name that may build it unseen or change it: the
  name handed around as a value (``Base = Model``, ``partial(Model)``, a subclass,
  ``Model.load_from_checkpoint(...)``, which builds it from a checkpoint's hyper-parameters), bound
  again, imported under another name, written as a string (``getattr(module, "Model")``, a
  config's ``_target_``), or a call that builds an object's own class (``type(model)(...)``). A
  program with a loader of classes named at run time (LightningCLI, hydra's ``instantiate``) or of
  pickled objects may build it from what no file says (``ProjectFacts.constructions``);
- ``object_problem``: whether a name handed to such a call holds an object built by a known call
  and left as built: every binding of the name in its scope builds one, and every use of it either
  hands it to the class, or calls one of ``nn.Module``'s methods that leave its code alone on it or
  on what it holds (``model.classifier.parameters()``, ``model.eval()``, ``model.load_state_dict(sd)``),
  or replaces a part of it by another known module (``model.fc = nn.Linear(n, 10)``). Anything else
  (``freeze(model)``, ``model.register_forward_hook(f)``, ``head = model.fc``) may change what its
  ``forward`` runs.

``ProjectFacts.constructions`` asks ``class_uses`` of every file that may run with the class's.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ddpfix.analysis.ast_shapes import every_node, parent_map  # noqa: F401 - parent_map: its users' name for it
from ddpfix.ast_walk import kept_on

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)

#: ``nn.Module``'s ways to every part of a module at once: what they reach may change through them.
EVERY_PART = frozenset({"modules", "children", "named_modules", "named_children", "apply", "get_submodule",
                        "_modules", "register_module"})

#: Attributes of a module that hold no part of it in torch's and transformers' own classes (its mode,
#: placement, configuration, a layer's sizes: ``nn.Linear(backbone.fc.in_features, 10)``); read only
#: where the value cannot stand for the module (``_used_as_a_value``).
PLAIN_ATTRIBUTES = frozenset({
    "training", "device", "dtype", "config", "name_or_path", "hparams",
    "in_features", "out_features", "num_features", "in_channels", "out_channels", "embedding_dim",
    "num_embeddings", "hidden_size", "d_model", "num_labels", "vocab_size",
})
#: Methods through which a class decides what storing or reading an attribute does.
ATTRIBUTE_HOOKS = frozenset({"__new__", "__setattr__", "__getattr__", "__getattribute__", "__delattr__",
                             "__init_subclass__", "__class_getitem__"})
#: Builtins that only read (show, test or count) the module handed to them.
READING_BUILTINS = frozenset({"print", "repr", "str", "isinstance", "type", "id", "len"})
#: How many functions a module handed on is followed through.
MAX_HOPS = 3

#: ``nn.Module`` methods that leave the module's code as built: they read it, set its training mode,
#: its weights, its parameters' ``requires_grad``, its dtype or its device (Lightning places the
#: module on the rank's device before any step runs). Not ``apply`` (runs any function on every
#: part), not the ``register_*`` hooks, not ``add_module`` (another part), not ``compile``.
LEAVES_CODE = frozenset({
    "parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children", "modules",
    "named_modules", "state_dict", "load_state_dict", "train", "eval", "requires_grad_", "zero_grad", "to",
    "cpu", "cuda", "float", "double", "half", "bfloat16", "num_parameters", "extra_repr",
    # transformers' models: they save, count or run the model as it is
    "save_pretrained", "push_to_hub", "generate", "num_parameters", "print_trainable_parameters",
})
#: Of these, the ones that return the module itself or its parts (``backbone.eval()`` is
#: ``backbone``; ``modules()`` hands out every part, alive): only as a statement of their own,
#: their result dropped, do they leave no other way to the module.
RETURNS_THE_MODULE = frozenset({
    "train", "eval", "requires_grad_", "to", "cpu", "cuda", "float", "double", "half", "bfloat16",
    "children", "named_children", "modules", "named_modules",
})


def class_uses(tree: ast.Module, name: str, cls: ast.ClassDef | None = None) -> tuple[list[ast.Call], ast.AST | None]:
    """The calls of ``tree`` that build the class ``name`` (by the name or as a module's attribute),
    and the first other use of the name (None where there is none). The file's own ``class name``
    statement is a definition, not a use; a second one is a use (which class runs is not known).
    A call of one of ``cls``'s static methods (``Model.add_model_specific_args(parser)``) neither
    builds nor changes it (a class method may: it is handed the class)."""
    static = {s.name for s in (cls.body if cls is not None else ()) if isinstance(s, FUNCTIONS)
              and any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in s.decorator_list)}
    parents = parent_map(tree)
    calls: list[ast.Call] = []
    defined = 0
    for node in every_node(tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            defined += 1
            if defined > 1:
                return calls, node
        elif isinstance(node, FUNCTIONS) and node.name == name:
            return calls, node
        elif isinstance(node, (ast.Name, ast.Attribute)) and (node.id if isinstance(node, ast.Name) else node.attr) == name:
            parent = parents.get(id(node))
            if isinstance(node.ctx, ast.Load) and isinstance(parent, ast.Call) and parent.func is node:
                calls.append(parent)
            elif isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in static \
                    and isinstance(parents.get(id(parent)), ast.Call) and parents[id(parent)].func is parent:
                continue
            else:
                return calls, node
        elif isinstance(node, ast.alias) and (node.asname or node.name.rsplit(".", 1)[-1]) == name:
            if node.asname not in (None, name) or node.name.rsplit(".", 1)[-1] != name:
                return calls, node
        elif isinstance(node, ast.alias) and node.name == name and node.asname not in (None, name):
            return calls, node
        elif isinstance(node, ast.Constant) and node.value == name:
            return calls, node
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return calls, node
        elif isinstance(node, (ast.Call, ast.Attribute)) and _class_of_an_object(node) \
                and not _reads_the_class(node, parents):
            return calls, node
    return calls, None


def _class_of_an_object(node: ast.AST) -> bool:
    """``type(model)``, ``model.__class__``: an object's class, which may be the class asked about."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type"
            and len(node.args) == 1 and not node.keywords) or (isinstance(node, ast.Attribute) and node.attr == "__class__")


def _reads_the_class(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """An object's class only read: its name (``type(self).__name__``), compared (``type(x) is
    Foo``) or tested (``isinstance(y, type(x))``). Any other use may build it: called at once
    (``type(model)(...)``) or kept first (``klass = type(self)``, then ``klass(...)``)."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in _CLASS_NAMES:
        return True
    if isinstance(parent, ast.Compare):
        return True
    return isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, ast.Name) \
        and parent.func.id in ("isinstance", "issubclass")


#: What reading an object's class for its name reads.
_CLASS_NAMES = frozenset({"__name__", "__qualname__", "__module__", "__doc__"})


def _chain_top(node: ast.expr, parents: dict[int, ast.AST]) -> ast.AST:
    """The outermost ``x.a.b[0]`` read of which ``node`` is the root."""
    while True:
        parent = parents.get(id(node))
        if isinstance(parent, ast.Attribute) and parent.value is node or isinstance(parent, ast.Subscript) and parent.value is node:
            node = parent
        else:
            return node


def _locals(function: ast.AST) -> frozenset[str]:
    """The names a function (or lambda) binds as its own: its parameters, and what its body binds
    outside nested scopes (``global``/``nonlocal`` names are not its own)."""
    kept = function.__dict__.get("_ddpfix_locals")
    if kept is not None:
        return kept
    arguments = function.args
    own = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                           *filter(None, [arguments.vararg, arguments.kwarg])]}
    declared: set[str] = set()
    pending = list(function.body) if isinstance(function.body, list) else [function.body]
    while pending:
        node = pending.pop()
        if isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            own.add(node.name)
            pending.extend(node.decorator_list)
            continue  # its body is its own scope
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            own.add(node.id)
        elif isinstance(node, ast.alias):
            own.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            own.add(node.name)
        pending.extend(ast.iter_child_nodes(node))
    kept = function._ddpfix_locals = frozenset(own - declared)
    return kept


def binding_scope(tree: ast.Module, node: ast.AST, name: str) -> ast.AST:
    """The function (or the module) in which ``name``, as ``node`` reads or binds it, lives: the
    innermost enclosing function that binds it as its own. A parameter belongs to its function; a
    default value or decorator is read where the function is defined."""
    parents = parent_map(tree)
    current, child = parents.get(id(node)), node
    if isinstance(node, (*FUNCTIONS, ast.ClassDef)):
        child, current = current, parents.get(id(current))  # a definition binds where it stands
    while current is not None:
        if isinstance(current, (*FUNCTIONS, ast.Lambda)):
            inside = child is current.body or (isinstance(current.body, list) and child in current.body) \
                or isinstance(node, ast.arg) and child is current.args
            if inside and name in _locals(current):
                return current
        child, current = current, parents.get(id(current))
    return tree


def object_problem(tree: ast.Module, argument: ast.Name, handed: Callable[[ast.Name], bool],
                   known_call: Callable[[ast.Call], str | None],
                   elsewhere: Callable[[str], str | None] | None = None) -> tuple[str, int] | None:
    """Why the object ``argument`` names (in ``tree``, handed to a construction) may not be one
    built by a known call and left as built, as (why, line); None where it is. ``handed(name)``: a
    use of the name that hands it to the class (the argument itself, or another construction's);
    ``known_call(call)``: why ``call`` does not build a known module, or None.

    Every use of the same variable is read: in its function, or for a module's global in every
    function of the file that does not bind the name as its own."""
    name = argument.id
    scope = binding_scope(tree, argument, name)
    if isinstance(scope, (*FUNCTIONS, ast.Lambda)):
        arguments = scope.args
        if name in {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                    *filter(None, [arguments.vararg, arguments.kwarg])]}:
            return (f"`{name}` is a parameter of `{getattr(scope, 'name', 'lambda')}`, handed in by code not read",
                    scope.lineno)
    parents = parent_map(tree)
    reached = names_reached(tree, name)
    if reached is not None:
        return reached
    builds = 0
    for node in every_node(scope):
        if isinstance(node, (*FUNCTIONS, ast.ClassDef)) and node.name == name:
            if binding_scope(tree, node, name) is scope:
                return f"`{name}` is also defined (line {node.lineno})", node.lineno
            continue
        if isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            if binding_scope(tree, node, name) is scope:
                return f"`{name}` is also imported (line {node.lineno})", node.lineno
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return f"`{name}` is declared `{type(node).__name__.lower()}` (line {node.lineno})", node.lineno
        if not (isinstance(node, ast.Name) and node.id == name) or binding_scope(tree, node, name) is not scope:
            continue
        parent = parents.get(id(node))
        if isinstance(node.ctx, ast.Store):
            # ``m = f(...)``, ``m: nn.Module = f(...)``, ``(m := f(...))``
            whole = (isinstance(parent, ast.Assign) and parent.targets == [node]) or (
                isinstance(parent, (ast.AnnAssign, ast.NamedExpr)) and parent.target is node)
            if not (whole and isinstance(parent.value, ast.Call)):
                return f"`{name}` is bound at line {node.lineno} by what is not a call that builds a module", node.lineno
            problem = known_call(parent.value)
            if problem is not None:
                return f"`{name}` is bound at line {node.lineno} to what is not known: {problem}", node.lineno
            if isinstance(parent, ast.NamedExpr) and not handed(parent):
                # ``_BUILT.append(m := nn.Linear(4, 4))``: the object goes where the expression goes
                problem = use_problem(tree, parent, known_call, elsewhere=elsewhere)
                if problem is not None:
                    return problem, node.lineno
            builds += 1
            continue
        if isinstance(node.ctx, ast.Del):
            return f"`{name}` is deleted (line {node.lineno})", node.lineno
        if handed(node):
            continue
        problem = use_problem(tree, node, known_call, elsewhere=elsewhere)
        if problem is not None:
            return problem, node.lineno
    if builds == 0:
        return f"nothing in its scope builds `{name}`", argument.lineno
    return None


def object_scope(tree: ast.Module, name: ast.Name) -> ast.AST:
    """The function, or the module, whose variable ``name`` is."""
    return binding_scope(tree, name, name.id)


def use_problem(tree: ast.Module, node: ast.expr, known_call: Callable[[ast.Call], str | None],
                hops: int = 0, elsewhere: Callable[[str], str | None] | None = None) -> str | None:
    """Why a use of the module ``node`` reads (a name, or an attribute: ``pl_module.cnn``) may
    change what its ``forward`` runs; None where it leaves it as built: calling it, one of
    ``LEAVES_CODE`` on it or on a part of it, reading one of ``PLAIN_ATTRIBUTES``, putting another
    known module in a part's place (``model.fc = nn.Linear(n, 10)``), or handing it to a function of
    the file (or a static method of one of its classes) that uses its parameter only these ways, or
    to a plain class of the file whose ``__init__`` does so or keeps it (``self.model = model``)
    where every use of that attribute in the class does so too and, by ``elsewhere(name)`` (None:
    not asked, such a class is not followed), no code outside it reaches a ``.name``."""
    parents = parent_map(tree)
    parent = parents.get(id(node))
    if isinstance(parent, ast.Call) and parent.func is node:
        return None  # ``model(x)``
    if isinstance(parent, ast.Expr):
        return None  # ``model`` on a line of its own: a notebook shows it
    if isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, ast.Name) \
            and parent.func.id in READING_BUILTINS and not _bound_anywhere(tree, parent.func.id):
        return None  # ``print(model)``, ``isinstance(model, nn.Module)``: the builtin reads it
    if isinstance(parent, ast.Call) and parent.args == [node] and not parent.keywords and _deep_copy(tree, parent.func) \
            and elsewhere is not None and elsewhere("deepcopy") is None:
        return None  # ``copy.deepcopy(model)`` (an EMA): a new module, sharing nothing with it
    top = _chain_top(node, parents)
    above = parents.get(id(top))
    if top is not node and isinstance(top, ast.Attribute) and top.attr == "apply" and isinstance(above, ast.Call) \
            and above.func is top and len(above.args) == 1 and not above.keywords \
            and isinstance(parents.get(id(above)), ast.Expr):
        if applies_initialisers_only(tree, above, elsewhere):
            return None  # ``model.apply(init_weights)``: only weights initialised
    if top is not node and isinstance(top, ast.Attribute):
        if top.attr in LEAVES_CODE and isinstance(above, ast.Call) and above.func is top and (
                top.attr not in RETURNS_THE_MODULE or isinstance(parents.get(id(above)), ast.Expr)):
            return None  # ``model.classifier.parameters()``, ``model.eval()`` as a statement
        if top.attr in PLAIN_ATTRIBUTES and isinstance(top.ctx, ast.Load) and _used_as_a_value(top, above, known_call):
            return None  # ``model.training``, ``nn.Linear(model.fc.in_features, 10)``
    if top is not node and isinstance(getattr(top, "ctx", None), ast.Store) and isinstance(above, ast.Assign) \
            and above.targets == [top] and isinstance(above.value, ast.Call) and known_call(above.value) is None:
        return None  # ``model.fc = nn.Linear(n, 10)``: another known module in its place
    if isinstance(getattr(top, "ctx", ast.Load()), ast.Load) and hops < MAX_HOPS:
        # It, or a part of it (``count_parameters(model.classifier)``), handed to a function.
        call, keyword = above, None
        if isinstance(above, ast.keyword):
            call, keyword = parents.get(id(above)), above.arg
        if isinstance(call, ast.Call) and (keyword is not None or top in call.args):
            function = _file_function(tree, call.func)
            owner = _file_class(tree, call.func) if function is None and elsewhere is not None else None
            if owner is not None:
                function = next(s for s in owner.body if isinstance(s, ast.FunctionDef) and s.name == "__init__")
            # A function or class another file replaces (``train.warm_up = f``, ``train.Sampler.run = g``)
            # runs code not read.
            names = [function.name] if owner is None and function is not None else (
                [owner.name, *(s.name for s in owner.body if isinstance(s, FUNCTIONS))] if owner is not None else [])
            if elsewhere is not None and any(elsewhere(n) is not None for n in names):
                function = None
            if function is not None:
                problem = _parameter_problem(tree, function, call, top, keyword, known_call, hops + 1, owner, elsewhere)
                if problem is None:
                    return None
    shown = above if isinstance(above, (ast.expr, ast.stmt)) else top
    return f"`{ast.unparse(shown)[:60]}` (line {node.lineno}) may change what `{ast.unparse(node)[:30]}` runs"


def _deep_copy(tree: ast.Module, func: ast.expr) -> bool:
    """``copy.deepcopy`` (``import copy``) or ``deepcopy`` (``from copy import deepcopy``), the
    file binding that name by the import alone."""
    if isinstance(func, ast.Attribute) and func.attr == "deepcopy" and isinstance(func.value, ast.Name):
        module, local = "copy", func.value.id
        imported = any(isinstance(n, ast.Import) and any(a.name == "copy" and (a.asname or a.name) == local for a in n.names)
                       for n in every_node(tree))
    elif isinstance(func, ast.Name):
        module, local = "copy", func.id
        imported = any(isinstance(n, ast.ImportFrom) and n.module == module and n.level == 0
                       and any(a.name == "deepcopy" and (a.asname or a.name) == local for a in n.names)
                       for n in every_node(tree))
    else:
        return False
    return imported and not _bound_otherwise(tree, local) and sum(
        1 for n in every_node(tree) if isinstance(n, ast.alias) and (n.asname or n.name).split(".")[0] == local) == 1


def _bound_anywhere(tree: ast.Module, name: str) -> bool:
    """The file binds ``name`` somewhere (a builtin it may hide), or may bind any name."""
    kept = tree.__dict__.get("_ddpfix_bound_anywhere")
    if kept is None:
        kept = set()
        for node in every_node(tree):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                kept.add(node.id)
            elif isinstance(node, (*FUNCTIONS, ast.ClassDef)):
                kept.add(node.name)
            elif isinstance(node, ast.arg):
                kept.add(node.arg)
            elif isinstance(node, ast.alias):
                kept.add("*" if node.name == "*" else (node.asname or node.name).split(".")[0])
        tree._ddpfix_bound_anywhere = kept
    return name in kept or "*" in kept


def names_reached(tree: ast.Module, name: str) -> tuple[str, int] | None:
    """Where the file binds or reaches ``name`` otherwise than by a name's store: a ``match``
    pattern's capture, ``globals()`` / ``vars()`` / ``locals()`` (their stores bind any name), a
    star import (it may bind any name)."""
    for node in every_node(tree):
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name == name \
                or isinstance(node, ast.MatchMapping) and node.rest == name:
            return f"a `match` pattern binds `{name}` (line {node.lineno})", node.lineno
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("globals", "vars", "locals"):
            return f"`{node.func.id}()` (line {node.lineno}) may bind any name", node.lineno
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return f"a star import (line {node.lineno}) may bind any name", node.lineno
    return None


def _used_as_a_value(read: ast.expr, above: ast.AST | None, known_call) -> bool:
    """A plain attribute's value (``PLAIN_ATTRIBUTES``) used where it cannot be the module under
    another name: computed with or compared, shown, or a size a known module is built from. Its
    name says what it holds only for ``nn.Module``'s own ``training``; any other (``model.fc.in_features``)
    may be a part of the module in a class of the program, so it is not bound or handed on."""
    if read.attr == "training":
        return not (isinstance(above, ast.Call) and above.func is read)
    if isinstance(above, (ast.BinOp, ast.Compare, ast.UnaryOp, ast.FormattedValue, ast.BoolOp)):
        return True
    return isinstance(above, ast.Call) and read in above.args and above.func is not read and known_call(above) is None


def _file_function(tree: ast.Module, func: ast.expr) -> ast.FunctionDef | None:
    """The function of the file a call certainly runs: a top-level function by its name, or a
    static method of a top-level class (``Sampler.generate_samples``), each defined once and never
    bound otherwise at the top level."""
    top = {}
    for statement in tree.body:
        if isinstance(statement, (*FUNCTIONS, ast.ClassDef)):
            top[statement.name] = statement if statement.name not in top else None
    if isinstance(func, ast.Name):
        found = top.get(func.id)
        return found if isinstance(found, ast.FunctionDef) and not found.decorator_list \
            and binding_scope(tree, func, func.id) is tree and _bound_once(tree, func.id) else None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        owner = top.get(func.value.id)
        if not isinstance(owner, ast.ClassDef) or owner.decorator_list or not _bound_once(tree, owner.name):
            return None
        methods = [s for s in owner.body if isinstance(s, FUNCTIONS) and s.name == func.attr]
        if len(methods) == 1 and isinstance(methods[0], ast.FunctionDef) and len(methods[0].decorator_list) == 1 \
                and isinstance(methods[0].decorator_list[0], ast.Name) and methods[0].decorator_list[0].id == "staticmethod":
            return methods[0]
    return None


def _bound_once(tree: ast.Module, name: str) -> bool:
    """``name`` is bound at the top level of the file by one definition alone (not again under an
    ``if``, by an import, a star import, a ``match`` or ``globals()``), and nothing stores an
    attribute on it (``Helpers.run = staticmethod(f)``)."""
    if names_reached(tree, name) is not None:
        return False
    definitions = 0
    for node in every_node(tree):
        if isinstance(node, (*FUNCTIONS, ast.ClassDef)) and node.name == name and binding_scope(tree, node, name) is tree:
            definitions += 1
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load) \
                and binding_scope(tree, node, name) is tree:
            return False
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and isinstance(node.value, ast.Name) and node.value.id == name:
            return False
        if isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            return False
    return definitions == 1


def _file_class(tree: ast.Module, func: ast.expr) -> ast.ClassDef | None:
    """The plain class of the file a call certainly builds: a top-level class by its name, defined
    once and never bound or changed otherwise, no decorator, metaclass or base but ``object``, one
    ``__init__`` and no ``__new__``."""
    if not isinstance(func, ast.Name) or binding_scope(tree, func, func.id) is not tree or not _bound_once(tree, func.id):
        return None
    owner = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == func.id), None)
    if owner is None or owner.decorator_list or owner.keywords or any(
            not (isinstance(b, ast.Name) and b.id == "object") for b in owner.bases):
        return None
    methods = [s.name for s in owner.body if isinstance(s, FUNCTIONS)]
    if methods.count("__init__") != 1 or not any(isinstance(s, ast.FunctionDef) and s.name == "__init__" for s in owner.body):
        return None
    if set(methods) & ATTRIBUTE_HOOKS:
        return None  # what ``self.model = model`` or a read of it does is the class's own code
    if any(isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)) for s in owner.body):
        return None  # a class attribute may be a descriptor whose ``__set__`` runs on the store
    return owner


def _parameter_problem(tree, function: ast.FunctionDef, call: ast.Call, node: ast.expr, keyword: str | None,
                       known_call, hops: int, owner: ast.ClassDef | None = None, elsewhere=None) -> str | None:
    """Why ``function``'s parameter that ``call`` binds to ``node`` may change the module: it is
    bound again, or one of its uses does (``use_problem``). ``owner``: the class whose ``__init__``
    ``function`` is (``call`` builds it): the parameter may be kept as ``self.<name> = parameter``,
    then every use of ``self.<name>`` in the class is read, and ``elsewhere(name)`` asked."""
    arguments = function.args
    positional = [a.arg for a in [*arguments.posonlyargs, *arguments.args]][1 if owner is not None else 0:]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return "it is passed with `*args` or `**kwargs`"
    if keyword is not None:
        parameter = keyword if keyword in positional[len(arguments.posonlyargs):] or keyword in {
            a.arg for a in arguments.kwonlyargs} else None
    else:
        index = call.args.index(node)
        parameter = positional[index] if index < len(positional) else None
    if parameter is None:
        return "it may reach `*args` or `**kwargs`"
    kept: set[str] = set()
    stores: set[int] = set()
    for use in every_node(function):
        if isinstance(use, ast.Name) and use.id == parameter and binding_scope(tree, use, parameter) is function:
            if not isinstance(use.ctx, ast.Load):
                return f"`{parameter}` is bound again (line {use.lineno})"
            parent = parent_map(tree).get(id(use))
            if owner is not None and isinstance(parent, ast.Assign) and parent.value is use and len(parent.targets) == 1 \
                    and isinstance(parent.targets[0], ast.Attribute) and isinstance(parent.targets[0].value, ast.Name) \
                    and parent.targets[0].value.id == "self" and parent in function.body:
                kept.add(parent.targets[0].attr)  # ``self.model = model``: read where the class uses it
                stores.add(id(parent.targets[0]))
                continue
            problem = use_problem(tree, use, known_call, hops, elsewhere)
            if problem is not None:
                return problem
    for attribute in sorted(kept):
        for use in every_node(owner):
            if not (isinstance(use, ast.Attribute) and use.attr == attribute and isinstance(use.value, ast.Name)
                    and use.value.id == "self"):
                continue
            if not isinstance(use.ctx, ast.Load):
                if id(use) not in stores:
                    return f"`{owner.name}` binds `self.{attribute}` again (line {use.lineno})"
                continue
            problem = use_problem(tree, use, known_call, hops, elsewhere)
            if problem is not None:
                return problem
        place = elsewhere(attribute)
        if place is not None:
            return f"{place} may reach `.{attribute}` of a `{owner.name}`"
    return None


#: Calls that reach an attribute by the name they are handed.
ATTRIBUTE_BY_NAME = frozenset({"getattr", "setattr", "delattr", "hasattr", "attrgetter", "methodcaller",
                               "get_submodule", "__getattribute__", "__getattr__", "get_parameter"})


def names_an_attribute(tree: ast.Module, name: str) -> ast.AST | None:
    """The first call of the file that reaches an attribute ``name`` by a string
    (``getattr(lm, "model")``, ``attrgetter("model")``), or None."""
    for call in every_node(tree):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        word = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if word in ATTRIBUTE_BY_NAME:
            for argument in [*call.args, *(k.value for k in call.keywords)]:
                if isinstance(argument, ast.Constant) and argument.value == name:
                    return argument
    return None


def in_a_method(tree: ast.Module, node: ast.AST) -> bool:
    """``node`` lies in a function defined directly in a class's body whose first parameter is
    ``self`` (where ``self`` is that class's instance)."""
    parents = parent_map(tree)
    current = parents.get(id(node))
    while current is not None and not isinstance(current, (*FUNCTIONS, ast.Lambda)):
        current = parents.get(id(current))
    if not isinstance(current, FUNCTIONS):
        return False
    arguments = [*current.args.posonlyargs, *current.args.args]
    return isinstance(parents.get(id(current)), ast.ClassDef) and bool(arguments) and arguments[0].arg == "self"


#: Tensor methods that change a tensor's values in place and nothing else: an initialiser's work on
#: a weight (``m.weight.data.normal_(0, 0.02)``, ``m.bias.zero_()``).
FILLS = frozenset({"zero_", "fill_", "normal_", "uniform_", "copy_", "mul_", "add_", "clamp_", "div_", "sub_",
                   "fill_diagonal_", "bernoulli_", "exponential_", "random_", "requires_grad_"})


#: The tensor methods an in-place fill reaches: those written (``FILLS``) and those torch's
#: ``nn.init`` functions call on what they are handed (``trunc_normal_``: ``erfinv_``).
TENSOR_FILLS = FILLS | {"erfinv_", "exponential_", "geometric_", "log_normal_", "cauchy_"}


def defines_a_fill(tree: ast.Module) -> ast.FunctionDef | None:
    """A function or method of the file named like a tensor fill (``def zero_(self)``): a call by
    that name may run it, not torch's, so a fill is then not proven to change values alone."""
    return kept_on(tree, _first_fill)  # asked per construction


def _first_fill(tree: ast.Module) -> ast.FunctionDef | None:
    return next((n for n in every_node(tree) if isinstance(n, FUNCTIONS) and n.name in TENSOR_FILLS), None)


def initialiser_problem(tree: ast.Module, function: ast.AST, method: bool = False) -> str | None:
    """Why ``model.apply(function)`` may change what a module runs; None where ``function`` (a
    function of the file, one parameter the module) only initialises weights: its parameter is
    tested (``isinstance(m, nn.Linear)``, ``m.bias is not None``), its tensors filled in place
    (``m.weight.data.normal_(...)``) or handed to ``torch.nn.init``'s functions
    (``nn.init.xavier_uniform_(m.weight)``). Whatever ``m.weight`` is, such an operation either
    changes values or fails: it installs no code."""
    if not isinstance(function, ast.FunctionDef) or function.decorator_list:
        return "the function `apply` is handed is not a plain function of the file"
    own = defines_a_fill(tree)
    if own is not None:
        return f"the file defines `{own.name}` (line {own.lineno}): a fill by that name may run it"
    positional = [a.arg for a in [*function.args.posonlyargs, *function.args.args]][1 if method else 0:]
    if len(positional) != 1 or function.args.vararg or function.args.kwarg or function.args.kwonlyargs:
        return f"`{function.name}` takes other parameters than the module"
    parameter = positional[0]
    parents = parent_map(tree)
    for use in every_node(function):
        if not (isinstance(use, ast.Name) and use.id == parameter and binding_scope(tree, use, parameter) is function):
            continue
        if not isinstance(use.ctx, ast.Load):
            return f"`{parameter}` is bound again (line {use.lineno})"
        parent = parents.get(id(use))
        if isinstance(parent, ast.Call) and use in parent.args and isinstance(parent.func, ast.Name) \
                and parent.func.id in READING_BUILTINS and not _bound_anywhere(tree, parent.func.id):
            continue  # ``isinstance(m, nn.Linear)``
        top = _chain_top(use, parents)
        above = parents.get(id(top))
        if top is use or not isinstance(top, ast.Attribute) or not isinstance(top.ctx, ast.Load):
            return f"`{ast.unparse(above if isinstance(above, ast.expr) else top)[:50]}` (line {use.lineno}) in `{function.name}`"
        if isinstance(above, (ast.Compare, ast.BoolOp, ast.UnaryOp)) or (
                isinstance(above, (ast.If, ast.IfExp, ast.While, ast.Assert)) and above.test is top):
            continue  # ``if m.bias is not None:``
        if isinstance(above, ast.Call) and above.func is top and top.attr in FILLS:
            if isinstance(top.value, ast.Attribute):
                continue  # ``m.weight.data.normal_(0, 0.02)``, ``m.bias.zero_()``: a tensor of it filled
        if isinstance(above, ast.Call) and top in above.args and _an_initialiser(tree, above.func):
            continue  # ``nn.init.xavier_uniform_(m.weight)``
        return f"`{ast.unparse(above if isinstance(above, ast.expr) else top)[:50]}` (line {use.lineno}) in `{function.name}`"
    return None


def filled_tensor(tree: ast.Module, call: ast.Call) -> ast.Attribute | None:
    """The tensor attribute a call fills in place, where it does nothing else: one handed first to
    ``torch.nn.init``'s functions (``nn.init.zeros_(self.net.weight)``) or told to fill itself
    (``self.net.bias.data.zero_()``). Whatever object holds it, its values change (or the call
    fails); no code of it is replaced, where no code of the program defines a method of a fill's
    name (the file's own is asked here; ``ProjectFacts.defines_a_fill`` asks the others). None for
    any other call."""
    if defines_a_fill(tree) is not None:
        return None
    if call.args and _an_initialiser(tree, call.func):
        target = call.args[0]
    elif isinstance(call.func, ast.Attribute) and call.func.attr in FILLS:
        target = call.func.value
    else:
        return None
    return target if isinstance(target, ast.Attribute) else None


def _an_initialiser(tree: ast.Module, func: ast.expr) -> bool:
    """A function of ``torch.nn.init`` (``nn.init.xavier_uniform_``, ``torch.nn.init.zeros_``,
    ``init.normal_``, ``I.ones_``), the name it is reached through bound by imports of torch alone
    (resolved from the file's import statements)."""
    if not (isinstance(func, ast.Attribute) and func.attr.endswith("_")):
        return False
    chain, root = [], func.value
    while isinstance(root, ast.Attribute):
        chain.insert(0, root.attr)
        root = root.value
    if not isinstance(root, ast.Name) or _bound_otherwise(tree, root.id):
        return False
    meant = _torch_imports(tree).get(root.id)
    return meant is not None and ".".join([meant, *chain]) == "torch.nn.init"


def _torch_imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> the torch module it means, for the names the file binds by one import of a
    torch module alone (``import torch``, ``from torch import nn``, ``import torch.nn.init as I``)."""
    kept = tree.__dict__.get("_ddpfix_torch_imports")
    if kept is None:
        seen: dict[str, list[str | None]] = {}
        for node in every_node(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    seen.setdefault(local, []).append(alias.name if alias.asname else alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    module = f"{node.module}.{alias.name}" if node.module and not node.level else None
                    seen.setdefault(alias.asname or alias.name, []).append(module)
        kept = tree._ddpfix_torch_imports = {local: found[0] for local, found in seen.items()
                                             if len(found) == 1 and found[0] is not None
                                             and (found[0] == "torch" or found[0].startswith("torch."))}
    return kept


def _bound_otherwise(tree: ast.Module, name: str) -> bool:
    """The file binds ``name`` other than by an import (or may bind any name)."""
    for node in every_node(tree):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, (*FUNCTIONS, ast.ClassDef)) and node.name == name or isinstance(node, ast.arg) and node.arg == name:
            return True
        if isinstance(node, ast.alias) and node.name == "*":
            return True
    return False


def applies_initialisers_only(tree: ast.Module, call: ast.Call, elsewhere=None) -> bool:
    """``x.apply(f)`` hands every part of ``x`` to a function of the file that only initialises
    weights (``initialiser_problem``), one no other file replaces (``elsewhere(name)``)."""
    if len(call.args) != 1 or call.keywords:
        return False
    function = _file_function(tree, call.args[0])
    return function is not None and (elsewhere is None or elsewhere(function.name) is None) \
        and initialiser_problem(tree, function) is None
