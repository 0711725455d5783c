"""The fixture folder as test cases (design.md, "Fixtures").

``<case>.py`` (or ``<case>.ipynb``) is an input; ``<case>.expected.py`` (``.expected.ipynb``) beside
it is the exact output; an input without one must come out byte-identical. ``<case>.findings`` (optional) lists the exact findings, one per
line as ``LINE:COL CODE fixable|manual``. Without it, a case with an expected file must have at
least one fixable finding and a case without one must have none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from conftest import FIXTURES


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


def is_input(path: Path) -> bool:
    return path.suffix in SUFFIXES and not path.stem.endswith(".expected")


def cases() -> list[Case]:
    return [Case(p) for p in sorted(FIXTURES.rglob("*")) if is_input(p)]


def expected_files() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*") if p.suffix in SUFFIXES and p.stem.endswith(".expected"))
