"""IPython syntax in a notebook cell: which lines are not Python, how they are hidden, how they come back.

IPython's kernel rewrites a cell before Python sees it (``IPython.core.inputtransformer2``). The
lines it rewrites are *masked* here: each is replaced by a line of Python of the same place (an
opaque call, so the analysis treats it as code with unknown effects that may bind nothing but what
an assignment says), the cell is linted, and the masks are turned back into the original lines
byte for byte. A mask that a fix moved, re-indented, edited or dropped cannot be turned back: the
caller then keeps the notebook as it was.

What is masked (docs/notebooks.md has the table):

- a cell magic on the cell's first line, when IPython runs its body as Python in the kernel
  (``%%time``, ``%%capture``, ``%%prun``, ``%%debug``; not ``%%timeit``); the whole line is masked (as
  a comment: it only wraps the body), options and statements on it included. Any other cell magic (``%%bash``, ``%%writefile``,
  ``%%python``: another process, ``%%sql``, unknown ones) leaves the cell out.
- at the start of a logical line (not inside a string or brackets), at any indentation: line magics
  and shell escapes (``%cd x``, ``!ls``, ``!!ls``), help (``?obj``, ``??obj``, ``obj?``, ``obj??``),
  auto-call and auto-quote (``/f x``, ``,f a b``, ``;f a b``); a backslash at the end continues
  them, as in IPython;
- except a line magic that runs its statement once as the cell's own code (``%time STATEMENT`` at
  the top level of the cell): only the magic is hidden, the statement stays on its line for the
  rules to see (a trailing comment names the mask), and no fix may move or change that line;
- assignments from a magic or the shell (``files = !ls``, ``t = %timeit -o f()``): the target
  stays, the right-hand side is masked.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field

#: What every mask's name starts with (a notebook's nonce follows): the edits that look for a
#: file's leading imports step over a mask, so an import a fix adds lands after ``!pip install``.
MASK_PREFIX = "_ddpfix_"

#: Cell magics whose body IPython runs once, as the cell's code, in the kernel's namespace: what
#: the rules prove of module code holds for it. ``%%python``/``%%script`` run another process,
#: ``%%writefile`` runs nothing: not here.
PYTHON_CELL_MAGICS = frozenset({"time", "capture", "prun", "debug"})
#: Cell magics whose body is Python, but not run as the cell's code: the cell is left out, with why.
#: ``%%timeit`` compiles its body into a function and runs it many times, so a fix proven for code
#: run once at the top level (a moved statement, an added import) is proven for nothing there.
NOT_MODULE_CODE = {"timeit": "%%timeit: the body runs many times inside a function, not once as the "
                             "notebook's code, so it is not checked"}

#: Line magics whose argument IPython runs once as the cell's top-level code: ``%time STATEMENT``
#: (``ExecutionMagics.time``: no options; the line, not variable-expanded, is transformed as a cell
#: and run with ``exec(code, user_ns, local_ns)``, the caller's namespace being the kernel's at a
#: cell's top level). What the rules find in that statement holds for it. Not ``%timeit`` (many runs,
#: inside a function), ``%prun`` (getopt options before the statement), ``%debug`` (argparse splits
#: the statement into words and joins them with newlines): those stay opaque.
STATEMENT_LINE_MAGICS = frozenset({"time"})
_STATEMENT_MAGIC = re.compile(r"%(\w+)[ \t]+(?=[^ \t])")

_LINE_ESCAPES = ("%", "!", "?", "/", ",", ";")  # a line starting so is IPython's, never Python
_HELP_END = re.compile(r"%{0,2}[\w.*]+\?{1,2}")
# ``= %magic`` or ``= !command``: what IPython's MagicAssign and SystemAssign take (not ``==``, ``<=``...).
_EQUALS = re.compile(r"(?<![=<>!:+\-*/%&|^@])=(?!=)")
_MAGIC_RIGHT_SIDE = re.compile(r"(?<![=<>!:+\-*/%&|^@])=(?!=)[ \t]*(?=%{1,2}[A-Za-z_]|!)")
_INTERESTING = re.compile(r"[#()\[\]{}'\"\\]")  # what the scanner must look at; the rest it jumps over
# A line that may be IPython's: what ``_ipython_line`` looks for, over-approximated (any line).
_MAYBE_IPYTHON = re.compile(r"^[ \t]*[%!?/,;]|\?[ \t]*\r?$|=[ \t]*[%!]", re.M)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def lines_of(text: str) -> list[str]:
    """``text``'s lines with their endings, split where Python splits them (``str.splitlines`` also
    splits at form feeds and U+2028, which Python's lines may hold)."""
    return _LINE.findall(text)


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")):]


