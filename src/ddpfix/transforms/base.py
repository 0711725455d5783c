"""What every rule is: its identity, its prefilter, and the context it reports through."""

from __future__ import annotations

import ast
import inspect
import io
import re
import tokenize
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

from ddpfix.facts import ProjectFacts
from ddpfix.findings import SAFE, UNSAFE, Finding, FixKey
from ddpfix.imports import TREE_COMPOUND, ImportTable, tree_blocks
from ddpfix.locations import CodeRange, TreePositions
from ddpfix.suppressions import is_suppressed, suppressions

if TYPE_CHECKING:  # LibCST is loaded only where a fix is carried out: a report never needs it
    import libcst as cst

    from ddpfix.positions import Positions

#: Where each rule's page lives online: ``docs/rules/<CODE>.md`` in the repository, generated from
#: the rule's docstring (``python -m ddpfix.docs``; a test keeps them in step).
DOCS_URL = "https://github.com/ddpfix/ddpfix/blob/main/docs/rules/{code}.md"


_CONTINUATION = re.compile(r"\\(?:\r\n|\r|\n)")
_WORD = re.compile(r"\w+")

#: Why a fix is unsafe when its rule says nothing more: it was not proven safe.
NOT_PROVEN = "not proven to keep what correct code computes"

#: From this size on, a file's first position question is answered by a pass that stops at the node.
PARTIAL_POSITIONS_BYTES = 64 * 1024


class ModuleView:
    """One version of the file, shared by every rule that reads it: the tree, its bytes, its import
    table, and (computed on first use, once) node positions, suppression comments and statement starts.
    A rule that rewrites the file starts a new view; the rules that only report share one."""

    def __init__(self, module: cst.Module, data: bytes, imports: ImportTable | None = None):
        self.module = module
        self.data = data
        self.imports = imports if imports is not None else ImportTable.from_module(module)
        self._positions: Positions | None = None
        self._first_positions: Positions | None = None  # a pass up to the first node asked about
        self._suppressions: dict | None = None
        self._starts: dict[int, int] | None = None

    @property
    def positions(self) -> Positions:
        if self._positions is None:
            from ddpfix.positions import Positions

            self._positions = Positions(self.module)
        return self._positions

    def position(self, node: cst.CSTNode) -> CodeRange:
        """``positions[node]``, where possible without generating the whole file: in a big file the
        first node asked about is found by a pass that stops there (with every node before it); a
        node past it makes the full pass. In torch's 460 kB distributed_test.py, one finding near
        the top cost a full pass of 0.9 s, a third of the file's time. In a small file, where
        findings are usually several, the stopped pass would mostly be paid twice."""
        if self._positions is None and len(self.data) >= PARTIAL_POSITIONS_BYTES:
            if self._first_positions is None:
                from ddpfix.positions import Positions

                self._first_positions = Positions(self.module, until=node)
                if self._first_positions.complete:
                    self._positions = self._first_positions
            if node in self._first_positions:
                return self._first_positions[node]
        return self.positions[node]

    @property
    def suppressions(self) -> dict:
        if self._suppressions is None:
            wanted = b"noqa" in self.data or b"ddpfix" in self.data  # the bytes the tree was parsed from
            self._suppressions = suppressions(self.module.code) if wanted else {}
        return self._suppressions

    def statement_start(self, line: int) -> int:
        """The first line of the simple statement that spans ``line`` (a call over several lines)."""
        if self._starts is None:
            import libcst as cst

            self._starts = {}
            positions = self.positions
            for node in positions:
                if isinstance(node, cst.SimpleStatementLine):
                    first, last = positions.lines(node)
                    for covered in range(first + 1, last + 1):
                        self._starts.setdefault(covered, first)
        return self._starts.get(line, line)


