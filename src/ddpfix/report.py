"""How results read: finding lines editors can link, git-appliable diffs, the one-line summary.

Only strings are built here; the CLI decides where they go. Colour is added by ``style``, which
the CLI strips when the output is not a terminal (click does that for us).
"""

from __future__ import annotations

import difflib
import io
import os
import re
import tokenize

import click

from ddpfix.findings import Finding, Problem

_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def display_path(path: str) -> str:
    """``path`` relative to the current directory when it lies below it, else as given."""
    if path == "-":
        return path
    relative = os.path.relpath(path)
    return (path if relative.startswith("..") else relative).replace(os.sep, "/")


def finding_line(finding: Finding, written: bool = False) -> str:
    """``path:line:col: CODE [*] message``; ``[*]`` marks a fix available, ``[fixed]`` one written."""
    mark = "[fixed] " if written and finding.fixed else "[*] " if finding.fixable else ""
    location = click.style(f"{display_path(finding.path)}:{finding.line}:{finding.column}:", bold=True)
    return f"{location} {click.style(finding.code, fg='red', bold=True)} {mark}{finding.message}"


def problem_line(problem: Problem) -> str:
    where = display_path(problem.path)
    if problem.line is not None:
        where += f":{problem.line}:{problem.column or 1}"
    return f"{click.style(where + ':', bold=True)} {click.style(problem.code, fg='red', bold=True)} {problem.message}"


def _decode(data: bytes) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        encoding = "utf-8"
    return data.decode(encoding, errors="replace")


def _lines(text: str) -> list[str]:
    # str.splitlines would also split on form feeds and other separators that are not line ends
    # to Python's tokenizer, and the hunks would no longer match the file.
    return _LINE.findall(text)


def unified_diff(path: str, before: bytes, after: bytes, context: int = 3) -> str:
    """A unified diff with ``a/``/``b/`` headers relative to the current directory (``git apply`` takes it)."""
    name = display_path(path)
    out = []
    for line in difflib.unified_diff(_lines(_decode(before)), _lines(_decode(after)), f"a/{name}", f"b/{name}", n=context):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def colour_diff(diff: str) -> str:
    styled = []
    for line in diff.splitlines(keepends=True):
        body, end = (line[:-1], "\n") if line.endswith("\n") else (line, "")
        if line.startswith(("+++", "---")):
            styled.append(click.style(body, bold=True) + end)
        elif line.startswith("@@"):
            styled.append(click.style(body, fg="cyan") + end)
        elif line.startswith("+"):
            styled.append(click.style(body, fg="green") + end)
        elif line.startswith("-"):
            styled.append(click.style(body, fg="red") + end)
        else:
            styled.append(line)
    return "".join(styled)


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else many or word + 's'}"


def summary(*, fixes: int, files: int, applied: bool, manual: int, problems: int, checked: int) -> str:
    """The one line on stderr that says what happened and what to do next."""
    parts = []
    if fixes:
        if applied:
            parts.append(f"Fixed {plural(fixes, 'issue')} in {plural(files, 'file')}.")
        else:
            parts.append(f"Would fix {plural(fixes, 'issue')} in {plural(files, 'file')}. Run with --write to apply.")
    if manual:
        parts.append(f"{plural(manual, 'issue')} {'needs' if manual == 1 else 'need'} a manual fix (no safe rewrite).")
    if problems:
        parts.append(f"{plural(problems, 'file')} could not be checked.")
    if not parts:
        parts.append(f"No DDP issues found in {plural(checked, 'file')}.")
    return " ".join(parts)
