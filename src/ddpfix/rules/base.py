"""What every rule is: its identity, its prefilter, and the context it reports through."""

from __future__ import annotations

import ast
import inspect
from bisect import bisect_left
import io
import tokenize
from collections.abc import Collection, Mapping, Sequence
from typing import ClassVar

from ddpfix.analysis.ast_shapes import every_node
from ddpfix.facts import ProjectFacts
from ddpfix.findings import SAFE, UNSAFE, Finding, FixKey
from ddpfix.imports import TREE_COMPOUND, ImportTable, tree_blocks
from ddpfix.lazy_regex import lazy_compile
from ddpfix.locations import CodeRange, TreePositions
from ddpfix.suppressions import is_suppressed, may_hold_directives, suppressions

#: Where each rule's page lives online: ``docs/rules/<CODE>.md`` in the repository, generated from
#: the rule's docstring (``python -m ddpfix.docs``; a test keeps them in step).
DOCS_URL = "https://github.com/ddpfix/ddpfix/blob/main/docs/rules/{code}.md"


_CONTINUATION = lazy_compile(r"\\(?:\r\n|\r|\n)")

#: Why a fix is unsafe when its rule says nothing more: it was not proven safe.
NOT_PROVEN = "not proven to keep what correct code computes"

def clip(text: str, width: int = 30) -> str:
    """``text`` for a finding line: code quoted in a short message is cut to ``width`` characters
    (the ``detail`` quotes it whole)."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


class TreeView:
    """One version of the file as the rules read it (``Rule.check``): CPython's tree, its bytes and
    text, its import table, and (computed on first use, once) positions as LibCST counts them,
    suppression comments and statement starts. A report never parses the file with LibCST (torch's
    460 kB distributed_test.py: a LibCST parse of two seconds for one report-only rule)."""

    def __init__(self, tree: ast.Module, data: bytes):
        self.tree = tree
        self.data = data
        self.imports = ImportTable.from_tree(tree)
        self._text: str | None = None
        self._positions: TreePositions | None = None
        self._suppressions: dict | None = None
        self._starts: dict[int, int] | None = None
        # id of a block -> the block (kept, so that its id stays its own), its statement lines, and
        # the index of each line by the id of its first statement
        self._lines: dict[int, tuple[list[ast.stmt], list[list[ast.stmt]], dict[int, int]]] = {}

    @classmethod
    def of(cls, tree: ast.Module, data: bytes) -> TreeView:
        """The view of ``tree`` (CPython's tree of ``data``), made once per tree and kept on it: the
        rules that fix and those that only report read the same version, so its tables (imports,
        positions, suppressions, statement lines) are computed once."""
        known = tree.__dict__.get("_ddpfix_view")
        if known is None or known.data != data:
            known = tree._ddpfix_view = cls(tree, data)
        return known

    @property
    def text(self) -> str:
        """The source as LibCST decodes it (its coding cookie or BOM, else UTF-8; a BOM dropped)."""
        if self._text is None:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(self.data).readline)
            self._text = self.data.decode(encoding)
        return self._text

    @property
    def positions(self) -> TreePositions:
        if self._positions is None:
            self._positions = TreePositions(self.text)
        return self._positions

    def position(self, node: ast.AST) -> CodeRange:
        return self.positions[node]

    @property
    def suppressions(self) -> dict:
        if self._suppressions is None:
            wanted = may_hold_directives(self.data)
            self._suppressions = suppressions(self.text, self.string_spans) if wanted else {}
        return self._suppressions

    def string_spans(self, lines: set[int]) -> list[tuple[int, int]]:
        """Where the string literals that touch ``lines`` stand, as sorted, disjoint (start, end)
        character offsets: the spans of the outermost string nodes (an f-string's parts lie inside
        its own)."""
        offset = self.positions.offset
        wanted = sorted(lines)

        def touches(node: ast.AST) -> bool:
            index = bisect_left(wanted, node.lineno)
            return index < len(wanted) and wanted[index] <= node.end_lineno

        spans = sorted(
            (offset(n.lineno, n.col_offset), offset(n.end_lineno, n.end_col_offset))
            for n in every_node(self.tree)
            if (isinstance(n, ast.JoinedStr) or (isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes))))
            and touches(n)
        )
        merged: list[tuple[int, int]] = []
        for start, end in spans:
            if merged and start < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged

    def statement_start(self, line: int) -> int:
        """The first line of the simple statement line (LibCST's ``SimpleStatementLine``: statements
        joined by ``;`` are one) that spans ``line``: a ``# noqa`` there covers the whole line."""
        if self._starts is None:
            self._starts = {}
            for block in tree_blocks(self.tree):
                if self.one_line_body(block):
                    continue  # ``if x: y = f(...)``: a SimpleStatementSuite, which LibCST's view skips too
                first = last = previous = None
                for statement in [*block, None]:
                    simple = statement is not None and not isinstance(statement, TREE_COMPOUND)
                    if simple and previous is not None and self.joined(previous, statement):
                        last = statement.end_lineno
                    else:
                        if first is not None:
                            for covered in range(first + 1, last + 1):
                                self._starts.setdefault(covered, first)
                        first, last = (statement.lineno, statement.end_lineno) if simple else (None, None)
                    previous = statement if simple else None
        return self._starts.get(line, line)

    def statement_lines(self, block: list[ast.stmt]) -> list[list[ast.stmt]]:
        """``block`` as LibCST lists it: a compound statement alone, simple statements joined by
        ``;`` together (one ``SimpleStatementLine``). Read once per block and kept (a rule asks it
        of the module's body once per ``with`` there): callers never change it."""
        return self._statement_lines(block)[1]

    def line_index(self, block: list[ast.stmt], statement: ast.stmt) -> int:
        """The index, in ``statement_lines(block)``, of the line ``statement`` starts."""
        return self._statement_lines(block)[2][id(statement)]

    def _statement_lines(self, block: list[ast.stmt]):
        known = self._lines.get(id(block))
        if known is not None:
            return known
        lines: list[list[ast.stmt]] = []
        previous = None
        for statement in block:
            simple = not isinstance(statement, TREE_COMPOUND)
            if simple and previous is not None and self.joined(previous, statement):
                lines[-1].append(statement)
            else:
                lines.append([statement])
            previous = statement if simple else None
        known = self._lines[id(block)] = (block, lines, {id(line[0]): index for index, line in enumerate(lines)})
        return known

    def one_line_body(self, block: list[ast.stmt]) -> bool:
        """``if x: y()``: the block stands on its compound statement's line (LibCST's
        ``SimpleStatementSuite``, whose statements LibCST's statement walks do not list)."""
        first, positions = block[0], self.positions
        return bool(self.text[positions.line_start(first.lineno):positions.offset(first.lineno, first.col_offset)].strip())

    def joined(self, previous: ast.stmt, statement: ast.stmt) -> bool:
        """``a; b``: only whitespace, backslash continuations and a ``;`` stand between two
        statements of one line. A newline left once the continuations are gone ends the line
        (``a = 1;`` alone on its line is a line of its own, as is a line ending in a comment)."""
        positions = self.positions
        between = self.text[positions.offset(previous.end_lineno, previous.end_col_offset):
                            positions.offset(statement.lineno, statement.col_offset)]
        if "#" in between:
            return False  # a comment ends the line, even one that ends in a backslash
        between = _CONTINUATION.sub("", between)
        return ";" in between and "\n" not in between and "\r" not in between


class RuleContext:
    """Handed to a rule for one file: where to report, and whether a fix is to be applied.

    A rule calls :meth:`report` for each finding, with the fix (its applicability and its typed
    edits) where it has one. The answer says whether the fix will be applied; that single gate is
    what lets the engine re-run a file with exactly the fixes a user chose (``--interactive``,
    editor quick fixes) and still verify the result.
    """

    def __init__(
        self,
        path: str,
        rule: Rule,
        view: TreeView,
        facts: ProjectFacts,
        only: Collection[FixKey] | None,
        options: Mapping[str, object],
    ):
        self.path = path
        self.rule = rule
        self.view = view
        self.imports = view.imports
        self.facts = facts
        self.options = options
        #: The bytes of the module as this rule sees it: a cheap ``b"word" in ctx.data`` can skip a
        #: whole-tree walk.
        self.data = view.data
        self._only = only
        self.findings: list[Finding] = []
        #: Each fix's typed edits, by the key of its finding.
        self.edits: dict[FixKey, tuple] = {}

    def position(self, node: ast.AST) -> CodeRange:
        """Where ``node`` stands as LibCST counts (1-based lines, 0-based columns in characters):
        the spans typed edits name, and the places findings are reported at."""
        return self.view.position(node)

    def report(self, node: ast.AST, message: str, *, fixable: bool, detail: str = "", safe: bool = False,
               why: str = "", edits: Sequence[object] | None = None) -> bool:
        """Record a finding at ``node``; True when its fix is to be applied.

        ``message``: what is wrong here, short enough for one finding line (about 70 characters;
        name what makes the finding this one: the call, the metric, the hook); ``detail``: the
        explanation (why it breaks under DDP, what to do, why it is not rewritten), shown with
        ``-v`` and in JSON.

        ``safe`` says the analysis proved the fix changes nothing the program computes except the
        DDP failure; otherwise the fix is unsafe, ``why`` saying what was not proven. Unknown is
        not safe, so a fix is unsafe unless a rule says otherwise. A fix is applied when picked by
        hand (``only``), else when safe or ``--unsafe-fixes`` is on. ``edits``: the fix as typed
        edits (``ddpfix.edits``), which the engine carries out on LibCST's tree when it is applied.

        A finding silenced by ``# noqa`` / ``# ddpfix: ignore`` on its line, or on the first line of
        the statement it is in, is dropped, fix included (kept, marked, with ``show_suppressed``).
        """
        where = self.position(node)
        line, column = where.start.line, where.start.column + 1
        marks = self.view.suppressions
        if marks and (
            is_suppressed(marks, line, self.rule.code)
            or is_suppressed(marks, self.view.statement_start(line), self.rule.code)
        ):
            if self.options.get("show_suppressed"):
                self.findings.append(Finding(self.path, line, column, where.end.line, where.end.column + 1,
                                             self.rule.code, self.rule.name, message, False, False, True,
                                             detail=detail))
            return False
        key = FixKey(self.rule.code, line, column)
        applicability, reason = None, ""
        if fixable:
            applicability, reason = (SAFE, "") if safe else (UNSAFE, why or NOT_PROVEN)
        if self._only is not None:
            apply = fixable and key in self._only
        else:
            apply = fixable and (applicability == SAFE or bool(self.options.get("unsafe_fixes")))
        if fixable and edits is not None:
            # Findings at one place share a key (and a fix): their edits, each once.
            self.edits[key] = tuple(dict.fromkeys((*self.edits.get(key, ()), *edits)))
        self.findings.append(
            Finding(
                path=self.path,
                line=line,
                column=column,
                end_line=where.end.line,
                end_column=where.end.column + 1,
                code=self.rule.code,
                name=self.rule.name,
                message=message,
                fixable=fixable,
                fixed=apply,
                applicability=applicability,
                unsafe_reason=reason,
                detail=detail,
            )
        )
        return apply

    @property
    def fixes_applied(self) -> int:
        return sum(f.fixed for f in self.findings)


class Rule:
    """Base of every rule. A subclass in a module of ``ddpfix.rules`` is registered by being there.

    Subclasses set the class attributes and implement :meth:`check`, the one place the rule
    decides: its findings, and for a fixable rule each fix's applicability and typed edits. The
    class docstring is the rule's page (``ddpfix --explain``): *What it does*, *Why it breaks under
    DDP*, *Before*, *After*, *Fix safety*, *When it does not fix*.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    fixable: ClassVar[bool]
    #: Prefilter: every entry must occur in the file's bytes; an entry that is a tuple is satisfied
    #: by any one of its strings. A file that fails it is not parsed for this rule.
    triggers: ClassVar[tuple[str | tuple[str, ...], ...]]
    #: Reads ``ctx.facts`` (monitored metrics, LightningModule classes of other files): the runner
    #: then gathers them over the whole run first.
    uses_facts: ClassVar[bool] = False
    #: A preview rule is below its precision target on real code (bench/real): left out of the
    #: default selection, chosen by its exact code or with ``--preview`` (``rules.select_rules``).
    preview: ClassVar[bool] = False
    #: Only Lightning code can hold this pitfall: files that neither import Lightning nor subclass a
    #: LightningModule of the run are skipped before parsing.
    lightning_only: ClassVar[bool] = False
    #: Only code inside a LightningModule can hold this pitfall: files without a class deriving from
    #: one (here or through a class of the run) are skipped before parsing.
    module_only: ClassVar[bool] = False
    #: With ``module_only``: the kinds (``model.classes.KINDS``) a class of the file must derive from
    #: for the rule to read it (DDP004 also reads a Callback's ``pl_module.log``).
    module_kinds: ClassVar[frozenset[str]] = frozenset({"LightningModule"})
    #: Its failure shows on GPUs only (a tensor left on the CPU beside the GPU batch, a device map,
    #: data work on the CUDA default device): a CPU rehearsal (``ddpfix rehearse``) runs it clean, so
    #: the rehearsal says its findings beside its verdict and is not offered to check its fixes.
    gpu_only: ClassVar[bool] = False

    _compiled: ClassVar[tuple[tuple[bytes, ...], ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.check is Rule.check:
            raise TypeError(f"{cls.__name__} must implement check (its findings, and its fixes as typed edits)")
        cls._compiled = tuple(
            tuple(s.encode() for s in ((t,) if isinstance(t, str) else t)) for t in cls.triggers
        )

    @classmethod
    def applies_to(cls, path: str) -> bool:
        """Whether files of this name can hold the pitfall at all (a notebook-only rule says no to
        ``.py`` files, which then are not parsed for it)."""
        return True

    @classmethod
    def has_trigger_words(cls, data: bytes) -> bool:
        """The first prefilter: every group of ``triggers`` has a word in the file's bytes."""
        return all(any(s in data for s in group) for group in cls._compiled)

    @classmethod
    def triggered_by(cls, data: bytes) -> bool:
        """Whether the file may concern the rule, before any parse: the trigger words, and in rules
        that override this, a text test on top (``analysis/text.py``), a superset of ``may_apply``."""
        return cls.has_trigger_words(data)

    @classmethod
    def has_text_prefilter(cls) -> bool:
        return cls.triggered_by.__func__ is not Rule.triggered_by.__func__

    @classmethod
    def without_prefilters(cls) -> type[Rule]:
        """The rule with its trigger words, text test, ``module_only`` and ``may_apply`` switched
        off: what the checks that prefilters hide nothing compare against. (``lightning_only`` is
        the rule's scope, not a prefilter: it stays.)"""
        return type(cls.__name__, (cls,), {
            "triggered_by": classmethod(lambda _, data: True),
            "may_apply": classmethod(lambda _, tree: True),
            "module_only": False,
        })

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """A cheap look at CPython's tree that may rule the file out before ``check``. Only ever
        False when the rule can have nothing to say: it never decides a finding."""
        return True

    @classmethod
    def page(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or cls.summary)

    @classmethod
    def url(cls) -> str:
        """The rule's page online, for editors and SARIF viewers to link to."""
        return DOCS_URL.format(code=cls.code)

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """Report findings on CPython's tree of the file (``ctx.view`` is its ``TreeView``), each
        fixable one with its applicability and typed edits. The same call serves a report
        (``--check``, the editor's diagnostics) and a fix (the engine then carries out the chosen
        fixes' edits on LibCST's tree of the same version), so the two cannot disagree."""
        raise NotImplementedError
