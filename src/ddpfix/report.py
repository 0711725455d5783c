"""How results read: finding lines editors can link, git-appliable diffs, the one-line summary.

Only strings are built here; the CLI decides where they go. Colour is added by ``style``, which
the CLI strips when the output is not a terminal (click does that for us).
"""

from __future__ import annotations

import functools
import io
import os
import tokenize

import click

from ddpfix.findings import Finding, Problem
from ddpfix.lazy_regex import lazy_compile
from ddpfix.text_diff import changed_span


def display_path(path: str) -> str:
    """``path`` relative to the current directory when it lies below it, else as given."""
    if path == "-":
        return path
    relative = os.path.relpath(path)
    return (path if relative.startswith("..") else relative).replace(os.sep, "/")


#: The marks of a finding line, as Ruff's: a safe fix, and one that needs ``--unsafe-fixes``.
SAFE_MARK, UNSAFE_MARK = "[*]", "[~]"


def finding_line(finding: Finding, written: bool = False) -> str:
    """``path:line:col: CODE [*] message``: ``[*]`` marks a safe fix, ``[~]`` an unsafe one,
    ``[fixed]`` a fix written. The message is the short one: ``explanation`` has the rest."""
    if finding.suppressed:
        mark = "[suppressed] "
    elif written and finding.fixed:
        mark = "[fixed] "
    elif finding.fixable:
        mark = f"{SAFE_MARK} " if finding.safe else f"{UNSAFE_MARK} "
    else:
        mark = ""
    location = click.style(f"{place(finding.path, finding.cell)}:{finding.line}:{finding.column}:", bold=True)
    return f"{location} {click.style(finding.code, fg='red', bold=True)} {mark}{finding.message}"


#: The indent of the explanation under a finding line.
EXPLANATION_INDENT = "    "


def explanation(finding: Finding, written: bool = False) -> str:
    """What ``-v`` prints under a finding line: the finding's ``detail`` and, for an unsafe fix not
    written, what was not proven; each on an indented line of its own (the terminal wraps it; grep
    still finds it whole), so that only the finding line matches the ``path:line:col:`` pattern
    editors parse. Empty when there is nothing to add."""
    lines = [finding.detail] if finding.detail else []
    if finding.unsafe and not (written and finding.fixed):
        lines.append(f"unsafe fix: {finding.unsafe_reason or 'not proven safe'}")
        offer = rehearsal_offer(finding)
        if offer:
            lines.append(offer)
    return "\n".join(EXPLANATION_INDENT + line for line in lines)


def rehearsal_offer(finding: Finding) -> str:
    """For an unsafe fix whose failure shows on CPU ranks too: how to check it by a run, on the
    script itself where the file is one (it has a ``__main__`` block), else on the script that
    trains its code. Empty for a rule whose failure only GPUs show, and in a notebook."""
    from ddpfix.rules import all_rules

    if finding.cell is not None or any(rule.code == finding.code and rule.gpu_only for rule in all_rules()):
        return ""
    script = display_path(finding.path) if _is_a_script(finding.path) else "YOUR_TRAINING_SCRIPT.py"
    return f"check it by a run on CPU ranks: ddpfix rehearse --verify --unsafe-fixes -- python {script}"


