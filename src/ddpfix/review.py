"""``ddpfix -i``: each fix offered on its own, in line order within a file, answered with one key.

A file is reviewed as a sequence of versions. Each question is about the first fixable finding not
yet answered in the current version (all rules' findings, sorted by place); an accepted fix is
carried out at once, alone, by the engine (which verifies the result), and the next version is
read again, so a later question always shows its fix against the code as the earlier answers left
it. Nothing is written here: the caller writes each file once, with exactly the accepted fixes.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import click

from ddpfix import report
from ddpfix.findings import FileResult, Finding, Problem
from ddpfix.sources import fix_source

ANSWERS = "ynaq"
PROMPT = "[y]es / [n]o / [a]ll in this file / [q]uit / [?]: "
KEYS_HELP = """  y  apply this fix
  n  skip it
  a  apply this fix and every safe fix left in this file; an unsafe one is still shown and asked about
  q  stop: skip the rest of the run, keep (and write) the fixes accepted so far
  ?  this help"""


def review(results: Sequence[FileResult], rules, facts, problems: list[Problem], output, options,
           settings_of: Mapping[str, tuple] | None = None) -> list[FileResult]:
    """The results with exactly the fixes accepted. ``settings_of``: a file's own (rules, options),
    where its settings differ from the run's ``rules`` and ``options``. Unsafe fixes are offered too, marked ``[~]``
    (a person decides); "all" takes the rest of the file's safe fixes, and its unsafe ones only
    with ``--unsafe-fixes``. After "quit" nothing more is offered: every fix not taken stays in the
    findings as not applied, so the summary counts it."""
    reviewed: list[FileResult] = []
    quit_all = False
    for result in results:
        offered = any(f.fixable and not f.suppressed for f in result.findings)
        if quit_all or not offered or any(p.level == "error" for p in result.problems):
            result = _without_fixes(result)
            for finding in result.findings:
                output.finding(finding)
            reviewed.append(result)
            continue
        own_rules, own_options = (settings_of or {}).get(result.path, (rules, options))
        session = _FileReview(result, own_rules, facts, own_options, output)
        quit_all = session.run()
        problems.extend(session.problems)
        reviewed.append(session.result())
    return reviewed


@dataclass
class _FileReview:
    original: FileResult
    rules: Sequence
    facts: object
    options: dict
    output: object
    problems: list[Problem] = field(default_factory=list)
    accepted: list[Finding] = field(default_factory=list)

    def __post_init__(self):
        self.path = self.original.path
        self.current = self.original.original
        self.offer = {**self.options, "unsafe_fixes": True}
        self.take_unsafe = bool(self.options.get("unsafe_fixes"))
        self.by_code = {rule.code: rule for rule in self.rules}
        self.listing = self._read(self.current)
        self.shown: set[int] = set()  # indexes into ``listing``: printed (and, if fixable, answered)

    def run(self) -> bool:
        """Ask about the file's fixes in line order; True when the user quit."""
        take_rest = False
        # Each answer marks a finding shown or moves to a new version; fixes settle (design.md), so
        # this bound is never reached by a real file: it only guards against fixes that undo each other.
        for _ in range(10 * len(self.listing) + 100):
            index = next((i for i, f in enumerate(self.listing) if i not in self.shown and _offered(f)), None)
            if index is None:
                break
            self._show_before(index)
            finding = self.listing[index]
            # Findings at one place share a key and so one fix (engine._chosen): one question for all.
            group = [i for i, f in enumerate(self.listing) if i not in self.shown and _offered(f) and f.key == finding.key]
            single = fix_source(self.path, self.current, [self.by_code[finding.code]], self.facts,
                                only={finding.key}, options=self.offer)
            errors = [p for p in single.problems if p.level == "error"]
            if errors:  # a rule failed on this version: keep what was accepted so far, offer no more
                self.output.problems(errors)
                self.problems.extend(errors)
                break
            fixed = [f for f in single.findings if f.fixed and f.key == finding.key]
            if not single.changed or not fixed:
                self._show(*group)  # its fix cannot be carried out alone here: said, not offered
                continue
            # "a" takes the rest of the file's safe fixes; an unsafe one is still shown and asked
            # about: none is applied that the person has not seen.
            if take_rest and all(self.listing[i].safe for i in group):
                answer = "y"
            else:
                self._show(*group)
                reasons = list(dict.fromkeys(self.listing[i].unsafe_reason for i in group
                                             if self.listing[i].unsafe and self.listing[i].unsafe_reason))
                for reason in reasons:  # why it is unsafe, without -v: what the person weighs
                    click.echo(f"  unsafe because {reason}")
                self.output.diff(report.file_diff(self.path, self.current, single.fixed))
                answer = ask(unsafe=any(self.listing[i].unsafe for i in group))
            if answer == "q":
                self._show_rest()
                return True
            if answer == "n":
                continue
            take_rest = take_rest or answer == "a"
            self.accepted.extend(fixed)
            self._advance(group, single.output)
        self._show_rest()
        return False

    def result(self) -> FileResult:
        changed = self.current if self.current != self.original.original else None
        findings = sorted(self.accepted + self.listing, key=_place)
        return FileResult(self.path, self.original.original, changed, findings, list(self.original.problems))

    def _read(self, data: bytes) -> list[Finding]:
        """Every rule's findings in ``data``, in line order; none of them fixed."""
        found = fix_source(self.path, data, self.rules, self.facts, options=self.offer, fix=False).findings
        return sorted(found, key=_place)

    def _advance(self, fixed: list[int], data: bytes) -> None:
        """Move to the version with one more fix (the findings ``fixed`` share it): what was shown
        of the old version stays shown."""
        kept = [i for i in range(len(self.listing)) if i not in fixed]
        old = [self.listing[i] for i in kept]
        old_shown = {position for position, i in enumerate(kept) if i in self.shown}
        new = self._read(data)
        self.shown = carry_over(old, old_shown, new)
        self.listing, self.current = new, data

    def _show(self, *indexes: int) -> None:
        for index in indexes:
            self.shown.add(index)
            self.output.finding(self.listing[index])

    def _show_before(self, index: int) -> None:
        """The findings without a fix offered that stand before the next question, in place."""
        for i in range(index):
            if i not in self.shown:
                self._show(i)

    def _show_rest(self) -> None:
        for i in range(len(self.listing)):
            if i not in self.shown:
                self._show(i)