@dataclass
class MaskedCell:
    body: str = ""  # the cell with its IPython lines masked: Python, if ``skipped`` is None
    skipped: str | None = None  # why the cell is left out
    originals: dict[str, str] = field(default_factory=dict)  # mask line -> the line it hides (no endings)
    groups: list[list[str]] = field(default_factory=list)  # each masked construct's mask lines, in order
    leading: int = 0  # how many groups are cell magics (they must stay the cell's first lines)
    #: mask line -> how many columns its statement moved left: the lines that keep the statement of
    #: a ``%time`` (``STATEMENT_LINE_MAGICS``) for the rules to see
    statements: dict[str, int] = field(default_factory=dict)


class _Masker:
    def __init__(self, token: str) -> None:
        self.token = token
        self.cell = MaskedCell()

    def mask(self, lines: list[str], first: int, last: int, keep: int = 0, comment: bool = False) -> None:
        """Mask ``lines[first:last + 1]``: the first line keeps its first ``keep`` characters (an
        assignment's target) and becomes a call (a comment with ``comment``); the lines it
        continues onto become comments."""
        number = len(self.cell.groups)
        name = f"{self.token}{number}"
        group = []
        for index in range(first, last + 1):
            text = lines[index].rstrip("\r\n")
            if index == first and comment:
                masked = f"# {name}"
            elif index == first:
                indent = len(text) - len(text.lstrip(" \t")) if keep == 0 else keep
                masked = f"{text[:indent]}{name}()"
            else:
                masked = f"# {name} {index - first}"
            self.cell.originals[masked] = text
            group.append(masked)
            lines[index] = masked + _ending(lines[index])
        self.cell.groups.append(group)

    def mask_magic(self, lines: list[str], index: int, statement: int) -> None:
        """Mask the line magic of ``lines[index]``, whose statement starts at column ``statement``:
        the statement moves to the line's start, the mask's name to a comment after it."""
        name = f"{self.token}{len(self.cell.groups)}"
        text = lines[index].rstrip("\r\n")
        masked = f"{text[statement:]}  # {name}"
        self.cell.originals[masked] = text
        self.cell.statements[masked] = statement
        self.cell.groups.append([masked])
        lines[index] = masked + _ending(lines[index])


def mask_cell(source: str, token: str, parse: bool = True) -> MaskedCell:
    """``source`` with its IPython lines masked (``token`` is a name prefix found nowhere in the
    notebook), or why the cell stays out. ``parse=False``: the cell is taken as it is, unparsed (a
    notebook whose code is too large to analyse at all)."""
    if not parse:
        return MaskedCell(body=source)
    masker = _Masker(token)
    cell = masker.cell
    lines = lines_of(source)
    # Cell magics: the first non-blank line, again after each one (the body is a cell in its turn).
    index = 0
    while True:
        while index < len(lines) and not lines[index].strip():
            index += 1
        if index == len(lines) or not lines[index].startswith("%%"):
            break
        name = lines[index][2:].split(None, 1)[0] if lines[index][2:].strip() else ""
        if name not in PYTHON_CELL_MAGICS:
            cell.skipped = NOT_MODULE_CODE.get(name, f"%%{name}: the body of this cell magic is not Python run by the kernel")
            return cell
        # A comment: the body is the cell's code (the analysis sees it at the top, with no call before
        # it), and an import a fix adds "after the leading imports" lands below the magic.
        masker.mask(lines, index, index, comment=True)
        index += 1
    cell.leading = len(cell.groups)
    if not cell.groups and _MAYBE_IPYTHON.search(source) is None:
        cell.body = source  # the common cell: one parse, no scan
        cell.skipped = parse_problem(source)
        return cell
    problem = _mask_lines(masker, lines, index)
    if problem is not None:
        cell.skipped = problem
        return cell
    cell.body = "".join(lines)
    cell.skipped = parse_problem(cell.body)
    if cell.skipped is not None and cell.groups and not cell.leading and parse_problem(source) is None:
        return MaskedCell(body=source)  # Python after all: the scan took a string's line for IPython's
    return cell