@functools.lru_cache(maxsize=256)
def _is_a_script(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return b"__main__" in handle.read()
    except OSError:
        return False


def place(path: str, cell: int | None) -> str:
    """The path as shown, with ``:cell N`` for a place in a notebook (as Ruff writes it)."""
    return display_path(path) + (f":cell {cell}" if cell is not None else "")


def problem_line(problem: Problem) -> str:
    where = place(problem.path, problem.cell)
    if problem.line is not None:
        where += f":{problem.line}:{problem.column or 1}"
    if problem.level != "error":
        return f"{click.style(where + ':', bold=True)} {problem.level}: {problem.message}"
    return f"{click.style(where + ':', bold=True)} {click.style(problem.code, fg='red', bold=True)} {problem.message}"


_BYTE_LINE = lazy_compile(rb"[^\n]*\n|[^\n]+\Z")


def unified_diff(path: str, before: bytes, after: bytes, context: int = 3) -> bytes:
    """A unified diff of the file's own bytes, with ``a/``/``b/`` headers relative to the current
    directory, so ``git apply`` takes it whatever the file's encoding, BOM or newline style.

    Lines end at ``\n`` only: ``str.splitlines`` would also split at form feeds and other
    separators that are not line ends to Python or git.
    """
    import difflib  # loaded where a diff is shown: a report without one never needs it (start-up time)

    name = display_path(path)
    # git's a/ b/ prefixes make sense for paths below the current directory only.
    old_name, new_name = (name, name) if os.path.isabs(name) else (f"a/{name}", f"b/{name}")
    # Latin-1 maps every byte to one character and back, so difflib sees the bytes as they are.
    old = [line.decode("latin-1") for line in _BYTE_LINE.findall(before)]
    new = [line.decode("latin-1") for line in _BYTE_LINE.findall(after)]
    out = [f"--- {old_name}\n+++ {new_name}\n".encode()]
    for line in list(difflib.unified_diff(old, new, n=context))[2:]:
        out.append(line.encode("latin-1"))
        if not line.endswith("\n"):
            out.append(b"\n\\ No newline at end of file\n")
    return b"".join(out) if len(out) > 1 else b""


#: How a notebook's diff is shown: ``cells`` (a header per changed code cell and its source lines,
#: as Ruff shows them) or ``json`` (the .ipynb file's own text, which ``git apply`` takes); set by
#: ``--notebook-diff``.
NOTEBOOK_DIFF = {"style": "cells"}


def file_diff(path: str, before: bytes, after: bytes) -> bytes:
    """The diff shown for a file: a notebook's per cell (unless ``--notebook-diff json``), any
    other file's (and a notebook that cannot be read as one) as ``unified_diff``."""
    if path.endswith(".ipynb") and NOTEBOOK_DIFF["style"] == "cells":
        cells = notebook_cell_diff(path, before, after)
        if cells is not None:
            return cells
    return unified_diff(path, before, after)


def notebook_cell_diff(path: str, before: bytes, after: bytes, context: int = 3) -> bytes | None:
    """One diff per code cell whose source changed, headed ``path:cell N`` (N counts every cell
    from 1, as findings do); None when either side is not a notebook with the same cells."""
    import difflib
    import json

    try:
        old_cells = json.loads(before.decode("utf-8-sig")).get("cells", [])
        new_cells = json.loads(after.decode("utf-8-sig")).get("cells", [])
    except (ValueError, AttributeError, UnicodeDecodeError):
        return None
    if len(old_cells) != len(new_cells):
        return None
    name = display_path(path)
    out = []
    for number, (old, new) in enumerate(zip(old_cells, new_cells), start=1):
        old_source, new_source = _cell_source(old), _cell_source(new)
        if old_source == new_source:
            continue
        # A cell's last line has no line end (as nbformat writes it): shown as a line, no marker.
        old_lines = [line if line.endswith("\n") else line + "\n" for line in old_source.splitlines(True)]
        new_lines = [line if line.endswith("\n") else line + "\n" for line in new_source.splitlines(True)]
        out.append(f"--- {name}:cell {number}\n+++ {name}:cell {number}\n")
        out.extend(list(difflib.unified_diff(old_lines, new_lines, n=context))[2:])
    return "".join(out).encode("utf-8")


def _cell_source(cell) -> str:
    source = cell.get("source", "") if isinstance(cell, dict) else ""
    return "".join(source) if isinstance(source, list) else str(source)


_DIFF_STYLES = ((b"+++", "1"), (b"---", "1"), (b"@@", "36"), (b"+", "32"), (b"-", "31"))


def colour_diff(diff: bytes) -> bytes:
    """ANSI colours for a terminal (the bytes of each line are kept as they are)."""
    styled = []
    for line in diff.splitlines(keepends=True):
        body, end = (line[:-1], b"\n") if line.endswith(b"\n") else (line, b"")
        code = next((code for prefix, code in _DIFF_STYLES if line.startswith(prefix)), None)
        styled.append(b"\x1b[" + code.encode() + b"m" + body + b"\x1b[0m" + end if code else line)
    return b"".join(styled)


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else many or word + 's'}"


def summary(*, fixes: int, files: int, applied: bool, pending: int, manual: int, errors: int, checked: int,
            hidden: int = 0, apply_with: str = "--write") -> str:
    """The one line on stderr that says what happened and what to do next.

    ``fixes``: fixes in the output (written when ``applied``); ``pending``: fixable findings whose
    fix is not in it (declined, or its file could not be written); ``manual``: findings with no
    rewrite; ``hidden``: unsafe fixes left out because ``--unsafe-fixes`` is off; ``errors``: files
    with a problem reported above. ``apply_with``: the flags that apply what was shown (with the
    unsafe fixes among them, ``--write --unsafe-fixes``: ``--write`` alone would leave those out).
    """
    parts = []
    if fixes:
        if applied:
            parts.append(f"Fixed {plural(fixes, 'issue')} in {plural(files, 'file')}.")
        else:
            parts.append(f"Would fix {plural(fixes, 'issue')} in {plural(files, 'file')}. Run with {apply_with} to apply.")
    if pending:
        parts.append(f"{plural(pending, 'fix', 'fixes')} not applied.")
    if hidden:
        parts.append(f"{plural(hidden, 'more fix', 'more fixes')} {'is' if hidden == 1 else 'are'} available with "
                     "--unsafe-fixes (review them: [~]).")
    if manual:
        parts.append(f"{plural(manual, 'issue')} {'needs' if manual == 1 else 'need'} a manual fix (no rewrite).")
    if errors:
        parts.append(f"{plural(errors, 'file')} had errors (see above).")
    if not parts:
        parts.append(f"No DDP issues found in {plural(checked, 'file')}.")
    return " ".join(parts)


