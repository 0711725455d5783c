"""``ddpfix lsp``: the real server over stdio, driven by a minimal JSON-RPC client (lsp_client.py).

What it shows must be what the CLI says about the same file, and what its edits make must be what
``ddpfix --write`` writes: the server is a front-end over the same engine.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import FIXTURES, ROOT, ddpfix_executable
from lsp_client import TIMEOUT, LspClient, apply_edits, edits_of

needs_pygls = pytest.mark.skipif(importlib.util.find_spec("pygls") is None, reason="needs the lsp extra (pygls)")

BUGGY = '''\
import lightning as L
import torch
from torch.utils.data import DataLoader


class Model(L.LightningModule):
    def training_step(self, batch, batch_idx):
        loss = self.model(batch).sum()
        if self.trainer.is_global_zero:
            self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.model(batch).sum(), on_epoch=True)

    def on_validation_epoch_end(self):
        if self.trainer.is_global_zero:
            torch.distributed.barrier()

    def train_dataloader(self):
        return DataLoader(self.data, shuffle=True, generator=torch.Generator(device="cuda"))
'''
FIXABLE_IN_BUGGY = ["DDP003", "DDP004", "DDP002"]  # in the file's order; DDP005 has no safe rewrite


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "proj"
    folder.mkdir()
    return folder


@pytest.fixture
def start_server(tmp_path):
    clients = []

    def start(capabilities: dict | None = None, root=None) -> LspClient:
        client = LspClient(tmp_path, tmp_path / f"server{len(clients)}.log")
        clients.append(client)
        client.initialize(root or tmp_path, capabilities)
        return client

    yield start
    for client in clients:
        client.close()


@pytest.fixture
def server(start_server):
    return start_server()


# --- what the CLI says about the same file ----------------------------------------------------


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([ddpfix_executable(), *map(str, args)], check=False, capture_output=True, timeout=120)


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def cli_diagnostics(path, encoding: str = "utf-16") -> list[tuple]:
    """``ddpfix --check`` findings of ``path`` as (code, start, end) in LSP positions."""
    lines = path.read_text(encoding="utf-8").splitlines()
    units = utf16 if encoding == "utf-16" else lambda text: len(text.encode(encoding))

    def position(line: int, column: int) -> tuple[int, int]:
        return line - 1, units(lines[line - 1][: column - 1])

    records = json.loads(run_cli("--check", "--output-format", "json", path).stdout)
    return [(r["code"], position(r["line"], r["column"]), position(r["end_line"], r["end_column"])) for r in records]


def cli_written(path, tmp_path, *flags: str) -> str:
    """What ``ddpfix --write`` makes of ``path`` (run on a copy beside it, so the same config applies)."""
    copy = path.with_name("cli_copy_" + path.name)
    shutil.copyfile(path, copy)
    run_cli("--write", *flags, copy)
    with open(copy, encoding="utf-8", newline="") as handle:
        return handle.read()


def as_tuples(diagnostics: list[dict]) -> list[tuple]:
    def where(position: dict) -> tuple[int, int]:
        return position["line"], position["character"]

    return [(d["code"], where(d["range"]["start"]), where(d["range"]["end"])) for d in diagnostics]


def write(path, text: str) -> str:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    return text


def quick_fixes(actions: list[dict]) -> list[dict]:
    """The fixes offered (the quickfix actions but "Disable DDPnnn for this line")."""
    return [action for action in actions if action["kind"] == "quickfix" and not action["title"].startswith("Disable ")]


def silencers(actions: list[dict]) -> list[dict]:
    """The "Disable DDPnnn for this line" actions."""
    return [action for action in actions if action["kind"] == "quickfix" and action["title"].startswith("Disable ")]


FIX_TITLE = re.compile(r"(DDP\d+)( \(unsafe fix, review it\))?: (.+)")


def fix_all(actions: list[dict]) -> dict | None:
    """The "fix all" action (safe fixes only); None where no safe fix exists."""
    found = [action for action in actions if action["kind"] == "source.fixAll.ddpfix"]
    assert len(found) <= 1
    return found[0] if found else None


def assert_alive(client: LspClient) -> None:
    """The server still answers a request (a code action for a document nobody opened: none)."""
    response = client.request("textDocument/codeAction", {
        "textDocument": {"uri": "file:///nowhere/never_opened.py"},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": []},
    })
    assert response.get("result") in (None, []), response
    assert client.process.poll() is None


# --- the protocol ---------------------------------------------------------------------------------


@needs_pygls
def test_initialize_announces_sync_and_code_actions(tmp_path):
    client = LspClient(tmp_path, tmp_path / "server.log")
    try:
        result = client.initialize(tmp_path)
    finally:
        client.close()
    capabilities = result["capabilities"]
    assert result["serverInfo"]["name"] == "ddpfix"
    assert capabilities["positionEncoding"] == "utf-16"
    sync = capabilities["textDocumentSync"]
    assert sync["openClose"] is True and sync["change"] == 2 and sync["save"]  # 2: incremental
    assert set(capabilities["codeActionProvider"]["codeActionKinds"]) == {
        "quickfix", "source.fixAll.ddpfix", "notebook.source.fixAll.ddpfix"}
    assert capabilities["codeActionProvider"]["resolveProvider"] is True
    assert "notebookDocumentSync" not in capabilities  # this client did not say it handles notebooks


@needs_pygls
def test_diagnostics_are_the_cli_findings(server, project):
    path = project / "train.py"
    write(path, BUGGY)
    published = server.open(path, BUGGY)
    assert published["version"] == 1
    assert as_tuples(published["diagnostics"]) == cli_diagnostics(path)
    for diagnostic in published["diagnostics"]:
        assert diagnostic["severity"] == 2 and diagnostic["source"] == "ddpfix"
        assert diagnostic["codeDescription"]["href"].endswith(f"docs/rules/{diagnostic['code']}.md")
    by_code = {d["code"]: d for d in published["diagnostics"]}
    assert by_code["DDP003"]["data"]["fix"] == ["DDP003", 10, 13]
    assert by_code["DDP005"]["data"]["fix"] is None  # no safe rewrite, no quick fix


@needs_pygls
@pytest.mark.parametrize("fixture", ["rank-gated-log/guard_spellings.py", "cuda-generator/seed_pattern.py"])
def test_fixture_files_match_the_cli(server, project, tmp_path, fixture):
    path = project / "case.py"
    shutil.copyfile(FIXTURES / fixture, path)
    text = path.read_text(encoding="utf-8")
    published = server.open(path, text)
    assert published["diagnostics"] and as_tuples(published["diagnostics"]) == cli_diagnostics(path)
    actions = server.code_actions(path.as_uri())
    edits, _ = edits_of(fix_all(actions), path.as_uri())
    # An editor buffer is part of a project, as a file named alone is: both apply the fixes that
    # are safe on what the file itself shows.
    assert apply_edits(text, edits) == cli_written(path, tmp_path)


@needs_pygls
def test_each_quick_fix_and_fix_all_give_the_cli_result(server, project, tmp_path):
    path = project / "train.py"
    write(path, BUGGY)
    expected = cli_written(path, tmp_path)  # the safe fixes
    everything = cli_written(path, tmp_path, "--unsafe-fixes")
    uri = path.as_uri()
    server.open(path, BUGGY)
    actions = server.code_actions(uri)
    titles = [FIX_TITLE.fullmatch(a["title"]) for a in quick_fixes(actions)]
    assert [t.group(1) for t in titles] == FIXABLE_IN_BUGGY
    safe = 0
    for action, title in zip(quick_fixes(actions), titles):
        is_safe = action["diagnostics"][0]["data"]["applicability"] == "safe"
        safe += is_safe
        # An unsafe fix says so and is never preferred (editors apply a preferred fix on one key).
        assert action["isPreferred"] is is_safe and (title.group(2) is None) is is_safe
        assert edits_of(action, uri)[1] == 1  # for the version it was computed on

    if safe:
        assert fix_all(actions)["title"] == "Fix all DDP issues"
    edits, version = edits_of(fix_all(actions), uri)
    assert apply_edits(BUGGY, edits) == expected and (not edits or version == 1)
    assert len(edits) <= safe  # one edit per changed place, not one span from the first to the last

    # One quick fix at a time, each on the document the previous one left: the same result.
    text, version = BUGGY, 1
    while True:
        fixes = quick_fixes(server.code_actions(uri))
        if not fixes:
            break
        text = apply_edits(text, edits_of(fixes[0], uri)[0])
        version += 1
        server.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}],
        })
    assert version == 1 + len(FIXABLE_IN_BUGGY)
    assert text == everything  # every quick fix, safe or unsafe, picked by hand
    left = server.diagnostics(uri, version)["diagnostics"]
    assert [d["code"] for d in left] == ["DDP005"]


@needs_pygls
def test_code_actions_only_for_findings_in_the_range_and_of_the_kind_asked(server, project):
    path = project / "train.py"
    uri = path.as_uri()
    published = server.open(path, write(path, BUGGY))
    ddp004 = next(d for d in published["diagnostics"] if d["code"] == "DDP004")
    line = ddp004["range"]["start"]["line"]
    actions = server.code_actions(uri, (line, 10), (line, 10))
    assert [re.search(r"DDP\d+", a["title"]).group() for a in quick_fixes(actions)] == ["DDP004"]
    assert {a["kind"] for a in server.code_actions(uri, only=["source.fixAll"])} <= {"source.fixAll.ddpfix"}
    assert {a["kind"] for a in server.code_actions(uri, only=["quickfix"])} == {"quickfix"}
    ddp005_line = next(d for d in published["diagnostics"] if d["code"] == "DDP005")["range"]["start"]["line"]
    assert quick_fixes(server.code_actions(uri, (ddp005_line, 0), (ddp005_line, 1))) == []


@needs_pygls
def test_changes_are_debounced_and_the_latest_version_wins(server, project):
    path = project / "train.py"
    uri = path.as_uri()
    server.open(path, write(path, BUGGY))
    # Three quick edits: insert the noqa comment letter by letter... in three versions.
    line = BUGGY.splitlines().index('            self.log("train_loss", loss)')
    end = len('            self.log("train_loss", loss)')
    for version, piece in enumerate(["  # no", "qa: DD", "P003"], start=2):
        server.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": line, "character": end}, "end": {"line": line, "character": end}},
                                "text": piece}],
        })
        end += len(piece)
    published = server.diagnostics(uri)
    assert published["version"] == 4
    assert "DDP003" not in [d["code"] for d in published["diagnostics"]]
    later = [m for m in server.drain(1.0) if m.get("method") == "textDocument/publishDiagnostics"]
    assert later == []  # versions 2 and 3 were never published, nor 4 twice

    # A code action asked right after an edit is computed on that edit's version.
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 5}, "contentChanges": [{"text": BUGGY}]})
    actions = server.code_actions(uri)
    assert {edits_of(action, uri)[1] for action in actions} == {5}
    assert "DDP003" in " ".join(a["title"] for a in actions)


@needs_pygls
def test_save_publishes_at_once_and_close_clears(server, project):
    path = project / "train.py"
    uri = path.as_uri()
    server.open(path, write(path, BUGGY))
    server.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert len(server.diagnostics(uri, 1)["diagnostics"]) == 4  # published again, no edit needed
    server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert server.diagnostics(uri)["diagnostics"] == []
    assert server.code_actions(uri) == []


# --- settings and suppressions, as in the CLI ---------------------------------------------------------


@needs_pygls
def test_noqa_is_respected(server, project):
    text = BUGGY.replace('self.log("train_loss", loss)', 'self.log("train_loss", loss)  # noqa: DDP003')
    path = project / "train.py"
    published = server.open(path, write(path, text))
    codes = [d["code"] for d in published["diagnostics"]]
    assert "DDP003" not in codes and "DDP004" in codes
    assert as_tuples(published["diagnostics"]) == cli_diagnostics(path)
    assert not any("DDP003" in a["title"] for a in server.code_actions(path.as_uri()))


@needs_pygls
def test_pyproject_beside_the_file_is_respected(server, project, tmp_path):
    (project / "pyproject.toml").write_text('[tool.ddpfix]\nignore = ["DDP004"]\nlog-mode = "sync-dist"\n')
    path = project / "train.py"
    published = server.open(path, write(path, BUGGY))
    codes = [d["code"] for d in published["diagnostics"]]
    assert "DDP004" not in codes and "DDP003" in codes
    assert as_tuples(published["diagnostics"]) == cli_diagnostics(path)
    edits, _ = edits_of(fix_all(server.code_actions(path.as_uri())), path.as_uri())
    assert apply_edits(BUGGY, edits) == cli_written(path, tmp_path)
    [ddp003] = [a for a in quick_fixes(server.code_actions(path.as_uri())) if "DDP003" in a["title"]]
    fixed = apply_edits(BUGGY, edits_of(ddp003, path.as_uri())[0])
    assert "sync_dist=True" in fixed and "rank_zero_only" not in fixed  # log-mode reached the rule


@needs_pygls
def test_a_bad_pyproject_is_an_error_diagnostic(server, project):
    (project / "pyproject.toml").write_text('[tool.ddpfix]\nselect = ["NOPE"]\n')
    path = project / "train.py"
    published = server.open(path, write(path, BUGGY))
    [diagnostic] = published["diagnostics"]
    assert diagnostic["severity"] == 1 and "pyproject.toml" in diagnostic["message"] and "NOPE" in diagnostic["message"]
    assert_alive(server)


# --- positions ---------------------------------------------------------------------------------------


NON_ASCII = BUGGY.replace('            self.log("train_loss", loss)', '            note = "é🎉"; self.log("train_loss", loss)')


@needs_pygls
@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
def test_columns_count_the_clients_code_units(start_server, project, tmp_path, encoding):
    capabilities = {"workspace": {"workspaceEdit": {"documentChanges": True}}}
    if encoding == "utf-8":
        capabilities["general"] = {"positionEncodings": ["utf-8", "utf-16"]}
    client = start_server(capabilities)
    path = project / "train.py"
    published = client.open(path, write(path, NON_ASCII))
    line = next(line for line in NON_ASCII.splitlines() if "note =" in line)
    prefix = line[: line.index("self.log")]
    ddp003 = next(d for d in published["diagnostics"] if d["code"] == "DDP003")
    expected = utf16(prefix) if encoding == "utf-16" else len(prefix.encode("utf-8"))
    assert ddp003["range"]["start"]["character"] == expected != len(prefix)
    assert as_tuples(published["diagnostics"]) == cli_diagnostics(path, encoding)
    actions = client.code_actions(path.as_uri())
    fix = next(a for a in quick_fixes(actions) if "DDP003" in a["title"])
    single = apply_edits(NON_ASCII, edits_of(fix, path.as_uri())[0], encoding)
    assert 'note = "é🎉"; self.log("train_loss", loss, rank_zero_only=True)' in single
    everything = apply_edits(NON_ASCII, edits_of(fix_all(actions), path.as_uri())[0], encoding)
    assert everything == cli_written(path, tmp_path)


@needs_pygls
def test_crlf_documents_keep_their_line_ends(server, project, tmp_path):
    text = BUGGY.replace("\n", "\r\n")
    path = project / "train.py"
    published = server.open(path, write(path, text))
    assert as_tuples(published["diagnostics"]) == cli_diagnostics(path)
    actions = server.code_actions(path.as_uri())
    expected = cli_written(path, tmp_path)
    assert "\r\n" in expected and "\n" not in expected.replace("\r\n", "")
    assert apply_edits(text, edits_of(fix_all(actions), path.as_uri())[0]) == expected
    for action in quick_fixes(actions):
        fixed = apply_edits(text, edits_of(action, path.as_uri())[0])
        assert "\n" not in fixed.replace("\r\n", "")


# --- robustness --------------------------------------------------------------------------------------


@needs_pygls
def test_malformed_messages_do_not_stop_the_server(server, project):
    server.send_raw(b"{this is not json")
    assert_alive(server)
    server.send_raw(b'["a", "list", "not", "a", "message"]')
    assert_alive(server)

    unknown = server.request("ddpfix/noSuchMethod", {})
    assert unknown["error"]["code"] == -32601
    server.notify("ddpfix/noSuchNotification", {})
    assert_alive(server)

    bad_params = server.request("textDocument/codeAction", {"textDocument": 5})
    assert bad_params["error"]["code"] == -32602
    no_params = server.exchange({"jsonrpc": "2.0", "id": "no-params", "method": "textDocument/codeAction"})
    assert no_params["error"]["code"] == -32602
    assert_alive(server)

    server.notify("textDocument/didOpen", {"textDocument": {"uri": 42}})
    server.notify("textDocument/didChange", {
        "textDocument": {"uri": (project / "never_opened.py").as_uri(), "version": 2}, "contentChanges": [{"text": "x"}],
    })
    assert_alive(server)


@needs_pygls
def test_a_document_with_a_syntax_error_is_an_error_diagnostic(server, project):
    text = "import lightning as L\n\nclass M(L.LightningModule):\n    def training_step(self, batch:\n        self.log('x', 1)\n"
    path = project / "broken.py"
    published = server.open(path, write(path, text))
    [diagnostic] = published["diagnostics"]
    assert diagnostic["code"] == "E999" and diagnostic["severity"] == 1
    assert diagnostic["range"]["start"]["line"] in (3, 4)
    assert server.code_actions(path.as_uri()) == []
    assert_alive(server)


@needs_pygls
def test_a_code_action_for_an_unopened_document_gets_none(server):
    assert_alive(server)


@needs_pygls
def test_shutdown_then_exit_ends_the_process_with_0(server):
    response = server.request("shutdown", None)
    assert "error" not in response and response["result"] is None
    server.notify("exit", None)
    assert server.process.wait(timeout=TIMEOUT) == 0


@needs_pygls
def test_exit_without_shutdown_ends_the_process_with_1(server):
    server.notify("exit", None)
    assert server.process.wait(timeout=TIMEOUT) == 1


# --- the entry point ---------------------------------------------------------------------------------


def test_without_pygls_it_says_how_to_install_it(tmp_path):
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "pygls.py").write_text("raise ModuleNotFoundError(\"No module named 'pygls'\", name='pygls')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(shadow) + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([ddpfix_executable(), "lsp"], check=False, capture_output=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert b"pip install 'ddpfix[lsp]'" in proc.stderr


@needs_pygls
def test_python_dash_m_and_arguments(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ddpfix", "lsp", "--help"], check=False, capture_output=True, timeout=60)
    assert proc.returncode == 0 and b"Usage: ddpfix lsp" in proc.stdout
    proc = subprocess.run([ddpfix_executable(), "lsp", "--tcp"], check=False, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and b"--tcp" in proc.stderr


def test_readme_editor_settings_start_this_server():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Language server"):]
    settings = json.loads(section[section.index("```json") + len("```json"):section.index("```", section.index("```json") + 7)])
    assert [settings["glspc.server.command"], *settings["glspc.server.commandArguments"]] == ["ddpfix", "lsp"]
    assert settings["glspc.server.languageId"] == ["python"]
    assert "source.fixAll.ddpfix" in settings["[python]"]["editor.codeActionsOnSave"]
    assert 'cmd = { "ddpfix", "lsp" }' in section and "vim.lsp.start" in section and "pyproject.toml" in section


# --- the arithmetic, in-process ----------------------------------------------------------------------


def snapshot_of(text: str, result=None, encoding: str = "utf-16"):
    from ddpfix.findings import FileResult
    from ddpfix.lsp_document import Settings, Snapshot, TextView

    units = utf16 if encoding == "utf-16" else (lambda chunk: len(chunk.encode(encoding)))
    data = text.encode("utf-8")
    view = TextView("file:///t.py", 1, text, units)
    return Snapshot("file:///t.py", 1, {None: view}, data, "utf-8", Settings(), result or FileResult("t.py", data))


def as_dicts(edits) -> list[dict]:
    return [{"range": {"start": {"line": e.range.start.line, "character": e.range.start.character},
                       "end": {"line": e.range.end.line, "character": e.range.end.character}}, "newText": e.new_text}
            for e in edits]


FIXTURE_PAIRS = sorted(FIXTURES.rglob("*.expected.py"))


@needs_pygls
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
def test_edits_turn_every_fixture_into_its_expected_output(newline, encoding):
    for expected_path in FIXTURE_PAIRS:
        before = expected_path.with_name(expected_path.name.replace(".expected.py", ".py")).read_text(encoding="utf-8")
        after = expected_path.read_text(encoding="utf-8")
        # Non-ASCII at the start of every line moves every column the edits name.
        before, after = (("# é🎉\n" + t).replace("\n", newline) for t in (before, after))
        snapshot = snapshot_of(before, encoding=encoding)
        edits = snapshot.text_edits(snapshot.changes_to(after.encode("utf-8"))).get("file:///t.py", [])
        assert apply_edits(before, as_dicts(edits), encoding) == after, expected_path


def test_line_diff_keeps_each_edit_to_its_place():
    """The diff behind every edit is linear (``text_diff``): the edits of a fix spread over a big
    file are one per changed place, whatever the repeated lines between them, and turn the text
    into the new one exactly."""
    from ddpfix.text_diff import line_hunks

    block = ["    def step(self):\n", "        x = 1\n", "        return x\n", "\n"]
    old = [line for n in range(300) for line in [f"class M{n}:\n", *block]]
    new = list(old)
    for n in range(0, 300, 7):
        new[n * 5 + 2] = "        x = 2\n"
    new.insert(10, "# added\n")
    del new[700]
    hunks = line_hunks(old, new)
    rebuilt, at = [], 0
    for i1, i2, j1, j2 in hunks:
        rebuilt += old[at:i1] + new[j1:j2]
        at = i2
    assert rebuilt + old[at:] == new
    assert len(hunks) == len(range(0, 300, 7)) + 2 and all(i2 - i1 <= 1 for i1, i2, _, _ in hunks)


@needs_pygls
def test_snapshot_edits_of_a_spread_out_fix_are_one_per_place():
    text = "".join(f"class M{n}:\n    x = 'cuda:0'\n\n" for n in range(200))
    after = text.replace("'cuda:0'", "self.device")
    snapshot = snapshot_of(text)
    changes = snapshot.changes_to(after.encode())
    assert len(changes) == 200 and {text[c.start:c.end] for c in changes} == {"'cuda:0'"}
    assert apply_edits(text, as_dicts(snapshot.text_edits(changes)["file:///t.py"])) == after


@needs_pygls
def test_problems_without_a_place_are_marked_on_the_first_line():
    from ddpfix.findings import FileResult, Problem

    text = "x = 1  # é\ny = 2\n"
    result = FileResult("t.py", text.encode(), problems=[Problem("t.py", "DDP003", "internal error: boom"),
                                                          Problem("t.py", "E999", "cannot parse", 2, 3)])
    first, second = snapshot_of(text, result).diagnostics()["file:///t.py"]
    assert (first.code, first.severity, first.range.start.line, first.range.end.character) == ("DDP003", 1, 0, 10)
    assert (second.code, second.range.start.line, second.range.start.character, second.range.end.character) == ("E999", 1, 2, 5)
