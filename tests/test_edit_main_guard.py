"""The main-guard edit moves the module's own statements (comments with them) into a function."""

from __future__ import annotations

import libcst as cst

from ddpfix.edits import apply_edits
from ddpfix.edits.main_guard import WrapInGuardedFunction
from ddpfix.positions import Positions


def wrapped(source: str, indices: tuple[int, ...], name: str = "main") -> str:
    module = cst.parse_module(source)
    fixed, refused = apply_edits(module, Positions(module), [WrapInGuardedFunction(indices, name)])
    assert not refused
    return fixed.code


def test_the_tail_of_the_module_moves_with_its_comments():
    source = "import os\n# the script\nx = f()  # why\nrun(x)\n"
    assert wrapped(source, (1, 2)) == (
        "import os\n\n\n# the script\ndef main():\n    x = f()  # why\n    run(x)\n\n\n"
        'if __name__ == "__main__":\n    main()\n'
    )


def test_statements_left_out_keep_their_places():
    source = "a = 1\ndef f():\n    pass\nb = 2\n"
    assert wrapped(source, (0, 2), "run") == (
        "\n\ndef run():\n    a = 1\n    b = 2\n\n\ndef f():\n    pass\n\n\n"
        'if __name__ == "__main__":\n    run()\n'
    )
