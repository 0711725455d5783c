"""Jupyter notebooks: the code cells as one Python module, fixed by ``engine``, written back as JSON.

The cells are joined in order, each after a marker comment line, so that imports in the first cell
count in the last (as they do in the kernel) and one pipeline serves scripts and notebooks alike.
Line-leading IPython magics and shell escapes (``%matplotlib inline``, ``!pip install x``) are
masked as comments and restored byte for byte; a cell that is still not Python (a ``%%bash`` cell,
``x = !ls``, ``obj?``) is left out, with a note. Rules run one at a time so that each finding is
placed by the markers of the text that rule saw: ``notebook.ipynb:cell 3:2:5``.

The notebook is written back only when re-serialising it unchanged reproduces the original bytes
(indentation, key order, escaping, trailing newline): then only the edited cells' ``source`` differ,
and outputs, metadata and everything else are kept exactly.
"""

from __future__ import annotations

import ast
import json
import warnings
import re
import secrets
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ddpfix import engine
from ddpfix.facts import ProjectFacts, file_facts
from ddpfix.findings import NOTE, FileResult, Finding, FixKey, Problem

# A line an IPython kernel reads as a magic or a shell escape, not as Python.
_MAGIC_LINE = re.compile(r"^(%|!)")
_CELL_MAGIC = re.compile(r"^\s*%%")
_LINE_REFERENCE = re.compile(r"\bline (\d+)\b")


@dataclass
class _Cell:
    index: int  # 1-based position among all cells of the notebook, as Jupyter counts them
    source: str
    as_list: bool  # nbformat allows a string or a list of lines
    skipped: str | None = None  # why the cell stays out of the module
    masked: dict[str, str] = field(default_factory=dict)  # mask line -> the magic line it hides
    body: str = ""  # the Python the module holds for this cell


@dataclass
class Notebook:
    """A parsed notebook and how to write it back byte for byte."""

    data: dict
    cells: list[_Cell]
    indent: int | None
    ensure_ascii: bool
    trailing: str
    nonce: str
    language: str

    def marker(self, index: int) -> str:
        return f"# ddpfix-cell {index} {self.nonce}"

    def module(self) -> str:
        parts = []
        for cell in self.cells:
            parts.append(self.marker(cell.index) + "\n")
            if cell.skipped is None and cell.body:
                parts.append(cell.body if cell.body.endswith("\n") else cell.body + "\n")
        return "".join(parts)

    def split(self, module: str) -> dict[int, str] | None:
        """The cells' Python in a (fixed) module, by cell index; None if the markers did not survive."""
        lines = module.splitlines(keepends=True)
        where = {line.rstrip("\r\n"): number for number, line in enumerate(lines)}
        positions = []
        for cell in self.cells:
            number = where.get(self.marker(cell.index))
            if number is None or (positions and number <= positions[-1]):
                return None
            positions.append(number)
        if sum(1 for line in lines if line.startswith("# ddpfix-cell ") and self.nonce in line) != len(self.cells):
            return None
        bodies = {}
        for k, cell in enumerate(self.cells):
            end = positions[k + 1] if k + 1 < len(positions) else len(lines)
            text = "".join(lines[positions[k] + 1:end])
            if k == 0:
                text = "".join(lines[:positions[0]]) + text  # what a rule put above everything (an import)
            bodies[cell.index] = text
        return bodies

    def locate(self, module: str, line: int) -> tuple[int, int]:
        """(cell index, line in the cell) of a 1-based line of ``module``."""
        cell_index, start = self.cells[0].index, 0
        for number, text in enumerate(module.splitlines(), start=1):
            if number >= line:
                break
            if text.startswith("# ddpfix-cell ") and text.endswith(self.nonce):
                cell_index, start = int(text.split()[2]), number
        return cell_index, max(1, line - start)

    def joined_line(self, module: str, cell_index: int, line: int) -> int:
        """The inverse of :meth:`locate`."""
        for number, text in enumerate(module.splitlines(), start=1):
            if text == self.marker(cell_index):
                return number + line
        return line

    def dump(self, bodies: Mapping[int, str]) -> bytes:
        """The notebook's bytes with the cells' new Python put back (magics restored)."""
        by_index = {cell.index: cell for cell in self.cells}
        position = 0
        for raw in self.data.get("cells", []):
            position += 1
            cell = by_index.get(position)
            if cell is None or cell.skipped is not None or position not in bodies:
                continue
            text = _unmask(bodies[position], cell)
            # The newlines that end a cell are the cell's own: the joined module adds one, and a
            # rule's blank lines before the next cell's first statement land here.
            text = text.rstrip("\n") + cell.source[len(cell.source.rstrip("\n")):]
            if text != cell.source:
                raw["source"] = text.splitlines(keepends=True) if cell.as_list else text
        return self.serialise()

    def serialise(self) -> bytes:
        text = json.dumps(self.data, indent=self.indent, ensure_ascii=self.ensure_ascii)
        return (text + self.trailing).encode("utf-8")