def _offered(finding: Finding) -> bool:
    return finding.fixable and not finding.suppressed


def _place(finding: Finding) -> tuple:
    return (finding.cell or 0, finding.line, finding.column, finding.code)


_NUMBER = re.compile(r"\d+")


def _signature(finding: Finding) -> tuple:
    """What names a finding across versions of a file: its rule, cell and message, less the line
    numbers in it (a fix above it shifts them)."""
    return finding.code, finding.cell, _NUMBER.sub("#", finding.message)


def carry_over(old: list[Finding], marked: set[int], new: list[Finding]) -> set[int]:
    """The indexes in ``new`` of the findings ``marked`` in ``old``: the two lists are aligned by
    signature in line order (a fix changes a few findings; the rest keep their order)."""
    matcher = difflib.SequenceMatcher(None, [_signature(f) for f in old], [_signature(f) for f in new], autojunk=False)
    carried: set[int] = set()
    for block in matcher.get_matching_blocks():
        for offset in range(block.size):
            if block.a + offset in marked:
                carried.add(block.b + offset)
    return carried


def _without_fixes(result: FileResult) -> FileResult:
    return FileResult(result.path, result.original, None, [_unfixed(f) for f in result.findings], result.problems)


def _unfixed(finding: Finding) -> Finding:
    return replace(finding, fixed=False) if finding.fixed else finding


# --- the question --------------------------------------------------------------------------------


def ask(unsafe: bool = False, read: Callable[[], str] | None = None) -> str:
    """One of ``y``, ``n``, ``a``, ``q``: one key on a terminal (no Enter), else a line. The end of
    input quits."""
    question = "Apply this unsafe fix (review it)?" if unsafe else "Apply this fix?"
    read = read or read_key
    while True:
        click.echo(f"{question} {PROMPT}", nl=False)
        try:
            key = read()
        except EOFError:
            click.echo()
            return "q"
        answer = key.strip().lower()[:1]
        click.echo(answer)  # the key, so the transcript shows what was answered
        if answer and answer in ANSWERS:
            return answer
        if answer == "?":
            click.echo(KEYS_HELP)
            continue
        click.echo("Please answer y, n, a or q (? explains them).")


# Keys typed ahead (while the next fix was being worked out) that one read brought in with the key
# it answered: each answers a later question, in order, as ``git add -p`` takes them.
_typed_ahead: list[str] = []
# One key: an escape sequence (an arrow key) whole, else one character.
_KEY = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|O.|.)?|.", re.S)


def read_key() -> str:
    """One key press, read in cbreak mode (no Enter, no echo; Ctrl-C still interrupts); a line
    where stdin is not a terminal (or has no termios, as on Windows)."""
    if _typed_ahead:
        return _key(_typed_ahead.pop(0))
    if sys.stdin.isatty():
        try:
            import termios
            import tty
        except ImportError:
            termios = None
        if termios is not None:
            fd = sys.stdin.fileno()
            saved = termios.tcgetattr(fd)
            try:
                tty.setcbreak(fd)
                data = os.read(fd, 32)
                while data and _incomplete_utf8(data):  # a character split by the read
                    more = os.read(fd, 32)
                    if not more:
                        break
                    data += more
            finally:
                termios.tcsetattr(fd, termios.TCSADRAIN, saved)
            keys = _KEY.findall(data.decode("utf-8", "replace"))
            if not keys:
                raise EOFError
            _typed_ahead.extend(keys[1:])
            return _key(keys[0])
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line


def _key(key: str) -> str:
    if key == "\x04":  # Ctrl-D
        raise EOFError
    return key


def _incomplete_utf8(data: bytes) -> bool:
    """Whether ``data`` ends inside a UTF-8 character."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # a lead byte (or ASCII): how many bytes its character takes
            need = 1 if byte < 0x80 else 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4 if byte >> 3 == 0b11110 else 1
            return need > back
    return False
