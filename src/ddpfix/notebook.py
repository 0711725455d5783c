"""Jupyter notebooks: the code cells as one Python module, fixed by ``engine``, written back as JSON.

The cells are joined in order, each after a marker comment line, so that imports in the first cell
count in the last (as they do in the kernel) and one pipeline serves scripts and notebooks alike.
IPython syntax (``%%time`` cells, ``%matplotlib inline``, ``files = !ls``, ``obj?``) is masked and
restored byte for byte by ``ipython_syntax``; a cell that is still not Python (a ``%%bash`` cell) is
left out, with a note. A notebook of unexpected shape gives a clear problem, never a traceback.
Rules run one at a time so that each finding is placed by the markers of the text that rule saw:
``notebook.ipynb:cell 3:2:5``.

A fixed cell's new ``source`` is spliced into the notebook's text (``notebook_json``) only where its
old value is laid out exactly as the writer would write it (indentation, escaping): every other
byte (outputs, metadata, key order, the trailing newline) is kept.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ddpfix import engine
from ddpfix.facts import ProjectFacts, file_facts
from ddpfix.findings import NOTE, FileResult, Finding, FixKey, Problem
from ddpfix.ipython_syntax import MASK_PREFIX, MaskedCell, lines_of, mask_cell, unmask
from ddpfix.notebook_json import splice

_LINE_REFERENCE = re.compile(r"\bline (\d+)\b")

# Reading a notebook builds its whole JSON as Python objects: a few times its size for text and
# images (a 50 MB notebook of training output peaks near 0.4 GB), but some 25 times for a mass of
# tiny objects. Past this estimate the notebook is reported, not read.
MAX_NOTEBOOK_MEMORY = 2 * 2**30


@dataclass
class _Cell:
    index: int  # 1-based position among all cells of the notebook, as Jupyter counts them
    source: str
    as_list: bool  # nbformat allows a string or a list of lines
    raw: object = None  # the source as the JSON holds it (a string, or the list of lines)
    masked: MaskedCell = field(default_factory=MaskedCell)  # its Python, IPython lines masked

    @property
    def skipped(self) -> str | None:
        """Why the cell stays out of the module (None: it is in)."""
        return self.masked.skipped

    @property
    def body(self) -> str:
        return self.masked.body


@dataclass
class Notebook:
    """A parsed notebook (its code cells; not its outputs) and how to write it back byte for byte."""

    cells: list[_Cell]
    indent: int | None
    ensure_ascii: bool
    nonce: str
    language: str

    @property
    def mask_token(self) -> str:
        """The name every mask of IPython syntax starts with (found nowhere in the notebook)."""
        return f"{MASK_PREFIX}{self.nonce}_"

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
        lines = lines_of(module)
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
        for number, text in enumerate(lines_of(module), start=1):
            text = text.rstrip("\r\n")
            if number >= line:
                break
            if text.startswith("# ddpfix-cell ") and text.endswith(self.nonce):
                cell_index, start = int(text.split()[2]), number
        return cell_index, max(1, line - start)

    def joined_line(self, module: str, cell_index: int, line: int) -> int:
        """The inverse of :meth:`locate`."""
        for number, text in enumerate(lines_of(module), start=1):
            if text.rstrip("\r\n") == self.marker(cell_index):
                return number + line
        return line

    def ipython_text(self, text: str) -> str:
        """``text`` (a message) with each mask it names (``_ddpfix_..._3_0()``) shown as the IPython
        syntax it hides (``%time trainer.fit(model)``)."""
        if self.mask_token not in text:
            return text
        hidden = {}
        for cell in self.cells:
            for mask, original in cell.masked.originals.items():
                start = mask.find(self.mask_token)
                if start >= 0 and mask.endswith("()"):  # a call: the line, or an assignment's right side
                    hidden[mask[start:]] = original[start:].strip()
        pattern = re.escape(self.mask_token) + r"\d+_\d+\(\)"
        return re.sub(pattern, lambda m: hidden.get(m.group(), m.group()), text)

    def masked_lines(self, module: str) -> set[int]:
        """The 1-based lines of ``module`` that mask IPython syntax (no finding is placed there); not
        those that keep a ``%time`` statement (``statement_lines``)."""
        if self.mask_token not in module:
            return set()
        statements = self.statement_lines(module)
        return {number for number, text in enumerate(lines_of(module), start=1)
                if self.mask_token in text and number not in statements}

    def statement_lines(self, module: str) -> dict[int, int]:
        """The 1-based lines of ``module`` that keep the statement of a line magic such as ``%time``
        (``ipython_syntax.STATEMENT_LINE_MAGICS``), each with how many columns the statement
        moved left (the magic's width in the cell)."""
        if self.mask_token not in module:
            return {}
        shifts = {mask: shift for cell in self.cells for mask, shift in cell.masked.statements.items()}
        if not shifts:
            return {}
        return {number: shifts[text.rstrip("\r\n")] for number, text in enumerate(lines_of(module), start=1)
                if text.rstrip("\r\n") in shifts}

    def restore(self, module: str) -> dict[int, str] | None:
        """The cells' new sources in a (fixed) module, IPython syntax restored, by cell index; None
        when a fix moved code between cells or moved, re-indented or edited a masked line."""
        bodies = self.split(module)
        if bodies is None:
            return None
        sources = {}
        for cell in self.cells:
            if cell.skipped is not None:
                continue
            text = unmask(bodies[cell.index], cell.masked)
            if text is None:
                return None
            # The newlines that end a cell are the cell's own: the joined module adds one, and a
            # rule's blank lines before the next cell's first statement land here.
            sources[cell.index] = text.rstrip("\n") + cell.source[len(cell.source.rstrip("\n")):]
        return sources

    def write(self, data: bytes, sources: Mapping[int, str]) -> bytes | None:
        """``data`` (this notebook's bytes) with the cells' new sources put in; None when a changed
        cell's old source is not laid out as this writer would write it."""
        values = {}
        for cell in self.cells:
            new = sources.get(cell.index, cell.source)
            if new != cell.source:
                values[cell.index] = (cell.raw, new.splitlines(keepends=True) if cell.as_list else new)
        bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
        text = splice(data[len(bom):].decode("utf-8"), values, self.indent, self.ensure_ascii)
        if text is None:
            return None
        try:
            return bom + text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate the JSON escaped, unwritable unescaped
            return None


#: How a Git LFS pointer file starts (the spec line): a notebook stored in LFS and not pulled.
LFS_POINTER = b"version https://git-lfs.github.com/spec/"


class NotebookError(ValueError):
    pass


_MISSING = object()


def load(data: bytes, options: Mapping[str, object] | None = None) -> Notebook:
    """The notebook in ``data``; NotebookError when it is not a notebook we can read. Whatever the
    JSON holds, only that error is raised: a cell of unexpected shape is left out, with its reason.
    ``options``: the file's settings (its ``max-file-size`` decides whether the cells are parsed)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise NotebookError(f"cannot read notebook: not UTF-8 ({err.reason} at byte {err.start})") from err
    estimate = _memory_estimate(data)
    if estimate > MAX_NOTEBOOK_MEMORY:
        raise NotebookError(f"not analysed: reading this notebook's JSON would take about {estimate / 2**30:.1f} GiB "
                            f"(the limit is {MAX_NOTEBOOK_MEMORY / 2**30:g} GiB)")
    try:
        content = json.loads(text)
    except json.JSONDecodeError as err:
        raise NotebookError(f"cannot read notebook: invalid JSON ({err.msg} at line {err.lineno} column {err.colno})") from err
    except RecursionError as err:
        raise NotebookError("cannot read notebook: its JSON is nested too deeply") from err
    except MemoryError as err:
        raise NotebookError("cannot read notebook: not enough memory to read its JSON") from err
    if not isinstance(content, dict) or not isinstance(content.get("cells", []), list):
        raise NotebookError("cannot read notebook: no list of cells (nbformat 4 is supported)")
    content.setdefault("cells", [])
    nonce = secrets.token_hex(6)
    while nonce in text:  # the markers and masks must not occur in the notebook already
        nonce = secrets.token_hex(6)
    notebook = Notebook([], _indent(text), "\\u" in text and text.isascii(), nonce, _language(content.get("metadata")))
    for position, raw in enumerate(content["cells"], start=1):
        if not isinstance(raw, dict) or raw.get("cell_type") != "code":
            continue  # markdown, raw, or not a cell at all: nothing to lint
        source = raw.get("source", _MISSING)
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            notebook.cells.append(_Cell(position, "".join(source), as_list=True, raw=source))
        elif isinstance(source, str):
            notebook.cells.append(_Cell(position, source, as_list=False, raw=source))
        else:
            notebook.cells.append(_Cell(position, "", False, masked=MaskedCell(skipped=_not_text(source))))
    # Code too large to analyse is not parsed cell by cell either: the engine reports its size,
    # against the same limit (the file's ``max-file-size``).
    parse = sum(len(cell.source) for cell in notebook.cells) <= engine.max_file_size(options)
    for cell in notebook.cells:
        if cell.skipped is None:
            # Each cell's masks are named apart (its index in the name), so that a mask named in a
            # message is known for the IPython line it hides.
            cell.masked = mask_cell(cell.source, f"{notebook.mask_token}{cell.index}_", parse)
    return notebook


def _memory_estimate(data: bytes) -> int:
    """An upper estimate of the bytes ``json.loads`` takes for ``data``: the text itself, and for
    every object, array and item (counted by their punctuation, in strings too) its Python object."""
    return 3 * len(data) + 64 * data.count(b"{") + 56 * data.count(b"[") + 56 * data.count(b",")


def _language(metadata: object) -> str:
    """The kernel's language as the metadata names it; Python where it names none (as a string)."""
    if isinstance(metadata, dict):
        for section, key in (("kernelspec", "language"), ("language_info", "name")):
            values = metadata.get(section)
            value = values.get(key) if isinstance(values, dict) else None
            if isinstance(value, str) and value.strip():
                return value.strip().lower()
    return "python"


def _not_text(source: object) -> str:
    if source is _MISSING:
        return "it has no source"
    if isinstance(source, list):
        return "its source is a list that holds more than strings"
    kinds = {type(None): "null", bool: "a boolean", int: "a number", float: "a number", dict: "an object"}
    return f"its source is {kinds.get(type(source), type(source).__name__)}, not text"


def _indent(text: str) -> int | None:
    match = re.search(r"\n( +)\"", text)
    return len(match.group(1)) if match else None


def python_source(data: bytes, options: Mapping[str, object] | None = None) -> bytes | None:
    """The code cells as one module (what the facts pass reads), or None for a notebook we cannot read."""
    try:
        notebook = load(data, options)
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
    if data.startswith(LFS_POINTER):  # common in real repositories: said, never an error
        result.problems.append(Problem(path, NOTE, "skipped: a Git LFS pointer, not the notebook itself "
                                       "(`git lfs pull` fetches it)", level=NOTE))
        return result
    try:
        notebook = load(data, options)
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
        statements = notebook.statement_lines(current)
        magic_fixes = [f for f in step.findings if f.fixed and f.line in statements]
        if magic_fixes:  # a fix there would change a line of IPython syntax: the rule's other fixes only
            keep = {f.key for f in step.findings if f.fixed and f.line not in statements}
            step = engine.fix_python(path, current.encode("utf-8"), [rule], facts, only=keep, options=options)
        for finding in magic_fixes:
            cell_index, line = notebook.locate(current, finding.line)
            result.problems.append(Problem(path, rule.code, f"fix not applied: {MAGIC_STATEMENT_UNFIXED}", line,
                                           finding.column + statements[finding.line], cell=cell_index, level=NOTE))
        for problem in step.problems:
            if problem.line is not None:
                cell_index, line = notebook.locate(current, problem.line)
                problem = replace(problem, line=line, cell=cell_index)
            result.problems.append(problem)
        if any(p.level != NOTE for p in step.problems):
            findings = [_unfixed(f) for f in findings]
            result.findings = findings + [_place(_without_fix(f) if f.line in statements else f, notebook, current,
                                                 fixed=False, original=module, shifts=statements)
                                          for f in step.findings]
            return result
        if step.changed and notebook.restore(step.fixed.decode("utf-8")) is None:
            # Some of this rule's fixes cannot be written back: keep the others, report these unfixed.
            step, refused = _restorable_fixes(path, notebook, current, rule, facts, options, step)
            for finding in refused:
                cell_index, line = notebook.locate(current, finding.line)
                result.problems.append(Problem(path, rule.code, "fix not applied: it would move a line of IPython "
                                               "syntax or move code between cells", line, finding.column,
                                               cell=cell_index, level=NOTE))
        masked = notebook.masked_lines(current) if step.findings else set()
        step.findings = [f for f in step.findings if f.line not in masked]  # a mask is not the user's code
        findings += [_place(_without_fix(f) if f.line in statements else f, notebook, current, original=module,
                            shifts=statements) for f in step.findings]
        if step.changed:
            current = step.fixed.decode("utf-8")
    result.findings = sorted(findings, key=lambda f: (f.cell or 0, f.line, f.column, f.code))
    if current == module:
        return result
    fixed = notebook.write(data, notebook.restore(current))
    if fixed is None:
        result.problems.append(Problem(path, NOTE, "fixes not written: re-saving this notebook would change its formatting "
                                       "(save it from Jupyter once, then run again)", level=NOTE))
        result.findings = [_unfixed(f) for f in result.findings]
        return result
    if fixed != data:
        result.fixed = fixed
    return result


def _restorable_fixes(path, notebook: Notebook, module: str, rule, facts, options, step: FileResult) -> tuple[FileResult, list[Finding]]:
    """``rule`` run again over ``module`` with only the fixes whose result can be turned back into
    cells (each tried alone, then all of them together), and the findings whose fix cannot."""
    data = module.encode("utf-8")

    def restorable(keys) -> FileResult | None:
        attempt = engine.fix_python(path, data, [rule], facts, only=keys, options=options)
        if any(p.level != NOTE for p in attempt.problems):
            return None
        if attempt.changed and notebook.restore(attempt.fixed.decode("utf-8")) is None:
            return None
        return attempt

    fixed = [f for f in step.findings if f.fixed]
    good = {f.key for f in fixed if restorable({f.key}) is not None}
    together = restorable(good) if good else None
    if together is None:  # the fixes that go back alone do not go back together: take none
        good, together = set(), restorable(set())
    refused = [f for f in fixed if f.key not in good]
    return together, refused


def _place(finding: Finding, notebook: Notebook, module: str, fixed: bool | None = None,
           original: str | None = None, shifts: Mapping[int, int] | None = None) -> Finding:
    """``finding`` of the joined ``module`` placed in its cell; ``original``: the module the run's
    facts were read from (their places, ``nb.ipynb:27``, count in it); ``shifts``: the module's
    lines that keep a ``%time`` statement, and how far left it moved (``statement_lines``)."""
    cell_index, line = notebook.locate(module, finding.line)
    end_cell, end_line = notebook.locate(module, finding.end_line)
    if end_cell != cell_index:
        end_line = line
    shifts = shifts or {}
    column = finding.column + shifts.get(finding.line, 0)
    end_column = finding.end_column + shifts.get(finding.end_line, 0)
    here = re.compile(re.escape(finding.path) + r":(\d+)\b")

    # A message that names another line ("the loader on line 17", "ModelCheckpoint (nb.ipynb:27)")
    # names it the notebook's way, and a masked line by its IPython syntax.
    def in_cells(text: str) -> str:
        text = _LINE_REFERENCE.sub(lambda m: "cell {} line {}".format(*notebook.locate(module, int(m.group(1)))), text)
        text = here.sub(lambda m: "{}:cell {}:{}".format(finding.path, *notebook.locate(original or module, int(m.group(1)))), text)
        return notebook.ipython_text(text)

    return replace(finding, line=line, end_line=end_line, column=column, end_column=end_column, cell=cell_index,
                   message=in_cells(finding.message),
                   detail=in_cells(finding.detail), unsafe_reason=in_cells(finding.unsafe_reason),
                   fixed=finding.fixed if fixed is None else fixed and finding.fixed)


#: Why a finding in the statement of a ``%time`` line has no fix.
MAGIC_STATEMENT_UNFIXED = ("it would edit a line of IPython syntax (a statement that %time runs); "
                           "ddpfix keeps such lines as written: change it by hand")


def _without_fix(finding: Finding) -> Finding:
    """``finding`` in the statement of a ``%time`` line: reported, with no fix, saying why."""
    why = f"Not fixed: {MAGIC_STATEMENT_UNFIXED}."
    return replace(finding, fixable=False, fixed=False, applicability=None, unsafe_reason="",
                   detail=f"{finding.detail}\n\n{why}" if finding.detail else why)


def _unfixed(finding: Finding) -> Finding:
    return replace(finding, fixed=False) if finding.fixed else finding
