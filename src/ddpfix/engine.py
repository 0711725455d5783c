"""Fix one Python source: prefilter, parse once, run the rules in order, verify, never lose the original.

``fix_python`` is a pure function of its inputs. It knows nothing of notebooks: the notebook
front-end calls it, and ``sources.fix_source`` sends each file to one or the other.
"""

from __future__ import annotations

import ast
import codecs
import gc
import io
import sys
import tokenize
import warnings
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ddpfix import budget
from ddpfix.budget import TOO_COSTLY, OverBudget
from ddpfix.edits import apply_edits
from ddpfix.facts import ProjectFacts, defines_subclass, file_facts, is_lightning_code
from ddpfix.findings import NOTE, FileResult, FixKey, Problem
from ddpfix.rules.base import Rule, RuleContext, TreeView

if TYPE_CHECKING:  # LibCST is imported where a file is parsed for a fix: a report never loads it
    import libcst as cst

    from ddpfix.positions import Positions

PARSE_ERROR = "E999"
READ_ERROR = "E902"
INTERNAL_ERROR = "internal error"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def decode_problem(path: str, data: bytes, nul_checked: bool = False) -> Problem | None:
    """Whether the bytes are text in the encoding they declare (a coding cookie, a BOM, else UTF-8).

    Checked for every file, before the prefilter, because it costs next to nothing (C-speed decode):
    a binary file named ``.py``, a file that is not valid UTF-8 or one whose cookie names a wrong or
    unknown codec is reported even when no rule's trigger words occur in it. ``nul_checked``: the
    caller read the bytes with ``runner.read_source``, which rejects NUL bytes already.
    """
    if not nul_checked and b"\x00" in data:
        return Problem(path, READ_ERROR, "cannot read: binary content, not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as err:
        if "invalid or missing encoding declaration" not in str(err):
            message = err.msg or str(err)
            if data.startswith(codecs.BOM_UTF8) and message.startswith("encoding problem"):
                message = "the file starts with a UTF-8 BOM but its coding cookie names another encoding"
            return Problem(path, READ_ERROR, f"cannot decode: {message}")
        encoding = "utf-8"  # no cookie and a first line that is not UTF-8: say where, below
    try:
        data.decode(encoding)
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        bad = data[err.start:err.end].hex(" ")
        return Problem(path, READ_ERROR, f"cannot decode: byte(s) {bad} are not valid {encoding}", line, column)
    except LookupError as err:  # detect_encoding checks the codec exists; this is belt and braces
        return Problem(path, READ_ERROR, f"cannot decode: {err}")
    return None


def _check_syntax(path: str, data: bytes) -> ast.Module | Problem:
    # CPython's own parser goes first: its positions are exact, it rejects the pathological nesting
    # that would crash LibCST's native parser (a segfault, not an exception), and its tree lets rules
    # rule themselves out at C speed before the (much slower) LibCST parse.
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the user's SyntaxWarnings are not ours to print
            return ast.parse(data, path)
    except SyntaxError as err:
        message = err.msg or str(err)
        if "codec" in message or "encoding" in message:
            return Problem(path, READ_ERROR, f"cannot decode: {message}")
        return Problem(path, PARSE_ERROR, f"cannot parse: {message}", err.lineno, err.offset)
    except (ValueError, UnicodeDecodeError) as err:
        return Problem(path, READ_ERROR, f"cannot decode: {err}")
    except (MemoryError, RecursionError):
        return Problem(path, PARSE_ERROR, "cannot parse: too deeply nested")


def _parse(path: str, data: bytes) -> cst.Module | Problem:
    import libcst as cst

    try:
        return cst.parse_module(data)
    except cst.ParserSyntaxError as err:
        return Problem(path, PARSE_ERROR, f"cannot parse: {_first_line(err.message)}", err.raw_line, err.raw_column + 1)
    except (UnicodeDecodeError, LookupError, SyntaxError) as err:
        return Problem(path, READ_ERROR, f"cannot decode: {err}")
    except RecursionError:
        return Problem(path, PARSE_ERROR, "cannot parse: too deeply nested")


def _compile_error(path: str, data: bytes, tree: ast.Module | None = None) -> SyntaxError | ValueError | None:
    """Why ``data`` does not compile, or None. ``tree``: CPython's tree of ``data`` where it is at
    hand (compiling it is compiling ``data`` without parsing it again)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the user's SyntaxWarnings are not ours to print
            compile(data if tree is None else tree, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as err:
        return err
    except RecursionError as err:
        return SyntaxError(str(err) or "nesting too deep")
    return None


def _compiled_tree(path: str, data: bytes) -> ast.Module | SyntaxError | ValueError:
    """CPython's tree of ``data``, which compiles; else why it does not (one parse for both)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data, path)
    except (SyntaxError, ValueError) as err:
        return err
    except (RecursionError, MemoryError) as err:
        return SyntaxError(str(err) or "nesting too deep")
    error = _compile_error(path, data, tree)
    return tree if error is None else error


# LibCST walks trees recursively; long ``elif`` chains or long sums are valid code that needs more
# than Python's default 1000 frames. Python-to-Python calls do not grow the C stack, so this is safe.
RECURSION_LIMIT = 20_000

# A file's trees are hundreds of thousands of small objects without reference cycles, alive until
# its work ends; at the default thresholds (700, 10, 10) the collector walked them over and over:
# a third of the CPU time on a 1 MB file, a tenth on ordinary scripts (bench/README.md). Young
# collections come after 50,000 new objects instead of 700; the few cycles there are still go.
GC_THRESHOLDS = (50_000, 20, 10)


# LibCST holds several hundred bytes of tree per byte of source: a 50 MB generated file took 23 GB
# and more than five minutes. A file this large that holds trigger words is reported, not parsed;
# the largest file in torch, lightning and transformers is 1.4 MB. The default of the
# ``max-file-size`` setting (``options["max_file_size"]``; docs/limits.md).
MAX_PARSE_BYTES = budget.DEFAULT_MAX_FILE_SIZE


def max_file_size(options: Mapping[str, object] | None) -> int:
    """The largest file parsed, in bytes (``--max-file-size``)."""
    return int((options or {}).get("max_file_size") or MAX_PARSE_BYTES)

# Rounds of the rules over a file in fix mode, at most: each round after the first only runs while
# some rule's fix changed what another rule sees (one extra round in practice).
MAX_ROUNDS = 3


def set_up_for_trees() -> None:
    """The interpreter's settings for analysing big trees, once per process (the CLI, the language
    server, each worker)."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    gc.set_threshold(*GC_THRESHOLDS)


def fix_python(
    path: str,
    data: bytes,
    rules: Sequence[type[Rule]],
    facts: ProjectFacts | None = None,
    only: Collection[FixKey] | None = None,
    options: Mapping[str, object] | None = None,
) -> FileResult:
    """Run ``rules`` over one Python file's bytes, whatever its name; see ``_fix_source``. Never
    raises: a bug of ours outside any rule (reading imports, facts) costs this file, reported, and
    never the run. The work keeps within the file's budget of time and memory (``budget``): a
    file over it keeps its bytes and the findings computed so far, with an ``E903``."""
    result = FileResult(path, data)
    try:
        with budget.bounded(options):
            return _fix_source(path, data, rules, facts, only, options, result)
    except OverBudget as over:
        return over_budget(result, over.message)
    except Exception as err:
        try:
            budget.raise_if_wrapped(err)
        except OverBudget as over:
            return over_budget(result, over.message)
        return internal_error(path, data, err)


def over_budget(result: FileResult, message: str) -> FileResult:
    """The file's result once its budget is spent: its original bytes, the findings computed so
    far (none of them fixed), and why."""
    result.fixed = None
    result.findings = sorted((_unfixed(f) for f in result.findings), key=lambda f: (f.line, f.column, f.code))
    result.problems.append(Problem(result.path, TOO_COSTLY, f"{message}; file left as it was"))
    return result


def internal_error(path: str, data: bytes, err: Exception) -> FileResult:
    message = f"{INTERNAL_ERROR}: {type(err).__name__}: {err}; file left as it was"
    return FileResult(path, data, problems=[Problem(path, "E001", message)])


def _fix_source(
    path: str,
    data: bytes,
    rules: Sequence[type[Rule]],
    facts: ProjectFacts | None,
    only: Collection[FixKey] | None,
    options: Mapping[str, object] | None,
    result: FileResult,
) -> FileResult:
    """Run ``rules`` over one file's bytes, into ``result`` (empty: ``FileResult(path, data)``).

    ``only``: apply just the fixes with these keys (None: every fixable finding). Findings of other
    fixable cases are still reported, as not fixed. ``facts``: what the run knows across files; None
    means this file is the whole run. ``options``: rule settings such as ``log_mode``. Whatever fails, the result's bytes are either
    the original or a version that parsed and compiled after every rule that changed it.
    """
    problem = decode_problem(path, data)
    if problem is not None:
        result.problems.append(problem)
        return result
    # The cheapest question first: most files of a big tree are not Lightning code, and then the
    # Lightning rules' trigger words are never searched for.
    lightning = any(rule.lightning_only for rule in rules) and is_lightning_code(data, facts)
    active = [
        rule for rule in rules
        if (lightning or not rule.lightning_only) and rule.applies_to(path) and rule.triggered_by(data)
    ]
    if any(rule.module_only for rule in active):
        active = [rule for rule in active if not rule.module_only or defines_subclass(data, facts, rule.module_kinds)]
    if not active:
        return result
    limit = max_file_size(options)
    if len(data) > limit:
        size = len(data) / 2**20
        result.problems.append(Problem(path, READ_ERROR, f"not analysed: {size:.1f} MiB is over the "
                                       f"{budget.describe_size(limit)} limit for parsing (max-file-size)"))
        return result
    tree = _check_syntax(path, data)
    if isinstance(tree, Problem):
        result.problems.append(tree)
        return result
    active = [rule for rule in active if rule.may_apply(tree)]
    if not active:
        return result
    if facts is None:
        facts = ProjectFacts.merge([file_facts(path, data)]) if any(r.uses_facts for r in active) else ProjectFacts()
    options = options or {}
    if only is not None and not only:
        _report(path, tree, data, active, facts, options, result)
        return result
    current: bytes | None = data  # None: the file keeps its original bytes
    fixed_tree = tree
    editors = [rule for rule in active if rule.fixable]
    if editors:
        edited = _edit(path, data, editors, facts, only, options, result, tree)
        current, fixed_tree = edited if edited is not None else (None, None)
    readers = [rule for rule in active if not rule.fixable]
    if readers:
        # Their findings stand in the bytes the result holds: the fixed code, or the original
        # when nothing changed or something failed (then the file keeps its original bytes).
        found: list = []
        try:
            failed = _read_tree(path, tree, data, readers, facts, options, result, found)
            if not failed and current is not None and current != data:
                found_in_fixed: list = []
                failed = _read_tree(path, fixed_tree, current, readers, facts, options, result, found_in_fixed)
                if not failed:
                    found = found_in_fixed
        except OverBudget:
            result.findings += found  # those of the original, read before the budget ran out
            raise
        if failed:
            current = None
            result.findings = [_unfixed(f) for f in result.findings]
        result.findings += found
    if current is not None and current != data:
        result.fixed = current
    result.findings.sort(key=lambda f: (f.line, f.column, f.code))
    return result


def _report(path: str, tree: ast.Module, data: bytes, active: Sequence[type[Rule]], facts: ProjectFacts,
            options: Mapping[str, object], result: FileResult) -> None:
    """Report-only (nothing is rewritten, so every rule reads the file as it is, from one tree):
    the same ``check`` a run that fixes asks, so the two cannot disagree."""
    found: list = []
    try:
        _read_tree(path, tree, data, active, facts, options, result, found)
    finally:  # over budget: the findings of the rules that finished are kept
        result.findings += found
    result.findings.sort(key=lambda f: (f.line, f.column, f.code))


def _read_tree(path: str, tree: ast.Module, data: bytes, rules: Sequence[type[Rule]], facts: ProjectFacts,
               options: Mapping[str, object], result: FileResult, found: list) -> bool:
    """The findings of ``rules`` on CPython's tree of ``data``, added to ``found`` rule by rule;
    whether one of the rules failed (the failure is added to ``result``; the file must then keep
    its original bytes)."""
    view = TreeView.of(tree, data)
    for rule in rules:
        budget.checkpoint()
        ctx = RuleContext(path, rule, view, facts, frozenset(), options)
        try:
            rule().check(tree, ctx)
        except Exception as err:  # a rule's bug must cost one file's fixes, never the run
            budget.raise_if_wrapped(err)
            result.problems.append(_failure(path, rule.code, err))
            return True
        found += ctx.findings
    return False


def _failure(path: str, code: str, err: Exception) -> Problem:
    if isinstance(err, RecursionError):
        # Not a bug: a limit, as a budget is (an expression thousands of levels deep).
        return Problem(path, TOO_COSTLY, f"too deeply nested to analyse: {code} reached Python's recursion limit; "
                       "file left as it was")
    return Problem(path, code, f"{INTERNAL_ERROR}: {type(err).__name__}: {err}")


class _Versions:
    """The versions of the file a run that fixes goes through: CPython's tree of each (where the
    rules decide), and LibCST's, parsed only once a fix is to be carried out on that version."""

    def __init__(self, path: str, data: bytes, tree: ast.Module):
        self.path = path
        self._view = TreeView.of(tree, data)
        # LibCST's tree of one version: (bytes, tree, positions or None, whether it was parsed from
        # the bytes rather than made by a fix).
        self._cst: tuple[bytes, cst.Module, Positions | None, bool] | None = None

    @property
    def current(self) -> TreeView:
        """CPython's view of the latest version (the original, or what ``remember`` was given)."""
        return self._view

    def libcst(self, data: bytes) -> tuple[cst.Module, Positions] | Problem:
        """LibCST's tree of ``data`` and its positions, computed on first use: a version that no
        later fix rewrites never needs them (they cost more than the parse). A tree parsed from
        bytes that LibCST does not give back byte for byte is refused: a rewrite could lose text."""
        if self._cst is None or self._cst[0] is not data:
            # LibCST's native parser cannot be interrupted: what it would cost is judged first.
            refusal = budget.libcst_refusal(self._view.tree, len(data))
            if refusal is not None:
                raise OverBudget(refusal)
            module = _parse(self.path, data)
            if isinstance(module, Problem):
                return module
            self._cst = (data, module, None, True)
        _data, module, positions, parsed = self._cst
        if positions is None:
            from ddpfix.positions import Positions

            positions = Positions(module)
            self._cst = (data, module, positions, parsed)
            # LibCST drops a form feed before code (LibCST#446) and, in a fuzzed file, a comment
            # line after blank lines with mixed newlines. The code generation that computed the
            # positions tells, at no cost.
            if parsed and (positions.code is None or positions.code.encode(module.encoding) != data):
                return Problem(self.path, NOTE, "fixes not applied: LibCST does not reproduce this file "
                               "byte for byte, so a rewrite could lose text", level=NOTE)
        return module, positions

    def remember(self, data: bytes, module: cst.Module | None, tree: ast.Module,
                 positions: Positions | None = None) -> None:
        """A fix's output: its bytes, the LibCST tree the fix produced (no second parse; None for
        bytes made on the text, ``_spliced``, parsed if a later fix needs it) with its positions
        where they are known, and CPython's tree of it (from its compile check)."""
        self._cst = None if module is None else (data, module, positions, False)
        self._view = TreeView.of(tree, data)