class NotebookError(ValueError):
    pass


def load(data: bytes) -> Notebook:
    try:
        text = data.decode("utf-8-sig")
        content = json.loads(text)
    except UnicodeDecodeError as err:
        raise NotebookError(f"cannot read notebook: not UTF-8 ({err.reason} at byte {err.start})") from err
    except json.JSONDecodeError as err:
        raise NotebookError(f"cannot read notebook: invalid JSON ({err.msg} at line {err.lineno} column {err.colno})") from err
    if not isinstance(content, dict) or not isinstance(content.get("cells", []), list):
        raise NotebookError("cannot read notebook: no list of cells (nbformat 4 is supported)")
    metadata = content.get("metadata") if isinstance(content.get("metadata"), dict) else {}
    language = str(
        (metadata.get("kernelspec") or {}).get("language")
        or (metadata.get("language_info") or {}).get("name")
        or "python"
    ).lower()
    indent = _indent(text)
    trailing = text[len(text.rstrip()):]
    nonce = secrets.token_hex(6)
    while nonce in text:  # the marker must not occur in the notebook already
        nonce = secrets.token_hex(6)
    notebook = Notebook(content, [], indent, "\\u" in text and not _has_non_ascii(text), trailing, nonce, language)
    for position, raw in enumerate(content.get("cells", []), start=1):
        if not isinstance(raw, dict) or raw.get("cell_type") != "code":
            continue
        source = raw.get("source", "")
        as_list = isinstance(source, list)
        if as_list and not all(isinstance(part, str) for part in source):
            raise NotebookError(f"cannot read notebook: cell {position} has a source that is not text")
        text_source = "".join(source) if as_list else str(source)
        notebook.cells.append(_mask(_Cell(position, text_source, as_list), nonce))
    return notebook


def _indent(text: str) -> int | None:
    match = re.search(r"\n( +)\"", text)
    return len(match.group(1)) if match else None


def _has_non_ascii(text: str) -> bool:
    return any(ord(char) > 127 for char in text)


def _mask(cell: _Cell, nonce: str) -> _Cell:
    """Hide line-leading magics behind comments; leave out a cell that stays not-Python."""
    if _CELL_MAGIC.match(cell.source):
        cell.skipped = "a %% cell magic: the cell is not Python"
        return cell
    if _parses(cell.source) is None:
        cell.body = cell.source  # plain Python: nothing to mask (a '%' line may be inside a string)
        return cell
    lines = cell.source.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if _MAGIC_LINE.match(line):
            if line.rstrip("\r\n").endswith("\\"):
                cell.skipped = f"line {number + 1}: a magic continued on the next line"
                return cell
            mask = f"# ddpfix-magic {len(cell.masked)} {nonce}"
            cell.masked[mask] = line.rstrip("\r\n")
            lines[number] = mask + line[len(line.rstrip("\r\n")):]
    cell.body = "".join(lines)
    cell.skipped = _parses(cell.body)
    return cell