def _mask_lines(masker: _Masker, lines: list[str], start: int) -> str | None:
    """Mask the IPython lines from ``lines[start]`` on; a reason to leave the cell out, or None."""
    scanner = _Scanner()
    index = start
    while index < len(lines):
        line = lines[index].rstrip("\r\n")
        if scanner.at_line_start():
            keep = _ipython_line(line)
            if keep is not None:
                if line.lstrip().startswith("%%"):
                    return f"line {index + 1}: a %% cell magic that is not at the top of the cell"
                last = index
                while lines[last].rstrip("\r\n").endswith("\\") and last + 1 < len(lines):
                    last += 1  # IPython joins a magic's backslash-continued lines
                statement = _magic_statement(line) if last == index else None
                if statement is not None:
                    masker.mask_magic(lines, index, statement)
                    index += 1
                    continue
                masker.mask(lines, index, last, keep)
                index = last + 1
                continue
        scanner.feed(line)
        index += 1
    return None


def _magic_statement(line: str) -> int | None:
    """Where the statement of a ``%time STATEMENT`` line starts, for one at the cell's top level (at
    column 0: indented, it may be in a function, whose locals IPython's ``exec`` would only copy)
    whose statement is a whole Python statement on its own; None for any other line."""
    match = _STATEMENT_MAGIC.match(line)
    if match is None or match.group(1) not in STATEMENT_LINE_MAGICS:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(line[match.end():], "<%time>", "exec", dont_inherit=True)  # also no top-level return, await
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return match.end()


def _ipython_line(line: str) -> int | None:
    """For a line that starts a logical line: None if IPython leaves it to Python, else how many
    leading characters of it are Python and stay (an assignment's target, or the indentation)."""
    rest = line.lstrip(" \t")
    indent = len(line) - len(rest)
    if not rest or rest.startswith("#"):
        return None
    if rest.startswith(_LINE_ESCAPES):
        return 0
    bare = rest.rstrip()
    if bare.endswith("?") and _HELP_END.fullmatch(bare):
        return 0
    if "=" not in rest or ("%" not in rest and "!" not in rest) or _MAGIC_RIGHT_SIDE.search(rest) is None:
        return None  # the common case, without a regular expression or a parse
    for match in _EQUALS.finditer(rest):
        if _is_target(rest[:match.start()]):  # the assignment's '=' (IPython: the first outside brackets)
            right = _MAGIC_RIGHT_SIDE.match(rest, match.start())
            return None if right is None else indent + right.end()  # up to the '%' or '!'
    return None


def _is_target(text: str) -> bool:
    """Whether ``text = ...`` is an assignment (IPython takes everything left of the ``=``)."""
    try:
        tree = ast.parse(text.strip() + " = 0")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return len(tree.body) == 1 and isinstance(tree.body[0], (ast.Assign, ast.AnnAssign))