def _edit(path: str, data: bytes, active: Sequence[type[Rule]], facts: ProjectFacts,
          only: Collection[FixKey] | None, options: Mapping[str, object], result: FileResult,
          tree: ast.Module) -> tuple[bytes, ast.Module] | None:
    """``_rounds``; over budget, the findings of the rules' runs that finished are kept."""
    fixed: list = []
    last_run: dict[str, list] = {}
    try:
        return _rounds(path, data, active, facts, only, options, result, tree, fixed, last_run)
    except OverBudget:
        result.findings = _gathered(fixed, last_run)
        raise


def _rounds(path: str, data: bytes, active: Sequence[type[Rule]], facts: ProjectFacts,
            only: Collection[FixKey] | None, options: Mapping[str, object], result: FileResult,
            tree: ast.Module, fixed: list, last_run: dict[str, list]) -> tuple[bytes, ast.Module] | None:
    """The fixable rules, in rounds: each rule's ``check`` on CPython's tree of the current version
    decides its findings, how safe each fix is and the fix's typed edits, which are carried out on
    the text (``_spliced``) or on LibCST's tree of that same version (parsed only when a fix needs
    it). The bytes they leave and CPython's tree of them, their findings in ``result``; None when
    the file must keep its original bytes (the reason is in ``result.problems``). ``tree``:
    CPython's tree of ``data``."""
    versions = _Versions(path, data, tree)
    current = data
    original_checked = False  # whether the original compiles, asked once a fix would replace it
    # A later rule's fix can change what an earlier rule sees (DDP008 adds ``import os``, and
    # DDP003 then understands ``os.environ["RANK"]``). So that a second run has nothing left to
    # do, the rules go round until each has run on the final code; with ``only`` (fixes picked by
    # hand) one round applies exactly what was picked. Each rule's fixed findings are kept from
    # the run that fixed them, its other findings from its last run (``fixed``, ``last_run``).
    unchanged_in_a_row, runs = 0, 0
    last_change: dict[str, int] = {}  # rule code -> the run in which it last changed the file
    max_runs = len(active) * (MAX_ROUNDS if only is None else 1)
    while unchanged_in_a_row < len(active) and runs < max_runs:
        rule = active[runs % len(active)]
        runs += 1
        ctx = None
        checked = False  # whether this run's check finished (its findings then stand for the rule)
        budget.checkpoint()
        try:
            view = versions.current
            ctx = RuleContext(path, rule, view, facts, only, options)
            rule().check(view.tree, ctx)
            checked = True
            last_run[rule.code] = ctx.findings  # this run's, should the budget end the file's work here
            new_data, new_module, new_positions = None, None, None
            if ctx.fixes_applied:
                new_data = _spliced(view, ctx)
            if ctx.fixes_applied and new_data is None:
                new_data = _in_parts(view, ctx)
            if ctx.fixes_applied and new_data is None:
                parsed = versions.libcst(current)
                if isinstance(parsed, Problem):
                    last_run[rule.code] = ctx.findings
                    result.findings = [_unfixed(f) for f in _gathered(fixed, last_run)]
                    result.problems.append(parsed)
                    return None
                module, positions = parsed
                new_module = _carry_out(module, positions, ctx)
                if ctx.fixes_applied:
                    from ddpfix.positions import Positions

                    # The fixed module's code and positions from one pass over what the fix changed.
                    new_positions = Positions.after(new_module, module, positions)
                    new_data = new_positions.code.encode(new_module.encoding)
        except Exception as err:  # a rule's bug must cost one file's fixes, never the run
            budget.raise_if_wrapped(err)
            if checked:
                last_run[rule.code] = ctx.findings  # as the fix left them (a refused one unfixed)
            partial = ctx.findings if ctx is not None and not checked else []
            result.findings = [_unfixed(f) for f in _gathered(fixed, last_run) + partial]
            result.problems.append(_failure(path, rule.code, err))
            return None
        fixed += [f for f in ctx.findings if f.fixed]
        last_run[rule.code] = [f for f in ctx.findings if not f.fixed]
        if new_data is None or new_data == current:
            unchanged_in_a_row += 1
            continue
        if not original_checked:
            original_checked = True
            original = _compile_error(path, data, tree)
            if original is not None:
                # CPython's parser accepts a little that its compiler refuses (a repeated keyword
                # argument): what we would write could not be compared with a working original.
                result.findings = [_unfixed(f) for f in _gathered(fixed, last_run)]
                line = getattr(original, "lineno", None)
                result.problems.append(Problem(path, PARSE_ERROR, f"cannot compile: {getattr(original, 'msg', original)}", line, getattr(original, "offset", None)))
                return None
        new_tree = _compiled_tree(path, new_data)
        if not isinstance(new_tree, ast.Module):
            error = new_tree
            result.findings = [_unfixed(f) for f in _gathered(fixed, last_run)]
            message = f"{INTERNAL_ERROR}: the fix produced code that does not compile ({error}); file left as it was"
            result.problems.append(Problem(path, rule.code, message))
            return None
        current = new_data
        versions.remember(new_data, new_module, new_tree, new_positions)
        # The rule that changed the file runs again on its output too: a fix can settle what kept
        # another finding of the same rule from being fixed (DDP007's "set earlier" refusal, once
        # the earlier assignment is a buffer). With fixes picked by hand, one round is the promise.
        unchanged_in_a_row = 1 if only is not None else 0
        last_change[rule.code] = runs
    if only is None and unchanged_in_a_row < len(active):
        # The rounds ran out with rules still changing the file (fixes that undo each other): what
        # we would write is not a fixed point, so a second run would change it again.
        result.findings = [_unfixed(f) for f in _gathered(fixed, last_run)]
        changing = sorted(code for code, run in last_change.items() if run > runs - len(active))
        message = (f"{INTERNAL_ERROR}: the fixes did not settle after {MAX_ROUNDS} rounds "
                   f"({', '.join(changing)} kept changing the file); file left as it was")
        result.problems.append(Problem(path, changing[0], message))
        return None
    result.findings = _gathered(fixed, last_run)
    return current, versions.current.tree


