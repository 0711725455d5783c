"""Check that the rules' text prefilters hide nothing, over whole trees: ``python bench/prefilter_check.py PATH...``.

A rule whose ``triggered_by`` adds a text test to its trigger words (``rules/_text``) must
pass every file whose words pass and whose CPython tree ``may_apply`` takes: the text test may
only ever spare a parse. This parses every file the words pass, so it takes a minute or two on
corpus A (run ``python bench/run.py --corpus a`` once to build it). Prints, per rule, how many
files each step passes, and every miss; exits 1 on a miss.

``--findings``: also run every rule report-only on every file twice, as shipped and with its
trigger words, text test and ``may_apply`` switched off, and compare the findings (the fixture
test ``tests/test_prefilter.py`` does this on the fixtures; this does it on a corpus: slow, LibCST
parses every file, about 20 minutes for corpus B).
"""

from __future__ import annotations

import ast
import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from ddpfix.engine import set_up_for_trees  # noqa: E402
from ddpfix.sources import fix_source  # noqa: E402
from ddpfix.runner import discover, gather_facts, read_source  # noqa: E402
from ddpfix.rules import all_rules  # noqa: E402


def compare_findings(files: list[str]) -> list[tuple[str, str]]:
    """(path, rule code) wherever the prefilter hid or changed a finding."""
    rules = all_rules()
    facts = gather_facts(files, rules)
    differ = []
    for path in files:
        data = read_source(path)
        if not isinstance(data, bytes):
            continue
        for rule in rules:
            shipped = fix_source(path, data, [rule], facts, fix=False).findings
            everything = fix_source(path, data, [rule.without_prefilters()], facts, fix=False).findings
            if shipped != everything:
                differ.append((path, rule.code))
    return differ


def main(argv: list[str]) -> int:
    set_up_for_trees()
    findings = "--findings" in argv
    paths = [arg for arg in argv if arg != "--findings"]
    rules = [rule for rule in all_rules() if rule.has_text_prefilter()]
    files, _, _ = discover(paths, [], False)
    counts = {rule.code: [0, 0, 0] for rule in rules}  # words, text, may_apply
    misses = []
    for path in files:
        if not path.endswith(".py"):
            continue
        data = read_source(path)
        if not isinstance(data, bytes):
            continue
        worded = [rule for rule in rules if rule.has_trigger_words(data)]
        if not worded:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(data)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        for rule in worded:
            text = rule.triggered_by(data)
            wanted = rule.may_apply(tree)
            count = counts[rule.code]
            count[0] += 1
            count[1] += text
            count[2] += wanted
            if wanted and not text:
                misses.append((path, rule.code))
    print(f"{len(files)} files")
    print(f"{'rule':8} {'words':>7} {'text':>7} {'may_apply':>10}")
    for code, (words, text, wanted) in counts.items():
        print(f"{code:8} {words:7} {text:7} {wanted:10}")
    for path, code in misses:
        print(f"MISS {code} {path}: may_apply takes it, the text prefilter does not")
    print(f"{len(misses)} misses")
    if findings:
        differ = compare_findings([path for path in files if path.endswith(".py")])
        for path, code in differ:
            print(f"HIDDEN {code} {path}: the findings differ with the prefilter switched off")
        print(f"{len(differ)} files with findings hidden by a prefilter")
        misses += differ
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