class TreeView:
    """``ModuleView`` for the rules that read CPython's tree (``Rule.check``): the same questions,
    answered from ``ast``, so that a file whose only active rules read it is never parsed by LibCST
    (torch's 460 kB distributed_test.py: a LibCST parse of two seconds for one report-only rule)."""

    def __init__(self, tree: ast.Module, data: bytes):
        self.tree = tree
        self.data = data
        self.imports = ImportTable.from_tree(tree)
        self._text: str | None = None
        self._positions: TreePositions | None = None
        self._suppressions: dict | None = None
        self._starts: dict[int, int] | None = None

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

    @property
    def renames_identifiers(self) -> bool:
        """Whether CPython would rename an identifier of the file: ``ast`` holds names NFKC-normalised
        (``ｃuda`` is ``cuda`` there), LibCST as written, so rules that must answer as their ``apply``
        does cannot read this tree (words in strings and comments count too: a cheap superset)."""
        text = self.text
        return not text.isascii() and any(
            not unicodedata.is_normalized("NFKC", word) for word in _WORD.findall(text) if not word.isascii())

    def position(self, node: ast.AST) -> CodeRange:
        return self.positions[node]

    @property
    def suppressions(self) -> dict:
        if self._suppressions is None:
            wanted = b"noqa" in self.data or b"ddpfix" in self.data
            self._suppressions = suppressions(self.text) if wanted else {}
        return self._suppressions

    def statement_start(self, line: int) -> int:
        """``ModuleView.statement_start``: the first line of the simple statement line (LibCST's
        ``SimpleStatementLine``: statements joined by ``;`` are one) that spans ``line``."""
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
        ``;`` together (one ``SimpleStatementLine``)."""
        lines: list[list[ast.stmt]] = []
        previous = None
        for statement in block:
            simple = not isinstance(statement, TREE_COMPOUND)
            if simple and previous is not None and self.joined(previous, statement):
                lines[-1].append(statement)
            else:
                lines.append([statement])
            previous = statement if simple else None
        return lines

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
    """Handed to a rule for one file: where to report, and whether a fix may be applied.

    A rule calls :meth:`report` for each finding and applies the finding's fix only when it
    returns True. That single gate is what lets the engine re-run a file with exactly the fixes a
    user chose (``--interactive``, editor quick fixes) and still verify the result.
    """

    def __init__(
        self,
        path: str,
        rule: Rule,
        view: ModuleView | TreeView,
        facts: ProjectFacts,
        only: Collection[FixKey] | None,
        options: Mapping[str, object],
        applicability: Mapping[FixKey, tuple[str, str]] | None = None,
        undecided: str = NOT_PROVEN,
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
        #: For a rule's ``apply``: each fix's applicability as its ``check`` decided it on the same
        #: version of the file (the one place a rule decides how safe a fix is); a fix that ``check``
        #: did not mark safe is unsafe.
        self._applicability = applicability or {}
        self._undecided = undecided
        self.findings: list[Finding] = []
        #: Each fix's typed edits, by the key of its finding (rules that fix through ``check``).
        self.edits: dict[FixKey, tuple] = {}

    def position(self, node: cst.CSTNode | ast.AST):
        """LibCST's CodeRange of ``node`` (1-based lines, 0-based columns), also for a node of
        CPython's tree in a rule that reads it."""
        return self.view.position(node)

    def report(self, node: cst.CSTNode | ast.AST, message: str, *, fixable: bool, safe: bool = False,
               why: str = "", edits: Sequence[object] | None = None) -> bool:
        """Record a finding at ``node``; True when the rule should apply its fix now.

        In ``check`` (CPython's tree), ``safe`` says the analysis proved the fix changes nothing the
        program computes except the DDP failure; otherwise the fix is unsafe, ``why`` saying what was
        not proven. Unknown is not safe, so a fix is unsafe unless a rule says otherwise. In ``apply``
        the two are ignored: the engine hands over what ``check`` decided (``applicability``). A fix
        is applied when picked by hand (``only``), else when safe or ``--unsafe-fixes`` is on.
        ``edits`` (a rule without ``apply``): the fix as typed edits (``ddpfix.edits``), which the
        engine carries out on LibCST's tree when the fix is applied.

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
                                             self.rule.code, self.rule.name, message, False, False, True))
            return False
        key = FixKey(self.rule.code, line, column)
        applicability, reason = None, ""
        if fixable:
            if isinstance(self.view, TreeView):
                applicability, reason = (SAFE, "") if safe else (UNSAFE, why or NOT_PROVEN)
            else:
                applicability, reason = self._applicability.get(key, (UNSAFE, self._undecided))
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
            )
        )
        return apply

    def report_fix(self, node: cst.CSTNode, message: str, before: cst.CSTNode, after: cst.CSTNode) -> bool:
        """Report a finding whose fix turns ``before`` into ``after``; the fix is offered only if it
        keeps every comment (else the finding says why it was not rewritten)."""
        from ddpfix.transforms._args import keeps_comments

        if not keeps_comments(before, after):
            self.report(node, message + " (not rewritten: a comment inside the call would be lost)", fixable=False)
            return False
        return self.report(node, message, fixable=True)

    @property
    def fixes_applied(self) -> int:
        return sum(f.fixed for f in self.findings)


class Rule:
    """Base of every rule. A subclass in a module of ``ddpfix.transforms`` is registered by being there.

    Subclasses set the class attributes and implement :meth:`apply`; the class docstring is the rule's
    page (``ddpfix --explain``): *What it does*, *Why it breaks under DDP*, *Before*, *After*,
    *When it does not fix*.
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
    #: Only Lightning code can hold this pitfall: files that neither import Lightning nor subclass a
    #: LightningModule of the run are skipped before parsing.
    lightning_only: ClassVar[bool] = False
    #: Only code inside a LightningModule can hold this pitfall: files without a class deriving from
    #: one (here or through a class of the run) are skipped before parsing.
    module_only: ClassVar[bool] = False

    #: Set by the class itself: the rule reports from CPython's tree (it implements ``check``).
    reads_tree: ClassVar[bool] = False
    #: Set by the class itself: the rule implements ``check``, where it decides each fix's applicability.
    decides: ClassVar[bool] = False
    #: Set by the class itself: the rule fixes through ``check`` alone, each fix a list of typed edits
    #: (``ddpfix.edits``) that the engine carries out: one analysis for reporting and fixing.
    typed: ClassVar[bool] = False
    #: Set by the class itself: the rule reads (and may rewrite) LibCST's tree (it implements ``apply``).
    edits: ClassVar[bool] = False

    _compiled: ClassVar[tuple[tuple[bytes, ...], ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.reads_tree = cls.decides = cls.check is not Rule.check
        cls.edits = cls.apply is not Rule.apply
        cls.typed = cls.fixable and cls.decides and not cls.edits
        if cls.fixable and not cls.edits and not cls.decides:
            raise TypeError(f"{cls.__name__} is fixable, so it must implement check (with typed edits) or apply")
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
        that override this, a text test on top (``transforms/_text.py``), a superset of ``may_apply``."""
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
    def without_tree_check(cls) -> type[Rule]:
        """The rule as ``apply`` alone reports: what its ``check`` is compared against. Its ``check``
        still decides how safe each fix is (the one place that decides), so only the findings of
        the two paths are compared, never two decisions."""
        rule = type(cls.__name__, (cls,), {})
        rule.reads_tree = False
        return rule

    @classmethod
    def may_apply(cls, tree: ast.Module) -> bool:
        """A cheap look at CPython's tree (built anyway) that may rule the file out before the LibCST
        parse. Only ever False when the rule can have nothing to say; the rule's logic stays in apply()."""
        return True

    @classmethod
    def page(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or cls.summary)

    @classmethod
    def url(cls) -> str:
        """The rule's page online, for editors and SARIF viewers to link to."""
        return DOCS_URL.format(code=cls.code)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        """Report findings on ``module`` (the previous rule's output) and return it, fixed where allowed."""
        raise NotImplementedError

    def check(self, tree: ast.Module, ctx: RuleContext) -> None:
        """Report findings on CPython's tree of the file, ``ctx.view`` being a ``TreeView``. A file
        whose active rules all read this tree is never parsed by LibCST, which costs ten times more;
        ``Positions`` and ``TreePositions`` put findings at the same places.

        A report-only rule implements this instead of ``apply`` (it then runs on the fixed file, in
        a run that fixes). A fixable rule may implement it beside ``apply``, for the runs that only
        report (``--check``, editor diagnostics): it must report exactly what ``apply`` reports
        with no fix applied, ``fixable`` included (``tests/test_tree_checks.py`` compares the two),
        and raises ``NeedsLibCST`` where the tree cannot tell (a comment a fix could lose): the
        engine then asks ``apply``."""
        raise NotImplementedError


class NeedsLibCST(Exception):
    """Raised by ``Rule.check`` of a rule that also implements ``apply``: this file's findings
    depend on what only LibCST's tree holds (comments, exact layout), so ``apply`` must report them."""
