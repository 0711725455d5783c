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
import time

import pytest
from conftest import FIXTURES, ROOT, ddpfix_executable
from lsp_client import TIMEOUT, LspClient, apply_edits, edits_of

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


def test_noqa_is_respected(server, project):
    text = BUGGY.replace('self.log("train_loss", loss)', 'self.log("train_loss", loss)  # noqa: DDP003')
    path = project / "train.py"
    published = server.open(path, write(path, text))
    codes = [d["code"] for d in published["diagnostics"]]
    assert "DDP003" not in codes and "DDP004" in codes
    assert as_tuples(published["diagnostics"]) == cli_diagnostics(path)
    assert not any("DDP003" in a["title"] for a in server.code_actions(path.as_uri()))


def test_pyproject_beside_the_file_is_respected(server, project, tmp_path):
    (project / "pyproject.toml").write_text('[tool.ddpfix]\nignore = ["DDP004"]\nlog-mode = "sync-dist"\n')
    path = project / "train.py"
    published = server.open(path, write(path, BUGGY))
    codes = [d["code"] for d in published["diagnostics"]]
    assert "DDP004" not in codes and "DDP003" in codes
    assert as_tuples(published["diagnostics"]) == cli_diagnostics(path)
    edits, _ = edits_of(fix_all(server.code_actions(path.as_uri())), path.as_uri())
    # The server reads the buffer's project with the buffer in its file's place, as the CLI does for
    # stdin named with --stdin-filename (docs/precommit-and-config.md).
    cli = subprocess.run([ddpfix_executable(), "-", "--write", "--stdin-filename", str(path)], cwd=project,
                         input=BUGGY.encode(), capture_output=True, timeout=120).stdout.decode()
    assert apply_edits(BUGGY, edits) == cli
    [ddp003] = [a for a in quick_fixes(server.code_actions(path.as_uri())) if "DDP003" in a["title"]]
    fixed = apply_edits(BUGGY, edits_of(ddp003, path.as_uri())[0])
    assert "sync_dist=True" in fixed and "rank_zero_only" not in fixed  # log-mode reached the rule


