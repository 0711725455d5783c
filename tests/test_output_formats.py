"""--output-format json, json-lines, github and gitlab, through the real command line."""

from __future__ import annotations

import json
import shutil
import subprocess

import jsonschema

from conftest import FIXTURES
from fixture_cases import Case


def apply_edits(text: str, edits: list[dict]) -> str:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    for edit in sorted(edits, key=lambda e: (e["line"], e["column"]), reverse=True):
        start = offsets[edit["line"] - 1] + edit["column"] - 1
        end = offsets[edit["end_line"] - 1] + edit["end_column"] - 1
        text = text[:start] + edit["content"] + text[end:]
    return text


def test_json_is_one_valid_array_whose_edits_reproduce_the_fix(tmp_path, run_cli):
    shutil.copytree(FIXTURES / "cuda-generator", tmp_path / "cases")
    proc = run_cli("--output-format", "json", "cases", cwd=tmp_path)
    assert proc.returncode == 1
    records = json.loads(proc.stdout)
    keys = {"path", "line", "column", "end_line", "end_column", "code", "name", "message", "detail", "fixable", "applicability",
            "unsafe_reason", "fixed", "suppressed", "cell", "fix"}
    assert records and all(set(r) == keys for r in records)
    assert not any(r["fixed"] for r in records)  # nothing was written
    single = [r for r in records if r["path"] == "cases/seed_pattern.py"]
    assert len(single) == 1 and single[0]["fixable"] and len(single[0]["fix"]) == 1
    assert single[0]["applicability"] in ("safe", "unsafe")
    source = (tmp_path / "cases" / "seed_pattern.py").read_text()
    expected = Case(FIXTURES / "cuda-generator" / "seed_pattern.py").fully_fixed.read_text()
    assert apply_edits(source, single[0]["fix"]) == expected
    manual = [r for r in records if r["path"] == "cases/variable_device.py"]
    assert manual and not manual[0]["fixable"] and manual[0]["fix"] == [] and manual[0]["applicability"] is None


def test_json_edits_count_code_points_of_the_source_as_python_reads_it(tmp_path, run_cli):
    # A BOM and "é" before the fix on line 1: a plain UTF-8 decode would place the edit one column
    # late; the Latin-1 file's "é" is one byte, which UTF-8 would turn into a replacement character.
    source = (
        'import torch; gé = torch.Generator(device="cuda")\n'
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(range(8), shuffle=True, generator=gé)\n"
    )
    expected = source.replace('torch.Generator(device="cuda")', "torch.Generator()")
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + source.encode())
    latin = "# -*- coding: latin-1 -*-\n" + source.replace("gé", "g").replace("(8)", '(8), name="café"', 1)
    (tmp_path / "latin.py").write_bytes(latin.encode("latin-1"))
    records = json.loads(run_cli("--output-format", "json", "bom.py", "latin.py", cwd=tmp_path).stdout)
    by_path = {r["path"]: r for r in records}
    assert apply_edits(source, by_path["bom.py"]["fix"]) == expected
    latin_expected = latin.replace('torch.Generator(device="cuda")', "torch.Generator()")
    assert apply_edits(latin, by_path["latin.py"]["fix"]) == latin_expected


def test_json_for_no_files_and_for_errors(tmp_path, run_cli):
    (tmp_path / "ok.py").write_text("x = 1\n")
    assert json.loads(run_cli("--output-format", "json", "ok.py", cwd=tmp_path).stdout) == []
    (tmp_path / "bad.py").write_text("from torch.utils.data import DataLoader\ng = torch.Generator(\n")
    proc = run_cli("--output-format", "json", "bad.py", cwd=tmp_path)
    [record] = json.loads(proc.stdout)
    assert proc.returncode == 2 and record["code"] == "E999" and record["line"] == 2


def test_github_annotations(tmp_path, run_cli):
    shutil.copy(FIXTURES / "cuda-generator" / "seed_pattern.py", tmp_path / "train.py")
    proc = run_cli("--output-format", "github", "train.py", cwd=tmp_path)
    [line] = proc.stdout.decode().splitlines()
    assert line.startswith("::warning file=train.py,line=7,endLine=7,col=5,endColumn=35,title=DDP002::CUDA generator")
    assert run_cli("--output-format", "github", "--diff", "train.py", cwd=tmp_path).returncode == 2


