"""The plain records a run produces: findings of rules and problems with files."""

from __future__ import annotations

from dataclasses import field
from typing import NamedTuple

from ddpfix.records import record


class FixKey(NamedTuple):
    """Names one finding's fix within one file, so the engine can apply exactly the chosen fixes."""

    code: str
    line: int
    column: int
    cell: int | None = None  # in a notebook: the cell the line counts in


@record(frozen=True)
class Finding:
    """A pitfall a rule found. Lines and columns are 1-based, as editors count them.

    ``message`` is the short text of the finding line (``path:line:col: CODE [*] message``), specific
    to this finding; ``detail`` the long one.
    """

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    message: str
    fixable: bool
    fixed: bool = False
    suppressed: bool = False  # silenced by ``# noqa``; reported only with --show-suppressed
    cell: int | None = None  # in a notebook: ``line`` counts in this cell (1-based, as Jupyter numbers cells)
    #: ``SAFE`` or ``UNSAFE`` when ``fixable``, else None.
    applicability: str | None = None
    #: Why the fix is unsafe: what the analysis could not prove (empty for a safe fix).
    unsafe_reason: str = ""
    #: The explanation behind the short ``message``: why it breaks under DDP, what to do, and why
    #: it is not rewritten where it is not (``-v``, JSON's ``detail``; empty where the message says all).
    detail: str = ""

    @property
    def full_message(self) -> str:
        """The short message, then the explanation on the lines below: what CI annotations and code
        scanning show, where there is room for the why."""
        return f"{self.message}\n{self.detail}" if self.detail else self.message

    @property
    def safe(self) -> bool:
        return self.fixable and self.applicability == SAFE

    @property
    def unsafe(self) -> bool:
        return self.fixable and self.applicability != SAFE

    @property
    def key(self) -> FixKey:
        return FixKey(self.code, self.line, self.column, self.cell)


#: A fix's applicability, as Ruff has it (design.md, "Applicability"). ``SAFE``: the rule's analysis
#: proves the edit changes nothing the program computes except the DDP failure; applied by default.
#: ``UNSAFE``: a plausible fix a person reviews; applied only with ``--unsafe-fixes`` (or when picked
#: by hand: ``-i``, an editor's quick fix). A finding without a fix has neither.
SAFE, UNSAFE = "safe", "unsafe"


#: The code and level of a Problem that is only said: it does not stop a clean exit.
NOTE = "note"


@record(frozen=True)
class Problem:
    """Something that kept ddpfix from handling a file (unreadable, unparsable, a rule crashed).

    ``line``/``column`` are 1-based when the problem has a place in the source.
    """

    path: str
    code: str
    message: str
    line: int | None = None
    column: int | None = None
    cell: int | None = None
    #: "error" stops a clean exit; a "note" (a notebook cell left out) is only said.
    level: str = "error"


@record
class FileResult:
    """What ``sources.fix_source`` made of one file.

    ``fixed`` holds the new bytes only when they differ from ``original``; a file whose result has
    ``fixed is None`` is never opened for writing.
    """

    path: str
    original: bytes
    fixed: bytes | None = None
    findings: list[Finding] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.fixed is not None

    @property
    def output(self) -> bytes:
        """The bytes the file should hold after the run: the fixed ones, or the original."""
        return self.fixed if self.fixed is not None else self.original
