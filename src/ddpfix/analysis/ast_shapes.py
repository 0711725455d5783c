"""Shapes on CPython's ``ast`` tree, for the rules' ``may_apply``: each as loose as, or looser than,
the LibCST test it stands in for in ``apply`` (a ``may_apply`` may only rule out files)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from ddpfix.ast_walk import child_nodes, walk, walk_list
from ddpfix.imports import tree_blocks as blocks, tree_child_blocks as child_blocks  # noqa: F401 - the rules' names for them


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a Name/Attribute chain; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def root(node: ast.expr) -> str | None:
    """``dm`` for ``dm``, ``dm.x.y``, ``dm[0]``, ``dm.f().x`` (``_names.root_name`` on ``ast``)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def last_name(node: ast.expr) -> str | None:
    """``zeros`` for ``torch.zeros`` or ``zeros``."""
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None


def arguments(call: ast.Call) -> list[ast.expr]:
    """The values of a call's arguments in source order, keywords and ``*``/``**`` ones included
    (LibCST keeps them in one list; ``ast`` in two)."""
    found = [(a.lineno, a.col_offset, a.value if isinstance(a, ast.Starred) else a) for a in call.args]
    found += [(k.lineno, k.col_offset, k.value) for k in call.keywords]
    return [value for *_, value in sorted(found, key=lambda item: item[:2])]


def import_targets(nodes: Iterable[ast.AST]) -> dict[str, set[str]]:
    """Local name -> every dotted name an absolute import among ``nodes`` (``walk(tree)``, or
    the imports a caller's own walk kept) binds it to: ``imports.ImportTable`` without its
    ambiguity checks, a superset."""
    imported: dict[str, set[str]] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".", 1)[0]
                imported.setdefault(local, set()).add(alias.name if alias.asname else local)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                imported.setdefault(alias.asname or alias.name, set()).add(f"{node.module}.{alias.name}")
    return imported


# The nodes whose walk is kept: a module, and the classes and functions in it, which the per-class
# and per-hook proofs walk again and again (DDP004 and DDP006 each walk a LightningModule about ten
# times per run). Trees are never changed once parsed: a fix makes a new tree, with lists of its own.
_KEPT_WALKS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def every_node(tree: ast.AST) -> list[ast.AST]:
    """``walk(tree)`` as a list, in its order, kept on a module's, class's or function's node: a
    dozen rules and their safety checks walk the same file and the same classes, and the walk itself
    (a generator over every child list) cost more than the questions they ask of the nodes."""
    if not isinstance(tree, _KEPT_WALKS):
        return walk_list(tree)
    known = tree.__dict__.get("_ddpfix_nodes")
    if known is None:
        known = tree._ddpfix_nodes = walk_list(tree)
    return known


def parent_map(tree: ast.AST) -> dict[int, ast.AST]:
    """Node id -> its parent, every node below ``tree`` (nested functions too), kept on ``tree``."""
    kept = tree.__dict__.get("_ddpfix_parent_map")
    if kept is None:
        kept = {}
        for node in every_node(tree):
            for child in ast.iter_child_nodes(node):
                kept[id(child)] = node
        tree._ddpfix_parent_map = kept
    return kept


def nodes_below(node: ast.AST) -> list[ast.AST]:
    """Every node below ``node`` (not ``node`` itself): each child's ``every_node``, one child after
    the other (a parent before its children; no other order between them). A class's nodes so are
    mostly the walks kept on its methods, which the rules read anyway, not a walk of its own."""
    return [below for child in child_nodes(node) for below in every_node(child)]


def nodes_of(tree: ast.Module, *kinds: type) -> list[ast.AST]:
    """The nodes of ``every_node(tree)`` of the given kinds (read only): each kind's in walk order,
    one kind after the other (for a question whose answer does not depend on the order between
    kinds). The file is grouped by kind once, kept on its tree: the rules' whole-file questions each
    read one or two kinds (its calls, its names), and a pass over every node of a large file for
    each cost more than the questions. (A parsed tree holds the ``ast`` classes themselves, never
    subclasses.)"""
    groups = tree.__dict__.get("_ddpfix_by_kind")
    if groups is None:
        groups = tree._ddpfix_by_kind = {}
        for node in every_node(tree):
            group = groups.get(node.__class__)
            if group is None:
                groups[node.__class__] = [node]
            else:
                group.append(node)
    if len(kinds) == 1:
        return groups.get(kinds[0], [])
    return [node for kind in kinds for node in groups.get(kind, ())]


