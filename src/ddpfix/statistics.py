"""``--statistics``: the findings left, counted per rule, as Ruff's ``--statistics`` prints them.

One row per rule, most frequent first: count, code, a mark and the rule's name, then how many of
those findings have a safe fix, an unsafe one, or none. The mark reads as on a finding line:
``[*]`` every one has a safe fix, ``[~]`` every one has a fix and some need ``--unsafe-fixes``,
``[-]`` only some have a fix, ``[ ]`` none has.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ddpfix.findings import FileResult
from ddpfix.report import plural


@dataclass
class RuleCount:
    code: str
    name: str
    count: int = 0
    safe: int = 0
    unsafe: int = 0

    @property
    def fixable(self) -> int:
        return self.safe + self.unsafe

    @property
    def manual(self) -> int:
        return self.count - self.fixable

    @property
    def mark(self) -> str:
        if self.safe == self.count:
            return "[*]"
        if self.fixable == self.count:
            return "[~]"
        return "[-]" if self.fixable else "[ ]"

    @property
    def breakdown(self) -> str:
        parts = [plural(self.safe, "safe fix", "safe fixes")] if self.safe else []
        parts += [plural(self.unsafe, "unsafe fix", "unsafe fixes")] if self.unsafe else []
        parts += [f"{self.manual} without a fix"] if self.manual else []
        return ", ".join(parts)


def counts(results: Iterable[FileResult]) -> list[RuleCount]:
    """The findings still left (not silenced, not fixed by this run), counted per rule."""
    by_code: dict[str, RuleCount] = {}
    for result in results:
        for finding in result.findings:
            if finding.suppressed or finding.fixed:
                continue
            row = by_code.setdefault(finding.code, RuleCount(finding.code, finding.name))
            row.count += 1
            row.safe += finding.safe
            row.unsafe += finding.unsafe
    return sorted(by_code.values(), key=lambda row: (-row.count, row.code))


def table(rows: list[RuleCount]) -> str:
    """Ruff's layout (count and code tab-separated, the count right-aligned), the breakdown after
    the name. Empty when nothing is left."""
    if not rows:
        return ""
    count_width = max(len(str(row.count)) for row in rows)
    code_width = max(len(row.code) for row in rows)
    name_width = max(len(row.name) for row in rows)
    return "\n".join(
        f"{row.count:>{count_width}}\t{row.code:<{code_width}}\t{row.mark} {row.name:<{name_width}}  {row.breakdown}"
        for row in rows
    )


def records(rows: list[RuleCount]) -> list[dict]:
    """The rows for ``--output-format json``."""
    return [{"code": row.code, "name": row.name, "count": row.count, "fixable": row.fixable, "safe": row.safe,
             "unsafe": row.unsafe} for row in rows]