def preview_question(fixes: int, files: int, hidden: int) -> str:
    """The preview's question, with what it would do beside it (the summary comes after the answer)."""
    more = f" ({hidden} more with --unsafe-fixes)" if hidden else ""
    return (f"Would fix {plural(fixes, 'issue')} in {plural(files, 'file')}{more}. "
            f"Apply {plural(fixes, 'fix', 'fixes')} to {plural(files, 'file')}?")


# --- machine-readable formats ------------------------------------------------------------------


def source_text(data: bytes) -> str:
    """A file's bytes as Python reads them: in the encoding its coding cookie names, BOM dropped.

    Edits are placed by counting code points in this text, as LibCST counts the findings'
    columns; a plain UTF-8 decode would shift line 1 of a BOM file and garble Latin-1 sources.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding, "replace")
    except (SyntaxError, LookupError):
        return data.decode("utf-8", "replace")


def text_edit(before: str, after: str) -> dict | None:
    """The one edit that turns ``before`` into ``after``: the changed span (1-based lines and
    columns, end exclusive) and its replacement text."""
    span = changed_span(before, after)
    if span is None:
        return None
    start, end_before, end_after = span

    def place(offset: int) -> tuple[int, int]:
        line = before.count("\n", 0, offset) + 1
        column = offset - (before.rfind("\n", 0, offset) + 1) + 1
        return line, column

    (line, column), (end_line, end_column) = place(start), place(end_before)
    return {"line": line, "column": column, "end_line": end_line, "end_column": end_column, "content": after[start:end_after]}


def finding_record(finding: Finding, edits: list[dict]) -> dict:
    return {
        "path": display_path(finding.path),
        "line": finding.line,
        "column": finding.column,
        "end_line": finding.end_line,
        "end_column": finding.end_column,
        "code": finding.code,
        "name": finding.name,
        "message": finding.message,
        "detail": finding.detail or None,
        "fixable": finding.fixable,
        "applicability": finding.applicability,
        "unsafe_reason": finding.unsafe_reason or None,
        "fixed": finding.fixed,
        "suppressed": finding.suppressed,
        "cell": finding.cell,
        "fix": edits,
    }


def problem_record(problem: Problem) -> dict:
    return {
        "path": display_path(problem.path),
        "line": problem.line,
        "column": problem.column,
        "end_line": problem.line,
        "end_column": problem.column,
        "code": problem.code,
        "name": problem.level,
        "message": problem.message,
        "detail": None,
        "fixable": False,
        "applicability": None,
        "unsafe_reason": None,
        "fixed": False,
        "suppressed": False,
        "cell": problem.cell,
        "fix": [],
    }


def _github_escape(text: str, property_value: bool = False) -> str:
    """GitHub's escaping of a workflow command: ``%``, CR and LF in the message; also ``:`` and
    ``,`` in a property value, where they would end the value."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def github_line(finding: Finding | None = None, problem: Problem | None = None, *, path: str | None = None,
                region: tuple[int, int, int, int] | None = None) -> str:
    """A GitHub Actions workflow command, which the Actions UI shows as an annotation.

    ``path`` is the file as the repository names it and ``region`` the span in the file's text
    (``ci_places``: for a notebook, where the cell's line stands in the ``.ipynb`` JSON); without
    them, the path as shown and the finding's own line and columns. GitHub takes ``col`` and
    ``endColumn`` only on an annotation within one line: a span over several lines gives its lines only.
    """
    if finding is not None:
        level, title, message, cell = "warning", finding.code, finding.full_message, finding.cell
        line, column, end_line, end_column = region or (finding.line, finding.column, finding.end_line, finding.end_column)
        cell_line = finding.line
    else:
        level = "error" if problem.level == "error" else "notice"
        line, column = (region or (problem.line or 1, problem.column or 1))[:2]
        end_line, end_column = line, None
        title, message, cell, cell_line = problem.code, problem.message, problem.cell, problem.line
    if cell is not None:  # the line is one of the .ipynb file's text: the title says the cell's own
        title = f"{title} (cell {cell}" + (f" line {cell_line})" if cell_line else ")")
    file = path if path is not None else display_path((finding or problem).path)
    properties = [("file", file), ("line", line), ("endLine", end_line)]
    if end_line == line:
        properties.append(("col", column))
        if end_column is not None and end_column > column:
            properties.append(("endColumn", end_column))
    properties.append(("title", title))
    fields = ",".join(f"{key}={_github_escape(str(value), True)}" for key, value in properties)
    return f"::{level} {fields}::{_github_escape(message)}"