def test_the_buffers_project_gives_the_facts_as_for_the_cli(server, project):
    # The pre-commit case in an editor: model.py logs val_loss under a rank guard and train.py's
    # EarlyStopping monitors it. Only the project's facts make the safe fix the move out of the guard
    # with sync_dist=True (rank_zero_only=True would crash the other ranks).
    from test_precommit import MODEL, TRAIN

    (project / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    write(project / "train.py", TRAIN.decode())
    path = project / "model.py"
    published = server.open(path, write(path, MODEL.decode()))
    assert as_tuples(published["diagnostics"]) == cli_diagnostics(path)
    edits, _ = edits_of(fix_all(server.code_actions(path.as_uri())), path.as_uri())
    fixed = apply_edits(MODEL.decode(), edits)
    assert 'self.log("val_loss", loss, sync_dist=True)' in fixed and "rank_zero_only" not in fixed
    cli = subprocess.run([ddpfix_executable(), "-", "--write", "--stdin-filename", str(path)], cwd=project,
                         input=MODEL, capture_output=True, timeout=120).stdout.decode()
    assert fixed == cli


def test_unsaved_edits_in_another_open_file_make_the_project_facts_partial(start_server, project):
    # train.py is open with edits not saved: the disk no longer says what the project monitors, so
    # the move that only its facts make safe is not part of "fix all" (it stays an unsafe quick fix).
    from test_precommit import MODEL, TRAIN

    (project / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    write(project / "train.py", TRAIN.decode())
    path = project / "model.py"
    write(path, MODEL.decode())
    client = start_server()
    client.open(project / "train.py", TRAIN.decode() + "\n# edited, not saved\n")
    client.open(path, MODEL.decode())
    fixed = apply_edits(MODEL.decode(), edits_of(fix_all(client.code_actions(path.as_uri())), path.as_uri())[0])
    assert "sync_dist=True" not in fixed
    # Saved (the same text on disk): the project's facts again.
    client2 = start_server()
    client2.open(project / "train.py", TRAIN.decode())
    client2.open(path, MODEL.decode())
    fixed = apply_edits(MODEL.decode(), edits_of(fix_all(client2.code_actions(path.as_uri())), path.as_uri())[0])
    assert 'self.log("val_loss", loss, sync_dist=True)' in fixed


def test_a_bad_pyproject_is_an_error_diagnostic(server, project):
    (project / "pyproject.toml").write_text('[tool.ddpfix]\nselect = ["NOPE"]\n')
    path = project / "train.py"
    published = server.open(path, write(path, BUGGY))
    [diagnostic] = published["diagnostics"]
    assert diagnostic["severity"] == 1 and "pyproject.toml" in diagnostic["message"] and "NOPE" in diagnostic["message"]
    assert_alive(server)


# --- positions ---------------------------------------------------------------------------------------


NON_ASCII = BUGGY.replace('            self.log("train_loss", loss)', '            note = "é🎉"; self.log("train_loss", loss)')


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


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
def test_incremental_edits_count_the_clients_code_units(start_server, project, encoding):
    """Ranges in didChange are the client's: its code units after non-ASCII text, its line ends
    (\r\n), a line past the end meaning the end. The text the server ends with is the file's."""
    capabilities = {"general": {"positionEncodings": [encoding]}} if encoding == "utf-8" else None
    client = start_server(capabilities)
    path = project / "train.py"
    text = NON_ASCII.replace("\n", "\r\n")
    uri = path.as_uri()
    client.open(path, text)
    index = next(n for n, line in enumerate(text.split("\r\n")) if "note =" in line)
    line = text.split("\r\n")[index]
    units = utf16 if encoding == "utf-16" else (lambda chunk: len(chunk.encode("utf-8")))

    def at(line_number: int, character: int) -> dict:
        return {"start": {"line": line_number, "character": character}, "end": {"line": line_number, "character": character}}

    changes = [
        {"range": at(index, units(line)), "text": "  # 🎉"},  # after "é🎉", in code units
        {"range": {"start": {"line": index, "character": units(line[: line.index("note")])},
                   "end": {"line": index, "character": units(line[: line.index("self.log")])}}, "text": "x = '🎉'; "},
        {"range": at(0, 0), "text": "# é\r\n"},
        {"range": at(10**6, 0), "text": "# the end\r\n"},
    ]
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": changes})
    expected = text.split("\r\n")
    expected[index] = line[: line.index("note")] + "x = '🎉'; " + line[line.index("self.log"):] + "  # 🎉"
    expected = "# é\r\n" + "\r\n".join(expected) + "# the end\r\n"
    published = client.diagnostics(uri, 2)
    write(path, expected)
    assert as_tuples(published["diagnostics"]) == cli_diagnostics(path, encoding)
    assert "DDP003" in [d["code"] for d in published["diagnostics"]]
    fix = next(a for a in quick_fixes(client.code_actions(uri)) if "DDP003" in a["title"])
    fixed = apply_edits(expected, edits_of(fix, uri)[0], encoding)
    assert """x = '🎉'; self.log("train_loss", loss, rank_zero_only=True)  # 🎉\r\n""" in fixed


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


def test_a_document_with_a_syntax_error_is_an_error_diagnostic(server, project):
    text = "import lightning as L\n\nclass M(L.LightningModule):\n    def training_step(self, batch:\n        self.log('x', 1)\n"
    path = project / "broken.py"
    published = server.open(path, write(path, text))
    [diagnostic] = published["diagnostics"]
    assert diagnostic["code"] == "E999" and diagnostic["severity"] == 1
    assert diagnostic["range"]["start"]["line"] in (3, 4)
    assert server.code_actions(path.as_uri()) == []
    assert_alive(server)


def test_a_code_action_for_an_unopened_document_gets_none(server):
    assert_alive(server)


def test_shutdown_then_exit_ends_the_process_with_0(server):
    response = server.request("shutdown", None)
    assert "error" not in response and response["result"] is None
    server.notify("exit", None)
    assert server.process.wait(timeout=TIMEOUT) == 0


def test_exit_without_shutdown_ends_the_process_with_1(server):
    server.notify("exit", None)
    assert server.process.wait(timeout=TIMEOUT) == 1


# --- the JSON-RPC layer (lsp_rpc), through the real process ---------------------------------------------


def frame(message: dict, extra_header: bytes = b"") -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n%s\r\n" % (len(body), extra_header) + body


def request_message(request_id, method: str = "ddpfix/noSuchMethod") -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {}}


def parse_error(client: LspClient) -> dict:
    """The next error response that names no request (the server could not read which)."""
    return client.response(None)["error"]


def test_frames_split_across_writes_or_merged_into_one_are_each_read(server, project):
    path = project / "train.py"
    opened = frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": path.as_uri(), "languageId": "python", "version": 1, "text": write(path, BUGGY)}}})
    for start, end in [(0, 7), (7, 17), (17, 40), (40, 300), (300, len(opened))]:  # the header cut too
        server.write(opened[start:end])
        time.sleep(0.05)
    assert len(server.diagnostics(path.as_uri(), 1)["diagnostics"]) == 4
    actions = server.code_action_request(path.as_uri(), only=["quickfix"])
    merged = (frame(actions, b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n")
              + frame({"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": "off"}})
              + frame(request_message("second")))
    server.write(merged)
    assert [FIX_TITLE.fullmatch(a["title"]).group(1) for a in quick_fixes(server.response(actions["id"])["result"])] == FIXABLE_IN_BUGGY
    assert server.response("second")["error"]["code"] == -32601


def test_a_frame_without_a_usable_length_is_a_parse_error_and_reading_goes_on(server):
    # No number: the header cannot say where the body ends. The body (a shutdown request) is
    # never acted on, and the next message, right after it, is read.
    lost = json.dumps({"jsonrpc": "2.0", "id": "lost", "method": "shutdown", "params": None}).encode()
    server.write(b"Content-Length: many\r\n\r\n" + lost + frame(request_message("after")))
    assert parse_error(server)["code"] == -32700
    assert server.response("after")["error"]["code"] == -32601
    # A length too short: the cut body is no JSON, and what is left of it is skipped.
    short = json.dumps(request_message("short")).encode()
    server.write(b"Content-Length: %d\r\n\r\n" % (len(short) - 5) + short + frame(request_message("next")))
    assert parse_error(server)["code"] == -32700
    assert server.response("next")["error"]["code"] == -32601
    # No header at all before a message: skipped up to the next Content-Length.
    server.write(b"garbage\r\n" + frame(request_message("after garbage")))
    assert server.response("after garbage")["error"]["code"] == -32601
    assert_alive(server)
    assert all(message.get("id") not in ("lost", "short") for message in server.drain(0.5))


def test_unreadable_messages_get_the_json_rpc_error_codes(server, project):
    server.send_raw(b"{this is not json")
    assert parse_error(server)["code"] == -32700
    server.send_raw(b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}')  # not UTF-8
    assert parse_error(server)["code"] == -32700
    server.send_raw(b'[{"jsonrpc": "2.0", "id": "in a batch", "method": "shutdown"}]')  # LSP has no batches
    assert parse_error(server)["code"] == -32600
    server.send_raw(json.dumps({"jsonrpc": "2.0", "id": {"not": "an id"}, "method": "shutdown"}).encode())
    assert parse_error(server)["code"] == -32600
    no_version = server.exchange({"id": "no version", "method": "shutdown"})
    assert no_version["error"]["code"] == -32600
    assert server.request("ddpfix/noSuchMethod", {})["error"]["code"] == -32601
    # A malformed notification is never answered: the client's log says what went wrong.
    server.notify("textDocument/didOpen", {"textDocument": {"uri": 42}})
    assert "textDocument/didOpen" in server.notification("window/logMessage")["message"]
    # Unknown notifications and cancels of requests nobody sent are ignored without a word.
    server.notify("ddpfix/noSuchNotification", {})
    server.notify("$/noSuchNotification", {})
    server.notify("$/cancelRequest", {"id": 999})
    server.notify("$/cancelRequest", {"id": "never sent"})
    assert_alive(server)
    assert server.drain(0.5) == []


def test_the_lifecycle_initialize_shutdown_and_exit(tmp_path, project):
    client = LspClient(tmp_path, tmp_path / "server.log")
    try:
        early = client.request("textDocument/codeAction", {})
        assert early["error"]["code"] == -32002  # ServerNotInitialized
        path = project / "train.py"
        client.notify("textDocument/didOpen", {"textDocument": {"uri": path.as_uri(), "languageId": "python",
                                                                "version": 1, "text": write(path, BUGGY)}})
        client.initialize(tmp_path)
        assert client.drain(0.5) == []  # the didOpen before initialize was dropped
        assert client.request("initialize", {"capabilities": {}})["error"]["code"] == -32600  # only once
        assert client.request("shutdown", None)["result"] is None
        assert client.request("textDocument/codeAction", {})["error"]["code"] == -32600  # shutting down
        client.notify("exit", None)
        assert client.process.wait(timeout=TIMEOUT) == 0
    finally:
        client.close()


@pytest.mark.parametrize("shutdown", [True, False])
def test_the_client_gone_ends_the_server(start_server, shutdown):
    client = start_server()
    if shutdown:
        assert client.request("shutdown", None)["result"] is None
    client.process.stdin.close()  # end of input, no exit notification
    assert client.process.wait(timeout=TIMEOUT) == (0 if shutdown else 1)


def test_shutdown_cancels_what_is_pending(server, project):
    big = project / "big.py"
    text = write(big, big_file(150))
    server.notify("textDocument/didOpen", {"textDocument": {"uri": big.as_uri(), "languageId": "python", "version": 1, "text": text}})
    request = server.code_action_request(big.as_uri(), only=["source.fixAll"])
    server.send(request)
    time.sleep(0.3)
    assert server.request("shutdown", None)["result"] is None
    assert server.response(request["id"], timeout=5)["error"]["code"] == -32800
    server.notify("exit", None)
    assert server.process.wait(timeout=TIMEOUT) == 0  # at once: the fix still running is not waited for


# --- quick fix titles and "Disable DDPnnn for this line" ----------------------------------------------


TWO_ON_A_LINE = """\
import lightning as L
import torch


class Model(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        w = torch.ones(x.shape[1], device="cuda:0") * torch.zeros(x.shape[1], device="cuda:0")
        m = x.to(0) + (x - torch.arange(4))
        self.log("val", w.sum(), on_epoch=True)  # keep an eye on it
        return self.loss(self.net(x) * w * m, y)
"""


def test_quick_fix_titles_say_what_each_fix_does_and_are_unique(server, project):
    path = project / "train.py"
    uri = path.as_uri()
    server.open(path, write(path, TWO_ON_A_LINE))
    fixes = quick_fixes(server.code_actions(uri))
    titles = [action["title"] for action in fixes]
    assert len(titles) == len(set(titles)) == 5
    described = [FIX_TITLE.fullmatch(title).group(3) for title in titles]
    # Two fixes alike on one line: told apart by their places.
    assert described[:2] == ['use self.device instead of "cuda:0" (line 8, column 13)',
                             'use self.device instead of "cuda:0" (line 8, column 55)']
    assert described[2:] == ['use self.device instead of 0', "add device=self.device", "add sync_dist=True"]
    # Each title's fix is its own finding's: applied alone, it changes that place only.
    lines = TWO_ON_A_LINE.splitlines()
    ones = apply_edits(TWO_ON_A_LINE, edits_of(fixes[0], uri)[0]).splitlines()
    assert ones[7] == lines[7].replace('device="cuda:0"', "device=self.device", 1) and ones[7].count('"cuda:0"') == 1


def test_disable_for_this_line_appends_or_merges_a_noqa_comment(server, project, tmp_path):
    text = TWO_ON_A_LINE.replace('m = x.to(0) + (x - torch.arange(4))', 'm = x.to(0) + (x - torch.arange(4))  # noqa: E501')
    path = project / "train.py"
    uri = path.as_uri()
    server.open(path, write(path, text))
    lines = text.splitlines()

    def silencer(line: int, code: str) -> dict:
        [action] = [a for a in silencers(server.code_actions(uri, (line, 0), (line, 200))) if code in a["title"]]
        assert action["title"] == f"Disable {code} for this line"
        return action

    # Two DDP006 on line 8: one action silences both.
    both = silencer(7, "DDP006")
    assert [d["code"] for d in both["diagnostics"]] == ["DDP006", "DDP006"]
    silenced = apply_edits(text, edits_of(both, uri)[0]).splitlines()
    assert silenced[7] == lines[7] + "  # noqa: DDP006"
    # An existing noqa list gets the code added; another comment keeps its words, the noqa after it.
    assert apply_edits(text, edits_of(silencer(8, "DDP006"), uri)[0]).splitlines()[8] == lines[8] + ", DDP006"
    assert apply_edits(text, edits_of(silencer(9, "DDP004"), uri)[0]).splitlines()[9] == lines[9] + "  # noqa: DDP004"

    # Applied one after the other, in the editor: nothing is left, and the CLI agrees.
    version = 1
    for line, code in [(7, "DDP006"), (8, "DDP006"), (9, "DDP004")]:
        text = apply_edits(text, edits_of(silencer(line, code), uri)[0])
        version += 1
        server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]})
    assert server.diagnostics(uri, version)["diagnostics"] == []
    write(path, text)
    assert cli_diagnostics(path) == []