class _Scanner:
    """Just enough of Python's tokenizer to know whether the next physical line starts a logical
    line: not inside a string, brackets or a backslash continuation."""

    def __init__(self) -> None:
        self.depth = 0
        self.open_string = ""  # the quotes of a triple-quoted string still open
        self.continued = False

    def at_line_start(self) -> bool:
        return not self.open_string and self.depth == 0 and not self.continued

    def feed(self, line: str) -> None:
        position, length = 0, len(line)
        self.continued = False
        while position < length:
            if self.open_string:
                end = _string_end(line, position, self.open_string)
                if end is None:
                    return
                self.open_string, position = "", end
                continue
            found = _INTERESTING.search(line, position)
            if found is None:
                return
            position = found.start()
            char = line[position]
            if char == "#":
                return
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(0, self.depth - 1)
            elif char == "\\" and position == length - 1:
                self.continued = True
            elif char in "'\"":
                quote = line[position:position + 3] if line.startswith(char * 3, position) else char
                end = _string_end(line, position + len(quote), quote)
                if end is None:
                    if len(quote) == 3:
                        self.open_string = quote
                    elif line.endswith("\\"):
                        self.continued = True
                    return
                position = end
                continue
            position += 1


def _string_end(line: str, position: int, quote: str) -> int | None:
    """Where a string closed by ``quote`` ends on ``line`` (just past the quote), or None."""
    while position < len(line):
        if line[position] == "\\":
            position += 2
            continue
        if line.startswith(quote, position):
            return position + len(quote)
        position += 1
    return None


def unmask(text: str, cell: MaskedCell) -> str | None:
    """The cell's text with its masks turned back into the original lines; None when a fix moved,
    re-indented, edited or dropped one (or put code above a cell magic)."""
    if not cell.groups:
        return text
    lines = lines_of(text)
    stripped = [line.rstrip("\r\n") for line in lines]
    where: dict[str, int] = {}
    for number, line in enumerate(stripped):
        if line in cell.originals:
            if line in where:
                return None
            where[line] = number
    if cell.statements and not _statements_in_place(cell, stripped):
        return None
    previous = -1
    for count, group in enumerate(cell.groups):
        if any(mask not in where for mask in group):
            return None
        first = where[group[0]]
        if first <= previous or [where[mask] for mask in group] != list(range(first, first + len(group))):
            return None
        if count < cell.leading and any(stripped[k].strip() for k in range(previous + 1, first)):
            return None  # a cell magic must stay the cell's first non-blank line
        previous = first + len(group) - 1
    for mask, number in where.items():
        lines[number] = cell.originals[mask] + _ending(lines[number])
    return "".join(lines)


def _statements_in_place(cell: MaskedCell, lines: list[str]) -> bool:
    """Whether each line that keeps a ``%time`` statement is still where it was among the lines
    around it: a fix may add or change code before or after it, not move it."""
    import difflib  # loaded for the rare cell with a %time statement

    before = [line.rstrip("\r\n") for line in lines_of(cell.body)]
    kept = set()
    for start, _, size in difflib.SequenceMatcher(None, before, lines, autojunk=False).get_matching_blocks():
        kept.update(line for line in before[start:start + size] if line in cell.statements)
    return kept == cell.statements.keys()


def parse_problem(source: str) -> str | None:
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


def notebook_module(path: str) -> str | None:
    """A notebook's code cells as one module, their IPython lines masked (``%pip``, ``!ls`` become
    opaque calls), for a question about the whole program (which classes derive from which, what
    is stored where); None where a cell is not Python the kernel runs (``%%bash``, ``%%writefile``:
    what it writes may run) or the file cannot be read."""
    import json

    try:
        with open(path, "rb") as handle:
            cells = json.loads(handle.read()).get("cells", [])
        sources = ["".join(c.get("source", "")) if isinstance(c.get("source"), list) else str(c.get("source", ""))
                   for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
    except (OSError, ValueError, AttributeError, TypeError, RecursionError):
        return None
    bodies = []
    for source in sources:
        cell = mask_cell(source, "__ddpfix_masked_")
        if cell.skipped is not None:
            return None
        bodies.append(cell.body)
    return "\n".join(bodies)