def test_github_spans_over_several_lines_give_lines_only(tmp_path, run_cli):
    # GitHub takes col/endColumn only on an annotation within one line.
    shutil.copy(FIXTURES / "cuda-generator" / "comments_in_call.py", tmp_path / "train.py")
    lines = run_cli("--output-format", "github", "train.py", cwd=tmp_path).stdout.decode().splitlines()
    assert [line.split("::")[1] for line in lines] == [
        "warning file=train.py,line=5,endLine=7,title=DDP002",
        "warning file=train.py,line=8,endLine=10,title=DDP002",
    ]


def test_github_escapes_properties_and_message(tmp_path, run_cli):
    # In a property value "%", ":" and "," are escaped (they would end it); in the message only "%"
    # (and CR, LF), as GitHub's workflow commands read them.
    source = (FIXTURES / "rank-gated-log" / "early_return.py").read_text()
    (tmp_path / "odd,name:1%.py").write_text(source.replace('"val_summary"', '"val%summary:a,b"'))
    [line] = run_cli("--output-format", "github", ".", cwd=tmp_path).stdout.decode().splitlines()
    properties, message = line.split("::")[1:]
    assert properties.startswith("warning file=odd%2Cname%3A1%25.py,line=")
    # The short message, then (after an escaped newline) the explanation.
    assert message.startswith("self.log('val%25summary:a,b') under a rank guard")
    assert "%0Aself.log('val%25summary:a,b') runs under the rank guard" in message
    assert "\r" not in line and "\n" not in line


def test_github_and_gitlab_name_files_from_the_git_root(tmp_path, run_cli):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "pkg").mkdir()
    shutil.copy(FIXTURES / "cuda-generator" / "seed_pattern.py", tmp_path / "pkg" / "train.py")
    github = run_cli("--output-format", "github", ".", cwd=tmp_path / "pkg").stdout.decode()
    assert github.startswith("::warning file=pkg/train.py,line=7,")
    [issue] = json.loads(run_cli("--output-format", "gitlab", ".", cwd=tmp_path / "pkg").stdout)
    assert issue["location"] == {"path": "pkg/train.py", "lines": {"begin": 7}}
    # json keeps the current folder's view, as the text format.
    [record] = json.loads(run_cli("--output-format", "json", ".", cwd=tmp_path / "pkg").stdout)
    assert record["path"] == "train.py"


# GitLab's Code Quality report, as docs.gitlab.com/ci/testing/code_quality describes it: an array of
# issues, each with these fields (GitLab publishes no JSON schema for it; this is the documented one).
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "minLength": 1, "not": {"pattern": "^(/|\\./)"}},
                    "lines": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {"begin": {"type": "integer", "minimum": 1}, "end": {"type": "integer", "minimum": 1}},
                    },
                },
            },
        },
    },
}


def valid_gitlab(proc) -> list[dict]:
    issues = json.loads(proc.stdout)
    errors = list(jsonschema.Draft7Validator(GITLAB_SCHEMA).iter_errors(issues))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    assert len({issue["fingerprint"] for issue in issues}) == len(issues)  # GitLab keeps one issue per fingerprint
    return issues


def test_gitlab_code_quality_report(tmp_path, run_cli):
    shutil.copytree(FIXTURES / "cuda-generator", tmp_path / "cases", ignore=shutil.ignore_patterns("*.expected.py"))
    (tmp_path / "cases" / "bad.py").write_text("from torch.utils.data import DataLoader\ng = torch.Generator(\n")
    proc = run_cli("--output-format", "gitlab", "cases", cwd=tmp_path)
    assert proc.returncode == 2  # bad.py
    issues = valid_gitlab(proc)
    records = json.loads(run_cli("--output-format", "json", "cases", cwd=tmp_path).stdout)
    findings = [r for r in records if r["code"].startswith("DDP")]
    assert [(i["location"]["path"], i["location"]["lines"]["begin"], i["check_name"]) for i in issues[1:]] == \
        [(r["path"], r["line"], r["code"]) for r in findings]
    assert all(i["severity"] == "major" and i["description"].startswith(i["check_name"] + " ") for i in issues[1:])
    assert issues[0]["check_name"] == "E999" and issues[0]["severity"] == "critical"
    # The short message in the description, the explanation (json's detail) in Code Climate's content.
    assert [i.get("content", {}).get("body") for i in issues[1:]] == [r["detail"] for r in findings]
    assert any(r["detail"] for r in findings)
    assert issues[0]["location"] == {"path": "cases/bad.py", "lines": {"begin": 2}}
    spans = {(r["path"], r["line"]): r["end_line"] for r in findings}
    assert any(i["location"]["lines"].get("end") == spans[(i["location"]["path"], i["location"]["lines"]["begin"])]
               for i in issues[1:] if "end" in i["location"]["lines"])
    # Lines added above the findings keep every fingerprint: GitLab sees the same issues, not new ones.
    (tmp_path / "cases" / "bad.py").unlink()
    before = valid_gitlab(run_cli("--output-format", "gitlab", "cases", cwd=tmp_path))
    for path in (tmp_path / "cases").rglob("*.py"):
        path.write_text("# added\n" + path.read_text())
    after = valid_gitlab(run_cli("--output-format", "gitlab", "cases", cwd=tmp_path))
    assert [i["fingerprint"] for i in after] == [i["fingerprint"] for i in before]
    assert [i["location"]["lines"]["begin"] for i in after] == [i["location"]["lines"]["begin"] + 1 for i in before]