# --- notebooks -----------------------------------------------------------------------------------------


NOTEBOOK_CLIENT = {"workspace": {"workspaceEdit": {"documentChanges": True}}, "notebookDocument": {"synchronization": {}}}


def notebook_cells() -> list[tuple[str, str]]:
    """A markdown cell, then the code cells of a fixture notebook with magics, skipped cells and
    findings of three rules (one with a safe fix)."""
    content = json.loads((FIXTURES / "notebook-strategy" / "magics_and_other_rules.ipynb").read_text(encoding="utf-8"))
    return [("markdown", "# Training\nwith `ddp_spawn`")] + [("code", "".join(cell["source"])) for cell in content["cells"]]


def write_notebook(path, cells: list[tuple[str, str]]) -> None:
    content = {"cells": [{"cell_type": kind, "metadata": {}, "source": text,
                          **({"execution_count": None, "outputs": []} if kind == "code" else {})} for kind, text in cells],
               "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(content, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def cli_notebook_findings(path) -> set[tuple]:
    records = json.loads(run_cli("--check", "--output-format", "json", path).stdout)
    return {(r["cell"], r["code"], r["line"], r["column"]) for r in records}


def test_a_notebook_gets_diagnostics_per_cell_as_the_cli_reports_them(start_server, project):
    client = start_server(NOTEBOOK_CLIENT)
    assert client.initialize_result["capabilities"]["notebookDocumentSync"]["notebookSelector"] == [
        {"notebook": "jupyter-notebook", "cells": [{"language": "python"}]}]
    path = project / "train.ipynb"
    cells = notebook_cells()
    write_notebook(path, cells)
    uris = client.open_notebook(path, cells)
    published = {uri: client.diagnostics(uri, 1)["diagnostics"] for uri in uris[1:]}  # every code cell
    found = {(uris.index(uri) + 1, d["code"], d["range"]["start"]["line"] + 1, d["range"]["start"]["character"] + 1)
             for uri, diagnostics in published.items() for d in diagnostics}
    assert found == cli_notebook_findings(path)
    by_code = {d["code"]: (uri, d) for uri, diagnostics in published.items() for d in diagnostics if d["code"].startswith("DDP")}
    assert by_code["DDP015"][0] == uris[5] and by_code["DDP003"][0] == uris[4]
    assert {d["severity"] for d in published[uris[2]] + published[uris[3]]} == {3}  # "cell skipped": information
    assert all(m["params"]["uri"] != uris[0] for m in client.drain(0.5) if m.get("method") == "textDocument/publishDiagnostics")

    # An edit in one cell: that cell's diagnostics change, numbered in its own lines.
    fixed_cell = cells[5][1].replace('"ddp_spawn"', '"ddp_notebook"')
    client.change_cell(path, 2, uris[5], fixed_cell)
    assert [d["code"] for d in client.diagnostics(uris[5], 2)["diagnostics"]] == ["DDP002"]
    client.notify("notebookDocument/didClose", {"notebookDocument": {"uri": path.as_uri()},
                                                 "cellTextDocuments": [{"uri": uri} for uri in uris]})
    for uri in uris[1:]:  # every cell's diagnostics cleared
        client.notification("textDocument/publishDiagnostics", lambda params, uri=uri: params["uri"] == uri and not params["diagnostics"])


def test_cells_added_and_removed_are_analysed_as_the_notebook_now_is(start_server, project):
    client = start_server(NOTEBOOK_CLIENT)
    path = project / "train.ipynb"
    cells = notebook_cells()
    uris = client.open_notebook(path, cells)
    first = {uri: client.diagnostics(uri, 1)["diagnostics"] for uri in uris[1:]}
    assert any(d["code"] == "DDP015" for d in first[uris[5]])
    # The DDP015 cell deleted, then put back as a new cell before the first code cell.
    added_uri, added = f"vscode-notebook-cell:{path.as_posix()}#added", cells[5][1]
    client.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": path.as_uri(), "version": 2},
        "change": {"cells": {"structure": {"array": {"start": 5, "deleteCount": 1}, "didClose": [{"uri": uris[5]}]}}},
    })
    client.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": path.as_uri(), "version": 3},
        "change": {"cells": {"structure": {
            "array": {"start": 1, "deleteCount": 0, "cells": [{"kind": 2, "document": added_uri}]},
            "didOpen": [{"uri": added_uri, "languageId": "python", "version": 1, "text": added}]}}},
    })
    assert client.notification("textDocument/publishDiagnostics", lambda p: p["uri"] == uris[5])["diagnostics"] == []
    now = [cells[0], ("code", added)] + [cell for number, cell in enumerate(cells) if number not in (0, 5)]
    write_notebook(path, now)
    new_uris = [uris[0], added_uri] + [uri for number, uri in enumerate(uris) if number not in (0, 5)]
    published = {uri: client.diagnostics(uri, 1)["diagnostics"] for uri in new_uris[1:]}
    found = {(new_uris.index(uri) + 1, d["code"], d["range"]["start"]["line"] + 1, d["range"]["start"]["character"] + 1)
             for uri, diagnostics in published.items() for d in diagnostics}
    assert found == cli_notebook_findings(path) and (2, "DDP015") in {(cell, code) for cell, code, *_ in found}