def _parses(source: str) -> str | None:
    """None when ``source`` is Python; else why not."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the user's SyntaxWarnings are not ours to print
            ast.parse(source)
    except (SyntaxError, ValueError) as err:
        where = f"line {err.lineno}: " if getattr(err, "lineno", None) else ""
        return f"{where}IPython syntax that is not Python ({getattr(err, 'msg', err)})"
    except (MemoryError, RecursionError):
        return "nested too deeply to analyse"
    return None


def _unmask(text: str, cell: _Cell) -> str:
    for mask, magic in cell.masked.items():
        text = text.replace(mask, magic, 1)
    return text


def python_source(data: bytes) -> bytes | None:
    """The code cells as one module (what the facts pass reads), or None for a notebook we cannot read."""
    try:
        notebook = load(data)
    except NotebookError:
        return None
    return notebook.module().encode("utf-8") if notebook.language == "python" else None


def fix_notebook(
    path: str,
    data: bytes,
    rules: Sequence[type],
    facts: ProjectFacts | None,
    only: Collection[FixKey] | None,
    options: Mapping[str, object] | None,
) -> FileResult:
    result = FileResult(path, data)
    try:
        notebook = load(data)
    except NotebookError as err:
        result.problems.append(Problem(path, engine.READ_ERROR, str(err)))
        return result
    if notebook.language != "python":
        return result
    for cell in notebook.cells:
        if cell.skipped is not None:
            result.problems.append(Problem(path, NOTE, f"cell skipped: {cell.skipped}", 1, 1, cell=cell.index, level=NOTE))
    module = notebook.module()
    if not any(rule.triggered_by(module.encode("utf-8")) for rule in rules):
        return result
    if facts is None:
        facts = ProjectFacts.merge([file_facts(path, module.encode("utf-8"))])
    findings: list[Finding] = []
    current = module
    for rule in rules:
        wanted = None if only is None else {
            FixKey(key.code, notebook.joined_line(current, key.cell, key.line), key.column)
            for key in only if key.code == rule.code and key.cell is not None
        }
        step = engine.fix_python(path, current.encode("utf-8"), [rule], facts, only=wanted, options=options)
        for problem in step.problems:
            if problem.line is not None:
                cell_index, line = notebook.locate(current, problem.line)
                problem = replace(problem, line=line, cell=cell_index)
            result.problems.append(problem)
        if any(p.level != NOTE for p in step.problems):
            findings = [_unfixed(f) for f in findings]
            result.findings = findings + [_place(f, notebook, current, fixed=False) for f in step.findings]
            return result
        findings += [_place(f, notebook, current) for f in step.findings]
        if step.changed:
            new = step.fixed.decode("utf-8")
            if notebook.split(new) is None:  # a fix moved code across cells: keep none of it
                result.problems.append(Problem(path, rule.code, f"{engine.INTERNAL_ERROR}: a fix would move code between cells; notebook left as it was"))
                result.findings = [_unfixed(f) for f in findings]
                return result
            current = new
    result.findings = sorted(findings, key=lambda f: (f.cell or 0, f.line, f.column, f.code))
    if current == module:
        return result
    if notebook.serialise() != data:
        result.problems.append(Problem(path, NOTE, "fixes not written: re-saving this notebook would change its formatting "
                                       "(save it from Jupyter once, then run again)", level=NOTE))
        result.findings = [_unfixed(f) for f in result.findings]
        return result
    fixed = notebook.dump(notebook.split(current))
    if fixed != data:
        result.fixed = fixed
    return result


def _place(finding: Finding, notebook: Notebook, module: str, fixed: bool | None = None) -> Finding:
    cell_index, line = notebook.locate(module, finding.line)
    end_cell, end_line = notebook.locate(module, finding.end_line)
    if end_cell != cell_index:
        end_line = line
    # A message that names another line ("the loader on line 17") names it the notebook's way.
    def in_cells(text: str) -> str:
        return _LINE_REFERENCE.sub(lambda m: "cell {} line {}".format(*notebook.locate(module, int(m.group(1)))), text)

    return replace(finding, line=line, end_line=end_line, cell=cell_index, message=in_cells(finding.message),
                   detail=in_cells(finding.detail),
                   fixed=finding.fixed if fixed is None else fixed and finding.fixed)


def _unfixed(finding: Finding) -> Finding:
    return replace(finding, fixed=False) if finding.fixed else finding