def _chosen(ctx: RuleContext) -> tuple[list, list]:
    """The keys of a rule's chosen fixes and their edits, in order. Findings at one place share a
    key, and so the edits the rule gave that key: they are taken once."""
    keys = list(dict.fromkeys(finding.key for finding in ctx.findings if finding.fixed))
    return keys, [edit for key in keys for edit in ctx.edits.get(key, ())]


def _spliced(view: TreeView, ctx: RuleContext) -> bytes | None:
    """A rule's chosen fixes carried out on the text, where ``edits._splice`` can promise the bytes
    LibCST's pass would give (most fixes set or drop a keyword); None leaves them to LibCST."""
    from ddpfix.edits._splice import splice

    _keys, edits = _chosen(ctx)
    text = splice(view.text, view.data, view.tree, view.positions, edits)
    return None if text is None else text.encode("utf-8")


def _in_parts(view: TreeView, ctx: RuleContext) -> bytes | None:
    """A rule's chosen fixes carried out on LibCST's trees of the top-level statements they touch
    (``edits._in_parts``), where those give the whole-file pass's bytes; None leaves them to the
    whole file. As there, a fix whose edits cannot all be applied is reported as not fixed."""
    from ddpfix.edits._in_parts import Parts

    keys, edits = _chosen(ctx)
    # LibCST's native parser cannot be interrupted: what it would cost is judged first, as for the file.
    refusal = budget.libcst_refusal(view.tree, len(view.data))
    if refusal is not None:
        raise OverBudget(refusal)
    parts = Parts.of(view.text, view.data, view.tree, view.positions, edits)
    if parts is None:
        return None
    text, refused = parts.carry_out(edits)
    if refused:
        text, _ = parts.carry_out(_without_refused(keys, ctx, refused))
    return text.encode("utf-8")


def _without_refused(keys: list, ctx: RuleContext, refused: list) -> list:
    """The edits of the chosen fixes none of whose edits was refused; the others are reported as
    not fixed, and none of their edits is kept."""
    failed = {key for key in keys if set(ctx.edits.get(key, ())) & set(refused)}
    ctx.findings = [replace(f, fixed=False) if f.key in failed else f for f in ctx.findings]
    return [e for key in keys if key not in failed for e in ctx.edits.get(key, ())]


def _carry_out(module: cst.Module, positions: Positions, ctx: RuleContext) -> cst.Module:
    """A rule's chosen fixes, their edits applied to LibCST's tree of the version ``check`` read;
    a fix whose edits cannot all be applied is reported as not fixed, and none of its edits is kept."""
    keys, edits = _chosen(ctx)
    if not keys:
        return module
    fixed, refused = apply_edits(module, positions, edits)
    if refused:
        keep = _without_refused(keys, ctx, refused)
        fixed, _ = apply_edits(module, positions, keep) if keep else (module, [])
    return fixed


def _gathered(fixed: list, last_run: dict[str, list]) -> list:
    return fixed + [f for findings in last_run.values() for f in findings]


def _unfixed(finding):
    return replace(finding, fixed=False) if finding.fixed else finding