def test_notebook_fixes_edit_the_cells_as_the_cli_writes_them(start_server, project, tmp_path):
    client = start_server(NOTEBOOK_CLIENT)
    path = project / "train.ipynb"
    cells = notebook_cells()
    write_notebook(path, cells)
    uris = client.open_notebook(path, cells)
    ddp015 = next(d for d in client.diagnostics(uris[5], 1)["diagnostics"] if d["code"] == "DDP015")
    line = ddp015["range"]["start"]["line"]
    actions = client.code_actions(uris[5], (line, 0), (line, 200))
    [fix] = [a for a in quick_fixes(actions) if a["title"].startswith("DDP015")]
    assert fix["title"] == 'DDP015: use "ddp_notebook" instead of "ddp_spawn"' and fix["isPreferred"] is True
    [change] = fix["edit"]["documentChanges"]
    assert change["textDocument"] == {"uri": uris[5], "version": 1}
    assert [a["title"] for a in silencers(actions)] == ["Disable DDP015 for this line"]

    # "Fix all" on a cell edits every cell that needs it, as `ddpfix --write` writes the notebook.
    edits = fix_all(client.code_actions(uris[1], only=["source.fixAll"]))["edit"]["documentChanges"]
    texts = {uri: text for uri, (_, text) in zip(uris, cells)}
    for change in edits:
        texts[change["textDocument"]["uri"]] = apply_edits(texts[change["textDocument"]["uri"]], change["edits"])
    copy = path.with_name("cli_copy.ipynb")
    shutil.copyfile(path, copy)
    run_cli("--write", copy)
    written = ["".join(cell["source"]) for cell in json.loads(copy.read_text(encoding="utf-8"))["cells"]]
    assert [texts[uri] for uri in uris] == written != [text for _, text in cells]
    notebook_wide = client.code_actions(uris[1], only=["notebook.source.fixAll"])
    assert [a["kind"] for a in notebook_wide] == ["notebook.source.fixAll.ddpfix"]
    assert notebook_wide[0]["edit"] == fix_all(client.code_actions(uris[1], only=["source.fixAll"]))["edit"]


