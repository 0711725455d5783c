"""The fixture folder as test cases (design.md, "Fixtures").

``<case>.py`` (or ``<case>.ipynb``) is an input; ``<case>.expected.py`` (``.expected.ipynb``) beside
it is the exact output of the safe fixes (a default ``--write``); ``<case>.unsafe.py`` the exact output
with ``--unsafe-fixes`` where that differs. An input without an expected file must come out
byte-identical by default, and without either file with unsafe fixes too. ``<case>.findings``
(optional) lists the exact findings, one per line as ``LINE:COL CODE safe|unsafe|manual`` (the fix's
applicability, or none). Without it, a case with an expected file must have at least one safe fix, a
case with an unsafe file at least one unsafe fix, and a case with neither no finding at all. A case (a file, or a case folder of several files) is a whole
run: its facts are complete (``ProjectFacts.whole``), except a case whose name starts with
``partial``: it stands for a file named alone (an editor buffer, pre-commit's staged files).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from conftest import FIXTURES

from ddpfix.facts import FACT_LITERALS


@dataclass(frozen=True)
class Case:
    input: Path

    @property
    def id(self) -> str:
        return str(self.input.relative_to(FIXTURES).with_suffix(""))

    @property
    def expected(self) -> Path | None:
        path = self.input.with_name(self.input.stem + ".expected" + self.input.suffix)
        return path if path.exists() else None

    @property
    def whole(self) -> bool:
        """Whether the case's facts are the whole project's (see the module's docstring)."""
        name = self.input.stem if self.input.parent.parent == FIXTURES else self.input.parent.name
        return not name.startswith("partial")

    @property
    def unsafe(self) -> Path | None:
        """The output with unsafe fixes too, where it differs from ``expected``."""
        path = self.input.with_name(self.input.stem + ".unsafe" + self.input.suffix)
        return path if path.exists() else None

    @property
    def fully_fixed(self) -> Path | None:
        """The output with every fix, safe and unsafe: what ``--unsafe-fixes`` writes."""
        return self.unsafe or self.expected

    @property
    def group(self) -> list[Path]:
        """The files of the run this case belongs to: a case folder (``fixtures/<rule>/<case>/``)
        is one run, so facts cross its files; a case file is a run of its own."""
        if self.input.parent.parent == FIXTURES:
            return [self.input]
        return sorted(p for p in self.input.parent.iterdir() if is_input(p))

    @property
    def findings(self) -> list[str] | None:
        path = self.input.with_suffix(".findings")
        if not path.exists():
            return None
        return sorted(line.strip() for line in path.read_text().splitlines() if line.strip())



SUFFIXES = (".py", ".ipynb")
OUTPUTS = (".expected", ".unsafe")


def is_input(path: Path) -> bool:
    return path.suffix in SUFFIXES and not path.stem.endswith(OUTPUTS)


def cases() -> list[Case]:
    return [Case(p) for p in sorted(FIXTURES.rglob("*")) if is_input(p)]


def shares_facts(case: Case) -> bool:
    """Whether a file of the case's run holds a word of the facts that change other files' fixes (a
    seed for its whole folder, a monitored metric for the whole run, a default-device switch)."""
    return any(word in path.read_bytes() for path in case.group for word in (*FACT_LITERALS, *PROCESS_SWITCHES))


#: Words of a switch of the whole process's default device: a file that holds one bears on every file
#: of the run its imports may join it with (DDP002, DDP006), so it is a run of its own.
PROCESS_SWITCHES = (b"set_default_device", b"set_default_tensor_type")


def copy_without_shared_facts(destination: Path) -> None:
    """The fixtures copied to ``destination``, less the cases that share facts with the rest of a run
    (``shares_facts``), so that one run over the copy gives each case what its own run gives it."""
    import shutil

    shutil.copytree(FIXTURES, destination)
    for case in cases():
        if shares_facts(case):
            for path in case.group:
                for output in (path, *(path.with_name(path.stem + kind + path.suffix) for kind in OUTPUTS)):
                    copied = destination / output.relative_to(FIXTURES)
                    if copied.exists():
                        copied.unlink()


def expected_files() -> list[Path]:
    """Every output file, safe (``.expected``) and unsafe (``.unsafe``)."""
    return sorted(p for p in FIXTURES.rglob("*") if p.suffix in SUFFIXES and p.stem.endswith(OUTPUTS))


def fully_fixed_pairs(suffix: str = ".py") -> list[tuple[Path, Path]]:
    """(input, output with every fix) for each case a fix changes: what the fix machinery itself
    (CLI, editors, SARIF) must reproduce with ``unsafe_fixes`` on."""
    return [(c.input, c.fully_fixed) for c in cases() if c.fully_fixed is not None and c.input.suffix == suffix]
