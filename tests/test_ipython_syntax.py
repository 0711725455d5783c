"""Masking IPython syntax in a cell: what is masked, that it comes back byte for byte, and that a
mask a fix moved or changed is refused (the notebook is then kept as it was)."""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from ddpfix.ipython_syntax import lines_of, mask_cell, unmask

TOKEN = "_ddpfix_0123456789ab_"

IPYTHON_LINES = ["%matplotlib inline", "!pip install -q 'lightning>=2'", "!!ls", "files = !ls *.ckpt",
                 "t = %timeit -o f()", "len?", "os.path??", "?len", "??os", "/print 1 2", ",print a b",
                 ";print a b", "%env X=\"a#b\"", "a: list = !ls", "!echo 'unbalanced ("]
# %time runs its statement once as top-level code: at column 0 the statement stays visible (a mask
# only for the magic); indented, unparsable alone or continued, the whole line is masked as above.
TIME_LINES = ["%time x = f()", "%time   trainer.fit(model)  # once", "%time for i in range(2): f(i)",
              "%time return 1", "%time f(a,", "    %time y = 2", "%time x = 1 \\", "%time", "%timeit x = f()"]
PYTHON_LINES = ["x = 1", "y = (1,", "     2)", 'z = """', "%inside a string", '"""', "if x:", "    x += 1",
                "# a comment?", "w = x % 2", "v = x != 1", "", "   ", "print('?')"]
CELL_MAGICS = ["%%time", "%%timeit -n1 import os", "%%capture out", "%%prun -s cumulative", "%%debug"]
ENDINGS = ["\n", "\r\n"]


@st.composite
def cells(draw):
    magics = draw(st.lists(st.sampled_from(CELL_MAGICS), max_size=2))
    body = draw(st.lists(st.sampled_from(IPYTHON_LINES + TIME_LINES + PYTHON_LINES), max_size=12))
    ending = draw(st.sampled_from(ENDINGS))
    final = draw(st.sampled_from(["", ending]))
    return ending.join(magics + body) + final


@settings(max_examples=300, deadline=None)
@given(cells())
def test_masking_comes_back_byte_for_byte(source):
    masked = mask_cell(source, TOKEN)
    if masked.skipped is None:
        ast.parse(masked.body)
        assert len(lines_of(masked.body)) == len(lines_of(source))  # lines stay where they were
        assert unmask(masked.body, masked) == source
        for mask, shift in masked.statements.items():  # a %time statement is there, as written
            assert mask.startswith(masked.originals[mask][shift:] + "  # " + TOKEN)


def test_what_is_masked_and_what_is_not():
    source = "\n".join(["%%time", "import os", *IPYTHON_LINES, 's = """', "%in a string", '"""', "x = 1 % 2"]) + "\n"
    masked = mask_cell(source, TOKEN)
    assert masked.skipped is None
    kept = [number for number, line in enumerate(lines_of(masked.body), start=1) if TOKEN not in line]
    assert kept == [2, len(IPYTHON_LINES) + 3, len(IPYTHON_LINES) + 4, len(IPYTHON_LINES) + 5, len(IPYTHON_LINES) + 6]
    assert "files = " + TOKEN in masked.body and "a: list = " + TOKEN in masked.body  # targets stay Python


def test_cells_left_out():
    assert mask_cell("%%bash\necho 1", TOKEN).skipped.startswith("%%bash:")
    # Python, but run many times inside a function: not the module code the rules reason about
    assert mask_cell("%%timeit -n1 import os\nx = 1", TOKEN).skipped.startswith("%%timeit: the body runs many times")
    assert mask_cell("%%time\n%%writefile x.py\nx = 1", TOKEN).skipped.startswith("%%writefile:")
    assert mask_cell("x = 1\n%%time\ny = 2", TOKEN).skipped == "line 2: a %% cell magic that is not at the top of the cell"
    assert mask_cell("!ls\nprint 'x'", TOKEN).skipped.startswith("line 2: IPython syntax that is not Python")


def test_a_mask_a_fix_moved_or_changed_is_refused():
    source = "%%time\nimport os\n%cd /tmp\n%ls\nfor i in range(2):\n    !echo {i}\n    pass\n"
    masked = mask_cell(source, TOKEN)
    body = lines_of(masked.body)
    assert unmask(masked.body, masked) == source
    assert unmask(masked.body.replace("import os\n", "import os\nimport sys\n"), masked) is not None  # code added
    assert unmask("import sys\n" + masked.body, masked) is None  # code above the cell magic
    # A mask is an unknown call to the rules: moving code across it is their decision, as for any call,
    # but two magics never swap places.
    assert unmask("".join([body[0], body[2], body[1], *body[3:]]), masked) == source.replace(
        "import os\n%cd /tmp\n", "%cd /tmp\nimport os\n")
    assert unmask("".join([body[0], body[1], body[3], body[2], *body[4:]]), masked) is None
    assert unmask(masked.body.replace("    " + TOKEN, "        " + TOKEN), masked) is None  # re-indented
    assert unmask("".join(body[:2] + body[3:]), masked) is None  # dropped
    assert unmask(masked.body + body[2], masked) is None  # duplicated


def test_python_is_never_masked():
    """Every Python fixture, as a cell, is taken as it is: nothing in Python is IPython syntax."""
    from conftest import fixture_sources

    for source in fixture_sources():
        masked = mask_cell(source, TOKEN)
        assert (masked.skipped, masked.body, masked.groups) == (None, source, [])


def test_the_statement_of_a_time_line_stays_visible_and_in_place():
    source = "import os\n%time trainer = make(strategy='ddp')  # once\n%timeit f()\nfor i in x:\n    %time g(i)\nz = 1\n"
    masked = mask_cell(source, TOKEN)
    body = lines_of(masked.body)
    assert body[1] == f"trainer = make(strategy='ddp')  # once  # {TOKEN}0\n"
    assert masked.statements == {body[1].rstrip("\n"): len("%time ")}
    assert body[2] == f"{TOKEN}1()\n" and body[4] == f"    {TOKEN}2()\n"  # %timeit, and an indented %time: opaque
    assert unmask(masked.body, masked) == source
    # code added or changed around it is fine; the statement edited, moved or re-indented is not
    assert unmask("import sys\n" + masked.body.replace("z = 1", "z = 2"), masked) == "import sys\n" + source.replace("z = 1", "z = 2")
    assert unmask(masked.body.replace("'ddp'", "'ddp_notebook'"), masked) is None
    assert unmask("".join([body[1], body[0], *body[2:]]), masked) is None
    assert unmask("".join([body[0], *body[2:4], body[1], *body[4:]]), masked) is None
    assert unmask(masked.body.replace("trainer =", "    trainer ="), masked) is None