# --- never blocked -------------------------------------------------------------------------------------


def big_file(classes: int) -> str:
    """bench/lsp_latency.py's generated file: fixture-like LightningModules, repeated."""
    spec = importlib.util.spec_from_file_location("lsp_latency", ROOT / "bench" / "lsp_latency.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench.big_file(classes)


def test_a_cancelled_fix_all_answers_at_once_and_other_documents_go_on(server, project):
    big, small = project / "big.py", project / "train.py"
    text = write(big, big_file(600))  # seconds of analysis (150 classes took under a second)
    server.notify("textDocument/didOpen", {"textDocument": {"uri": big.as_uri(), "languageId": "python", "version": 1, "text": text}})
    request = server.code_action_request(big.as_uri(), only=["source.fixAll"])
    server.send(request)
    time.sleep(0.3)
    server.notify("$/cancelRequest", {"id": request["id"]})
    cancelled_at = time.monotonic()
    answer = server.response(request["id"])
    assert answer["error"]["code"] == -32800, answer  # RequestCancelled
    assert time.monotonic() - cancelled_at < 5
    # Another document is analysed and answered while the big one is still being analysed.
    small_published = server.open(small, write(small, BUGGY))
    assert [d["code"] for d in small_published["diagnostics"]] == ["DDP003", "DDP004", "DDP005", "DDP002"]
    assert_alive(server)
    big_published = [m for m in server.kept if m.get("method") == "textDocument/publishDiagnostics"
                     and m["params"]["uri"] == big.as_uri()]
    assert big_published == []  # still under way: the small document did not wait for it


def test_fix_all_is_resolved_when_picked_where_the_client_resolves_edits(start_server, project):
    capabilities = {"workspace": {"workspaceEdit": {"documentChanges": True}},
                    "textDocument": {"codeAction": {"resolveSupport": {"properties": ["edit"]}}}}
    client = start_server(capabilities)
    path = project / "case.py"
    text = write(path, big_file(2))  # four safe fixes
    uri = path.as_uri()
    client.open(path, text)
    listed = fix_all(client.code_actions(uri))
    assert "edit" not in listed and listed["data"] == {"uri": uri, "version": 1}
    edits, version = edits_of(client.resolved(listed), uri)
    assert version == 1 and apply_edits(text, edits) == cli_written(path, path.parent)
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": text + "\n"}]})
    stale = client.request("codeAction/resolve", listed)
    assert stale["error"]["code"] == -32801  # ContentModified: the client asks again


def test_diagnostics_never_load_libcst_or_difflib(tmp_path):
    """Time to first diagnostics: LibCST (a rewrite's) and difflib stay unloaded by a report."""
    path = tmp_path / "train.py"
    write(path, BUGGY)
    code = (
        "import sys\n"
        "from ddpfix.lsp import build_server\n"
        "from ddpfix.lsp_document import analyse\n"
        f"snapshot = analyse({path.as_uri()!r}, 1, {BUGGY!r}, {str(path)!r}, len, None)\n"
        "assert snapshot.diagnostics()\n"
        "print(sorted(m for m in ('libcst', 'difflib', 'click') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


# --- the entry point ---------------------------------------------------------------------------------


def test_the_server_needs_neither_pygls_nor_lsprotocol(tmp_path, project):
    """``ddpfix lsp`` speaks the protocol itself: with both made unimportable, it still answers."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    for name in ("pygls", "lsprotocol"):
        (shadow / f"{name}.py").write_text(f"raise ModuleNotFoundError(\"No module named '{name}'\", name='{name}')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(shadow) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    client = LspClient(tmp_path, tmp_path / "server.log", env=env)
    try:
        client.initialize(tmp_path)
        path = project / "train.py"
        published = client.open(path, write(path, BUGGY))
        assert [d["code"] for d in published["diagnostics"]] == ["DDP003", "DDP004", "DDP005", "DDP002"]
        fixes = quick_fixes(client.code_actions(path.as_uri()))
        assert [FIX_TITLE.fullmatch(a["title"]).group(1) for a in fixes] == FIXABLE_IN_BUGGY
    finally:
        client.close()


def test_python_dash_m_and_arguments(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ddpfix", "lsp", "--help"], check=False, capture_output=True, timeout=60)
    assert proc.returncode == 0 and b"Usage: ddpfix lsp" in proc.stdout
    proc = subprocess.run([ddpfix_executable(), "lsp", "--tcp"], check=False, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and b"--tcp" in proc.stderr


def test_editor_settings_start_this_server():
    text = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    section = text[text.index("## Language server"):text.index("## The CLI as a task")]
    settings = json.loads(section[section.index("```json") + len("```json"):section.index("```", section.index("```json") + 7)])
    assert [settings["glspc.server.command"], *settings["glspc.server.commandArguments"]] == ["ddpfix", "lsp"]
    assert settings["glspc.server.languageId"] == ["python"]
    assert "source.fixAll.ddpfix" in settings["[python]"]["editor.codeActionsOnSave"]
    modern, older = re.findall(r"```lua\n(.*?)```", section, re.S)
    for recipe in (modern, older):
        assert 'cmd = { "ddpfix", "lsp" }' in recipe and "pyproject.toml" in recipe
    assert "vim.lsp.start({" in modern and "vim.fs.root" in modern
    # Neovim 0.7 has neither vim.lsp.start nor vim.fs: the older recipe starts and attaches by hand.
    assert "vim.lsp.start_client(" in older and "vim.lsp.buf_attach_client(" in older
    assert "vim.lsp.start(" not in older and "vim.fs." not in older
    assert "docs/editors.md" in (ROOT / "README.md").read_text(encoding="utf-8")


# --- the arithmetic, in-process ----------------------------------------------------------------------


def snapshot_of(text: str, result=None, encoding: str = "utf-16"):
    from ddpfix.findings import FileResult
    from ddpfix.lsp_document import Settings, Snapshot, TextView

    units = utf16 if encoding == "utf-16" else (lambda chunk: len(chunk.encode(encoding)))
    data = text.encode("utf-8")
    view = TextView("file:///t.py", 1, text, units)
    return Snapshot("file:///t.py", 1, {None: view}, data, "utf-8", Settings(), result or FileResult("t.py", data))


FIXTURE_PAIRS = sorted(FIXTURES.rglob("*.expected.py"))


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
        assert apply_edits(before, edits, encoding) == after, expected_path


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


def test_snapshot_edits_of_a_spread_out_fix_are_one_per_place():
    text = "".join(f"class M{n}:\n    x = 'cuda:0'\n\n" for n in range(200))
    after = text.replace("'cuda:0'", "self.device")
    snapshot = snapshot_of(text)
    changes = snapshot.changes_to(after.encode())
    assert len(changes) == 200 and {text[c.start:c.end] for c in changes} == {"'cuda:0'"}
    assert apply_edits(text, snapshot.text_edits(changes)["file:///t.py"]) == after


def test_problems_without_a_place_are_marked_on_the_first_line():
    from ddpfix.findings import FileResult, Problem

    text = "x = 1  # é\ny = 2\n"
    result = FileResult("t.py", text.encode(), problems=[Problem("t.py", "DDP003", "internal error: boom"),
                                                          Problem("t.py", "E999", "cannot parse", 2, 3)])
    first, second = snapshot_of(text, result).diagnostics()["file:///t.py"]
    assert (first["code"], first["severity"], first["range"]["start"]["line"], first["range"]["end"]["character"]) == ("DDP003", 1, 0, 10)
    assert (second["code"], second["range"]["start"]["line"], second["range"]["start"]["character"],
            second["range"]["end"]["character"]) == ("E999", 1, 2, 5)