def test_gitlab_leaves_out_suppressed_and_written_findings_and_places_notebook_lines(tmp_path, run_cli):
    source = (FIXTURES / "cuda-generator" / "seed_pattern.py").read_text()
    (tmp_path / "quiet.py").write_text(source.replace('device="cuda")', 'device="cuda")  # noqa: DDP002'))
    assert valid_gitlab(run_cli("--output-format", "gitlab", "--show-suppressed", "quiet.py", cwd=tmp_path)) == []
    (tmp_path / "fix.py").write_text(source)
    proc = run_cli("--output-format", "gitlab", "--write", "--unsafe-fixes", "fix.py", cwd=tmp_path)
    assert proc.returncode == 0 and valid_gitlab(proc) == []
    shutil.copy(FIXTURES / "notebook-strategy" / "magics_and_other_rules.ipynb", tmp_path / "nb.ipynb")
    issues = valid_gitlab(run_cli("--output-format", "gitlab", "nb.ipynb", cwd=tmp_path))
    assert [i["check_name"] for i in issues] == ["DDP003", "DDP002", "DDP015"]  # the notes are no issues
    text = (tmp_path / "nb.ipynb").read_text().split("\n")
    assert issues[0]["description"].endswith("(cell 4 line 5)")
    assert 'self.log(\\"train_loss\\", loss)' in text[issues[0]["location"]["lines"]["begin"] - 1]


def test_json_lines_are_the_json_records_one_a_line(tmp_path, run_cli):
    shutil.copytree(FIXTURES / "cuda-generator", tmp_path / "cases")
    (tmp_path / "cases" / "bad.py").write_text("from torch.utils.data import DataLoader\ng = torch.Generator(\n")
    shutil.copy(FIXTURES / "notebook-strategy" / "magics_and_other_rules.ipynb", tmp_path / "cases" / "nb.ipynb")
    proc = run_cli("--output-format", "json-lines", "cases", cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stdout.decode().splitlines()
    records = json.loads(run_cli("--output-format", "json", "cases", cwd=tmp_path).stdout)
    assert len(lines) == len(records) > 10
    assert [json.loads(line) for line in lines] == records
    written = run_cli("--output-format", "json-lines", "--write", "cases", cwd=tmp_path).stdout.decode().splitlines()
    assert any(json.loads(line)["fixed"] for line in written)
    (tmp_path / "ok.py").write_text("x = 1\n")
    assert run_cli("--output-format", "json-lines", "ok.py", cwd=tmp_path).stdout == b""  # no records, no lines


def test_the_json_fields_documented_are_the_fields_written():
    """README's and docs/output-formats.md's JSON field lists name every key a finding has (the
    docs missed `detail`)."""
    import json
    import re
    import subprocess

    from conftest import ROOT, ddpfix_executable

    run = subprocess.run([ddpfix_executable(), "--check", "--output-format", "json",
                          str(ROOT / "fixtures" / "demo" / "train.py")], capture_output=True, text=True)
    keys = set(json.loads(run.stdout)[0])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = next(line for line in readme.splitlines() if line.startswith("| `json` |"))
    assert keys <= set(re.findall(r"[a-z_]+", listed)), keys - set(re.findall(r"[a-z_]+", listed))
    page = (ROOT / "docs" / "output-formats.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| (`[a-z_]+`(?:, `[a-z_]+`)*) \|", page, re.M))
    named = {word for group in documented for word in re.findall(r"`([a-z_]+)`", group)}
    assert keys <= named, keys - named