def spelled_names(tree: ast.Module) -> frozenset[str]:
    """Every name (``n``) and attribute name (``x.n``) the file spells, kept on its tree: a question
    about a word of the whole file (does it name ``set_default_dtype`` anywhere) reads these few
    hundred words, not its thousands of names and attributes."""
    known = tree.__dict__.get("_ddpfix_spelled")
    if known is None:
        known = tree._ddpfix_spelled = frozenset(
            {n.id for n in nodes_of(tree, ast.Name)} | {n.attr for n in nodes_of(tree, ast.Attribute)})
    return known


def imports_of(tree: ast.Module) -> dict[str, set[str]]:
    """``import_targets`` of every import in the file, computed once per tree: several rules'
    ``may_apply`` ask it of the same tree."""
    known = getattr(tree, "_ddpfix_imports", None)
    if known is None:
        known = tree._ddpfix_imports = import_targets(every_node(tree))
    return known


def resolved(func: ast.expr, imported: dict[str, set[str]]) -> list[str]:
    """Every dotted name ``func`` (``dist.all_reduce``, ``Loader``) may stand for through the file's
    imports: ``[torch.distributed.all_reduce]``; empty when no import binds its first name."""
    name = dotted(func)
    if name is None:
        return []
    head, _, rest = name.partition(".")
    return [f"{target}.{rest}" if rest else target for target in imported.get(head, ())]


def may_be(func: ast.expr, qualified: frozenset[str] | set[str], imported: dict[str, set[str]]) -> bool:
    """Whether ``func`` may stand for one of ``qualified`` through any of the file's imports."""
    return any(name in qualified for name in resolved(func, imported))


def statements(tree: ast.Module):
    """Every statement of the file, nested ones included, without entering expressions (classes
    and functions only ever stand as statements; walking every expression costs several times more)."""
    for block in blocks(tree):
        yield from block


def methods(tree: ast.Module):
    """(class, method) for every function defined directly in a class body, any class (a superset
    of ``_lightning.lightning_methods``: which classes are LightningModules is ``apply``'s question)."""
    for node in statements(tree):
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield node, statement


def a_method_calls_self_log(tree: ast.AST) -> bool:
    """A method of some class calls ``self.log(...)`` or ``self.log_dict(...)``: what every rule about
    ``self.log`` starts from (``lightning_methods`` + ``self_method_calls``). A mention in a
    docstring is not a call: Lightning's loggers document ``self.log`` and never call it. Three
    rules ask it of the same tree, so the answer is kept on the tree."""
    known = getattr(tree, "_ddpfix_calls_self_log", None)
    if known is None:
        known = tree._ddpfix_calls_self_log = any(
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("log", "log_dict")
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"
            for _cls, method in methods(tree) for node in walk(method)
        )
    return known


def scope_map(tree: ast.AST) -> dict[int, ast.AST]:
    """``id(node)`` -> the scope it is evaluated in (a function, lambda, class or the module), for
    every node of the tree (or of a class, function or lambda: its body's nodes in it); a scope's own
    entry is the scope around it. A function's decorators, defaults and return annotation, a
    class's bases are evaluated in the scope around it. (A comprehension's code counts as its
    function's: more bindings, never fewer; its ``locals()`` reads no more than the function's.)"""
    found = getattr(tree, "_ddpfix_scopes", None)
    if found is not None:
        return found
    found = {}
    pending: list[tuple[ast.AST, ast.AST]] = [(child, tree) for child in ast.iter_child_nodes(tree)]
    while pending:
        node, scope = pending.pop()
        found[id(node)] = scope
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            outside = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
            if not isinstance(node, ast.Lambda):
                outside += [*node.decorator_list, *([node.returns] if node.returns else [])]
            pending += [(child, scope) for child in outside]
            inside = [*args.posonlyargs, *args.args, *args.kwonlyargs,
                      *(a for a in (args.vararg, args.kwarg) if a is not None)]
            inside += node.body if isinstance(node.body, list) else [node.body]
            pending += [(child, node) for child in inside]
        elif isinstance(node, ast.ClassDef):
            pending += [(child, scope) for child in (*node.bases, *node.keywords, *node.decorator_list)]
            pending += [(child, node) for child in node.body]
        else:
            pending += [(child, scope) for child in ast.iter_child_nodes(node)]
    tree._ddpfix_scopes = found
    return found
