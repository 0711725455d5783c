"""--output-format sarif, through the real command line, validated against the OASIS SARIF 2.1.0 schema."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
from conftest import FIXTURES, ROOT
from fixture_cases import Case

from ddpfix.rules import all_rules, select_rules

SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
# A few rule folders whose inputs hold fixable and manual findings of several rules, some files more than one.
BUGGY_FOLDERS = ("cuda-generator", "hardcoded-device", "rank-gated-log", "init-module-scope")
TEXT_LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<column>\d+): (?P<code>DDP\d+) ")
UNPARSABLE = b"from torch.utils.data import DataLoader\ng = torch.Generator(\n"
BOM_LINE_ONE = (
    'import torch; gé = torch.Generator(device="cuda")\n'
    "from torch.utils.data import DataLoader\n"
    "loader = DataLoader(range(8), shuffle=True, generator=gé)\n"
)


@pytest.fixture(scope="module")
def validator():
    cls = jsonschema.validators.validator_for(SCHEMA)
    cls.check_schema(SCHEMA)
    return cls(SCHEMA, format_checker=cls.FORMAT_CHECKER)


def valid_log(proc, validator) -> dict:
    log = json.loads(proc.stdout)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    return log


def buggy_tree(tmp_path: Path) -> Path:
    for name in BUGGY_FOLDERS:
        shutil.copytree(FIXTURES / name, tmp_path / "cases" / name, ignore=shutil.ignore_patterns("*.expected.py", "*.unsafe.py"))
    return tmp_path


def uri(result: dict) -> str:
    return result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]


def region(result: dict) -> dict:
    return result["locations"][0]["physicalLocation"]["region"]


def apply_replacements(text: str, replacements: list[dict]) -> str:
    """Apply SARIF replacements (regions in code points, end column exclusive), last first."""
    lines = re.findall(r"[^\n]*\n|[^\n]+\Z", text)  # lines end at "\n" only, as for SARIF and git
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(line: int, column: int) -> int:
        return offsets[line - 1] + column - 1

    spans = []
    for replacement in replacements:
        deleted = replacement["deletedRegion"]
        start = offset(deleted["startLine"], deleted["startColumn"])
        end = offset(deleted["endLine"], deleted["endColumn"])
        spans.append((start, end, replacement["insertedContent"]["text"]))
    for start, end, content in sorted(spans, reverse=True):
        text = text[:start] + content + text[end:]
    return text


def fixed_text(source: str, result: dict) -> str:
    [fix] = result["fixes"]
    [change] = fix["artifactChanges"]
    assert change["artifactLocation"] == result["locations"][0]["physicalLocation"]["artifactLocation"]
    return apply_replacements(source, change["replacements"])


def test_the_schema_is_the_oasis_2_1_0_schema_and_catches_mistakes(validator):
    assert SCHEMA["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    assert SCHEMA["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    assert SCHEMA["properties"]["version"]["enum"] == ["2.1.0"]
    minimal = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "ddpfix"}}, "results": []}]}
    assert validator.is_valid(minimal)
    # So a clean validation below means something: the schema rejects what a careless writer makes.
    bad_region = {"ruleId": "DDP002", "message": {"text": "m"}, "locations": [
        {"physicalLocation": {"artifactLocation": {"uri": "a.py"}, "region": {"startLine": 0}}}]}
    assert not validator.is_valid({**minimal, "runs": [{**minimal["runs"][0], "results": [bad_region]}]})
    assert not validator.is_valid({**minimal, "runs": [{**minimal["runs"][0], "columnKind": "bytes"}]})
    assert not validator.is_valid({**minimal, "version": "2.0.0"})


def test_many_files_rules_regions_and_order(tmp_path, run_cli, validator):
    tree = buggy_tree(tmp_path)
    proc = run_cli("--output-format", "sarif", "cases", cwd=tree)
    assert proc.returncode == 1, proc.stderr
    log = valid_log(proc, validator)
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "ddpfix" and driver["informationUri"] == "https://github.com/ddpfix/ddpfix"
    default = select_rules([], [])  # the rules that ran: the default selection (no preview rule)
    assert [rule["id"] for rule in driver["rules"]] == [rule.code for rule in default]
    for descriptor, rule in zip(driver["rules"], default):
        assert descriptor["name"] == rule.name and descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["helpUri"] == rule.url() and descriptor["help"]["text"] == rule.page()
        assert descriptor["properties"]["fixable"] == rule.fixable
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tree.resolve().as_uri() + "/"
    assert run["invocations"][0]["executionSuccessful"] is True
    results = run["results"]
    assert {r["ruleId"] for r in results} >= {"DDP001", "DDP002", "DDP003", "DDP006"}
    for result in results:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == "warning" and "suppressions" not in result
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    # The same findings at the same places, in the same order, as the text format prints them.
    text = run_cli("--check", "cases", cwd=tree).stdout.decode().splitlines()
    expected = [m.groups() for m in map(TEXT_LINE.match, text) if m]
    got = [(uri(r), str(region(r)["startLine"]), str(region(r)["startColumn"]), r["ruleId"]) for r in results]
    assert got == expected and len(got) > 20
    # Each result's text is the finding's short message, then its explanation (json's detail).
    records = [r for r in json.loads(run_cli("--output-format", "json", "cases", cwd=tree).stdout)
               if r["code"].startswith("DDP")]
    assert [r["message"]["text"] for r in results] == [
        f"{r['message']}\n{r['detail']}" if r["detail"] else r["message"] for r in records]
    # Deterministic: a second run (other worker count) prints the same bytes.
    assert run_cli("--output-format", "sarif", "-j", "1", "cases", cwd=tree).stdout == proc.stdout


def test_each_fix_on_its_own_is_the_json_edit_and_the_rules_own_fix(tmp_path, run_cli, validator):
    tree = buggy_tree(tmp_path)
    results = valid_log(run_cli("--output-format", "sarif", "cases", cwd=tree), validator)["runs"][0]["results"]
    records = json.loads(run_cli("--output-format", "json", "cases", cwd=tree).stdout)
    json_edits = {(r["path"], r["line"], r["column"], r["code"]): r["fix"] for r in records}
    with_fix = [r for r in results if "fixes" in r]
    assert len(with_fix) > 10
    assert all(r["properties"]["fixable"] for r in with_fix)
    assert all("fixes" not in r for r in results if not r["properties"]["fixable"])
    once_per_rule: dict[tuple[str, str], list[dict]] = {}
    for result in results:
        if result["properties"]["fixable"]:
            once_per_rule.setdefault((uri(result), result["ruleId"]), []).append(result)
    for result in with_fix:
        source = (tree / uri(result)).read_text(encoding="utf-8")
        after = fixed_text(source, result)
        assert after != source
        compile(after, uri(result), "exec")
        [edit] = json_edits[(uri(result), region(result)["startLine"], region(result)["startColumn"], result["ruleId"])]
        change = result["fixes"][0]["artifactChanges"][0]["replacements"][0]
        assert change["deletedRegion"] == {"startLine": edit["line"], "startColumn": edit["column"],
                                           "endLine": edit["end_line"], "endColumn": edit["end_column"]}
        assert change["insertedContent"]["text"] == edit["content"]
    # Where a file has one fixable finding of a rule, its fix is what `--select RULE --write` writes.
    checked = 0
    for code in sorted({r["ruleId"] for r in with_fix}):
        written = tmp_path / f"written-{code}"
        shutil.copytree(tree / "cases", written / "cases")
        run_cli("--select", code, "--write", "--unsafe-fixes", "cases", cwd=written)
        for (path, rule), found in once_per_rule.items():
            if rule == code and len(found) == 1 and "fixes" in found[0]:
                source = (tree / path).read_text(encoding="utf-8")
                assert fixed_text(source, found[0]) == (written / path).read_text(encoding="utf-8"), path
                checked += 1
    assert checked > 10


def test_no_findings_and_no_files(tmp_path, run_cli, validator):
    (tmp_path / "ok.py").write_text("import torch\nx = torch.zeros(3)\n")
    proc = run_cli("--output-format", "sarif", "ok.py", cwd=tmp_path)
    assert proc.returncode == 0
    run = valid_log(proc, validator)["runs"][0]
    assert run["results"] == [] and run["invocations"][0]["executionSuccessful"] is True
    (tmp_path / "empty").mkdir()
    proc = run_cli("--output-format", "sarif", "--select", "DDP002", "empty", cwd=tmp_path)
    run = valid_log(proc, validator)["runs"][0]
    assert run["results"] == [] and [r["id"] for r in run["tool"]["driver"]["rules"]] == ["DDP002"]


def test_an_unparsable_file_is_a_notification_and_the_others_still_report(tmp_path, run_cli, validator):
    (tmp_path / "bad.py").write_bytes(UNPARSABLE)
    shutil.copy(FIXTURES / "cuda-generator" / "seed_pattern.py", tmp_path / "train.py")
    proc = run_cli("--output-format", "sarif", "bad.py", "train.py", cwd=tmp_path)
    assert proc.returncode == 2
    run = valid_log(proc, validator)["runs"][0]
    [invocation] = run["invocations"]
    assert invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and note["descriptor"]["id"] == "E999"
    location = note["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "bad.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"]["startLine"] == 2
    assert [uri(r) for r in run["results"]] == ["train.py"]


def test_write_marks_the_fixes_applied_and_offers_no_stale_edit(tmp_path, run_cli, validator):
    shutil.copy(FIXTURES / "cuda-generator" / "seed_pattern.py", tmp_path / "train.py")
    shutil.copy(FIXTURES / "cuda-generator" / "variable_device.py", tmp_path / "manual.py")
    proc = run_cli("--output-format", "sarif", "--write", "--unsafe-fixes", "train.py", "manual.py", cwd=tmp_path)
    assert proc.returncode == 1  # manual.py still needs a hand fix
    results = valid_log(proc, validator)["runs"][0]["results"]
    fixed = [r for r in results if uri(r) == "train.py"]
    manual = [r for r in results if uri(r) == "manual.py"]
    assert fixed and all(r["properties"]["fixable"] and r["properties"]["fixed"] and "fixes" not in r for r in fixed)
    assert all(r["properties"]["applicability"] in ("safe", "unsafe") for r in fixed)
    assert manual and all(r["properties"] == {"fixable": False, "applicability": None, "fixed": False} for r in manual)
    expected = Case(FIXTURES / "cuda-generator" / "seed_pattern.py").fully_fixed.read_bytes()
    assert (tmp_path / "train.py").read_bytes() == expected


def test_show_suppressed_marks_results_suppressed_in_source(tmp_path, run_cli, validator):
    source = (FIXTURES / "cuda-generator" / "seed_pattern.py").read_text()
    silenced = source.replace('g = torch.Generator(device="cuda")', 'g = torch.Generator(device="cuda")  # noqa: DDP002')
    assert silenced != source
    (tmp_path / "train.py").write_text(silenced)
    assert valid_log(run_cli("--output-format", "sarif", "train.py", cwd=tmp_path), validator)["runs"][0]["results"] == []
    proc = run_cli("--output-format", "sarif", "--show-suppressed", "train.py", cwd=tmp_path)
    [result] = valid_log(proc, validator)["runs"][0]["results"]
    assert result["suppressions"] == [{"kind": "inSource"}] and "fixes" not in result
    assert region(result)["startLine"] == 7


def test_columns_count_code_points_and_uris_are_escaped(tmp_path, run_cli, validator):
    # A BOM and a non-ASCII name before the finding on line 1: counted in bytes, columns would be
    # four further right (three for the BOM, one for the second byte of "é").
    (tmp_path / "my train.py").write_bytes(b"\xef\xbb\xbf" + BOM_LINE_ONE.encode())
    proc = run_cli("--output-format", "sarif", "my train.py", cwd=tmp_path)
    [result] = valid_log(proc, validator)["runs"][0]["results"]
    assert uri(result) == "my%20train.py"
    assert (region(result)["startLine"], region(result)["startColumn"]) == (1, 20)
    [text_line] = run_cli("--check", "my train.py", cwd=tmp_path).stdout.decode().splitlines()
    assert text_line.startswith("my train.py:1:20: DDP002")
    assert fixed_text(BOM_LINE_ONE, result) == BOM_LINE_ONE.replace('torch.Generator(device="cuda")', "torch.Generator()")


def test_a_notebook_finding_names_its_cell_and_its_fix_edits_the_notebook_file(tmp_path, run_cli, validator):
    folder = FIXTURES / "notebook-strategy"
    shutil.copy(folder / "magics_and_other_rules.ipynb", tmp_path / "nb.ipynb")
    proc = run_cli("--output-format", "sarif", "nb.ipynb", cwd=tmp_path)
    run = valid_log(proc, validator)["runs"][0]
    text = run_cli("--check", "nb.ipynb", cwd=tmp_path).stdout.decode().splitlines()
    places = [line.split(": ")[0] for line in text]
    assert len(run["results"]) == len(places) >= 3
    source = (tmp_path / "nb.ipynb").read_text(encoding="utf-8")
    file_lines = source.split("\n")
    cells = json.loads(source)["cells"]
    replacements = []
    for result, place in zip(run["results"], places):
        location = result["locations"][0]
        props = location["properties"]
        assert place == f"nb.ipynb:cell {props['cell']}:{props['startLine']}:{props['startColumn']}"
        # The region is in the .ipynb file's own text: the JSON string holding the cell's line,
        # its columns those of the escaped characters there.
        span = region(result)
        assert span["startLine"] == span["endLine"]
        in_file = file_lines[span["startLine"] - 1][span["startColumn"] - 1:span["endColumn"] - 1]
        cell_line = "".join(cells[props["cell"] - 1]["source"]).splitlines()[props["startLine"] - 1]
        assert json.loads(f'"{in_file}"') == cell_line[props["startColumn"] - 1:props["endColumn"] - 1]
        assert len(in_file) > props["endColumn"] - props["startColumn"]  # escaped quotes: the columns differ
        replacements += result["fixes"][0]["artifactChanges"][0]["replacements"]
    # The cells that could not be read are notes, placed at their cell's first line in the file.
    [invocation] = run["invocations"]
    assert invocation["executionSuccessful"] is True
    notes = invocation["toolExecutionNotifications"]
    assert {n["level"] for n in notes} == {"note"}
    for note in notes:
        cell = note["locations"][0]["properties"]["cell"]
        note_line = file_lines[note["locations"][0]["physicalLocation"]["region"]["startLine"] - 1]
        assert json.loads(note_line.strip().rstrip(",")) == cells[cell - 1]["source"][0]
    # Each fix is an edit of the notebook's own text; together they make the fixed notebook.
    expected = Case(folder / "magics_and_other_rules.ipynb").fully_fixed.read_text(encoding="utf-8")
    assert apply_replacements(source, replacements) == expected


def test_a_notebook_cell_saved_as_one_string_with_unicode_escapes(tmp_path, run_cli, validator):
    # Not Jupyter's layout (a list of lines), but valid: the source is one JSON string, with its
    # newlines and a non-ASCII letter escaped, so the cell's columns and the file's differ.
    code = ("import torch\n# caf\u00e9 \U0001F600\nfrom torch.utils.data import DataLoader\n"
            'l = DataLoader(range(8), shuffle=True, generator=torch.Generator(device="cuda"))\n')
    notebook = ('{"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# title"},\n'
                ' {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null, "source": '
                + json.dumps(code, ensure_ascii=True) + '}],\n'
                ' "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n')
    (tmp_path / "one.ipynb").write_text(notebook, encoding="utf-8")
    proc = run_cli("--output-format", "sarif", "one.ipynb", cwd=tmp_path)
    [result] = valid_log(proc, validator)["runs"][0]["results"]
    assert result["locations"][0]["properties"]["cell"] == 2
    span = region(result)
    line = notebook.split("\n")[span["startLine"] - 1]
    assert span["startLine"] == 2
    assert line[span["startColumn"] - 1:span["endColumn"] - 1] == 'torch.Generator(device=\\"cuda\\")'


def fingerprints(log: dict) -> list[tuple[str, str, str]]:
    return [(uri(r), r["ruleId"], r["partialFingerprints"]["primaryLocationLineHash"]) for r in log["runs"][0]["results"]]


def test_fingerprints_survive_lines_inserted_above_and_tell_equal_lines_apart(tmp_path, run_cli, validator):
    tree = buggy_tree(tmp_path)
    before = valid_log(run_cli("--output-format", "sarif", "cases", cwd=tree), validator)
    hashes = fingerprints(before)
    assert all(re.fullmatch(r"[0-9a-f]{16}:[1-9][0-9]*", h) for _, _, h in hashes)
    assert len(set(hashes)) == len(hashes)  # equal findings on equal lines get :1, :2, ...
    # Lines inserted above every finding move them all, and change no fingerprint.
    for path in (tree / "cases").rglob("*.py"):
        path.write_text("# a comment added above\n\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    after = valid_log(run_cli("--output-format", "sarif", "cases", cwd=tree), validator)
    assert fingerprints(after) == hashes
    assert [region(r)["startLine"] for r in after["runs"][0]["results"]] == \
        [region(r)["startLine"] + 2 for r in before["runs"][0]["results"]]
    # A file holding the same pitfall twice, on lines that read the same.
    line = '    g = torch.Generator(device="cuda")\n'
    body = line + "    return DataLoader(range(8), shuffle=True, generator=g)\n"
    twice = "import torch\nfrom torch.utils.data import DataLoader\n\n\ndef a():\n" + body + "\n\ndef b():\n" + body
    (tmp_path / "twice.py").write_text(twice, encoding="utf-8")
    log = valid_log(run_cli("--output-format", "sarif", "twice.py", cwd=tmp_path), validator)
    [(_, _, first), (_, _, second)] = [f for f in fingerprints(log) if f[1] == "DDP002"]
    assert first.split(":")[0] == second.split(":")[0] and (first[-2:], second[-2:]) == (":1", ":2")
    # Editing the finding's own line makes it another finding (and the other one the only one).
    (tmp_path / "twice.py").write_text(twice.replace(line, line.replace("g =", "g  ="), 1), encoding="utf-8")
    edited = [f[2] for f in fingerprints(valid_log(run_cli("--output-format", "sarif", "twice.py", cwd=tmp_path),
                                                    validator)) if f[1] == "DDP002"]
    assert edited[0].split(":")[0] != first.split(":")[0] and edited[1] == first


def test_uris_are_relative_to_the_git_root_when_run_from_a_subfolder(tmp_path, run_cli, validator):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    sub = tmp_path / "project" / "src"
    sub.mkdir(parents=True)
    shutil.copy(FIXTURES / "cuda-generator" / "seed_pattern.py", sub / "train.py")
    (tmp_path / "other.py").write_bytes((sub / "train.py").read_bytes())
    proc = run_cli("--output-format", "sarif", "train.py", "../../other.py", cwd=sub)
    run = valid_log(proc, validator)["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]] == [
        {"uri": "other.py", "uriBaseId": "%SRCROOT%"}, {"uri": "project/src/train.py", "uriBaseId": "%SRCROOT%"}]
    # The text format still names files from the current folder, as editors and terminals want.
    assert run_cli("--check", "train.py", cwd=sub).stdout.decode().startswith("train.py:7:5: DDP002")


def test_a_path_outside_the_current_directory_is_an_absolute_file_uri(tmp_path, run_cli, validator):
    shutil.copy(FIXTURES / "cuda-generator" / "seed_pattern.py", tmp_path / "train.py")
    (tmp_path / "elsewhere").mkdir()
    proc = run_cli("--output-format", "sarif", tmp_path / "train.py", cwd=tmp_path / "elsewhere")
    [result] = valid_log(proc, validator)["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": (tmp_path / "train.py").resolve().as_uri()}


def test_sarif_goes_with_check_or_write_only(tmp_path, run_cli):
    shutil.copy(FIXTURES / "cuda-generator" / "seed_pattern.py", tmp_path / "train.py")
    proc = run_cli("--output-format", "sarif", "--diff", "train.py", cwd=tmp_path)
    assert proc.returncode == 2 and b"goes with --check or --write" in proc.stderr
