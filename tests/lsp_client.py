"""A minimal LSP client for the tests: JSON-RPC over a subprocess's stdio, every wait bounded.

The server runs as the real ``ddpfix lsp`` console script. A reader thread parses the
Content-Length framed messages into a queue, so a hung or dead server fails a test after
``timeout`` seconds instead of hanging it.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import re
import subprocess
import threading
import time
from pathlib import Path

from conftest import ddpfix_executable

TIMEOUT = 30.0  # seconds; generous for a loaded 2-core machine


class ServerGone(AssertionError):
    pass


class LspClient:
    def __init__(self, cwd: Path, log: Path, args: tuple[str, ...] = ("lsp",), env: dict | None = None):
        # stderr goes to a file (closed in close()): a full pipe would block the server.
        self.log = open(log, "wb")  # noqa: SIM115
        self.process = subprocess.Popen(
            [ddpfix_executable(), *args], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.log, env=env or dict(os.environ),
        )
        self.ids = itertools.count(1)
        self.inbox: queue.Queue = queue.Queue()
        self.kept: list[dict] = []  # notifications read while waiting for something else
        self.transcript: list[tuple[str, dict]] = []  # ("->" | "<-", message), for the report
        threading.Thread(target=self._read, daemon=True).start()

    # --- transport ---------------------------------------------------------------------------

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self.inbox.put(None)
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            body = stream.read(length or 0)
            message = json.loads(body)
            self.transcript.append(("<-", message))
            self.inbox.put(message)

    def send_raw(self, body: bytes) -> None:
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def write(self, data: bytes) -> None:
        """Bytes as they are, framed or not."""
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict) -> None:
        self.transcript.append(("->", message))
        self.send_raw(json.dumps(message).encode("utf-8"))

    def _next(self, deadline: float) -> dict:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no message from the server in time")
        try:
            message = self.inbox.get(timeout=remaining)
        except queue.Empty:
            raise TimeoutError("no message from the server in time") from None
        if message is None:
            self.inbox.put(None)  # keep saying so
            raise ServerGone(f"the server closed its output (exit code {self.process.poll()})")
        if "id" in message and "method" in message:  # a request of the server's: answer it plainly
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        return message

    # --- requests and notifications ----------------------------------------------------------

    def request(self, method: str, params, timeout: float = TIMEOUT) -> dict:
        """The whole response message (``result`` or ``error``) to one request."""
        return self.exchange({"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}, timeout)

    def exchange(self, message: dict, timeout: float = TIMEOUT) -> dict:
        """Send a request as given (however malformed) and return the response to its id."""
        self.send(message)
        return self.response(message["id"], timeout)

    def response(self, request_id, timeout: float = TIMEOUT) -> dict:
        """The response to the request ``request_id`` sent before (kept or new)."""
        for index, message in enumerate(self.kept):
            if message.get("id") == request_id and "method" not in message:
                return self.kept.pop(index)
        deadline = time.monotonic() + timeout
        while True:
            answer = self._next(deadline)
            if answer.get("id") == request_id and "method" not in answer:
                return answer
            self.kept.append(answer)

    def notify(self, method: str, params) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def notification(self, method: str, match=lambda params: True, timeout: float = TIMEOUT) -> dict:
        """The params of the first notification ``method`` (kept or new) that ``match`` accepts."""
        for index, message in enumerate(self.kept):
            if message.get("method") == method and match(message.get("params")):
                del self.kept[index]
                return message["params"]
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(deadline)
            if message.get("method") == method and match(message.get("params")):
                return message["params"]
            self.kept.append(message)

    def drain(self, seconds: float) -> list[dict]:
        """Every message that arrives within ``seconds`` (and those kept before)."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                self.kept.append(self._next(deadline))
            except TimeoutError:
                break
        found, self.kept = self.kept, []
        return found

    # --- conveniences ------------------------------------------------------------------------

    def initialize(self, root: Path, capabilities: dict | None = None) -> dict:
        default = {"workspace": {"workspaceEdit": {"documentChanges": True}}}
        response = self.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": capabilities or default,
        })
        self.notify("initialized", {})
        self.initialize_result = response["result"]
        return response["result"]

    def open(self, path: Path, text: str, version: int = 1) -> dict:
        """didOpen, then the diagnostics published for it."""
        uri = path.as_uri()
        self.notify("textDocument/didOpen", {
            "textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text},
        })
        return self.diagnostics(uri, version)

    def open_notebook(self, path: Path, cells: list[tuple[str, str]], version: int = 1) -> list[str]:
        """notebookDocument/didOpen of a Jupyter notebook whose cells are ``(kind, text)``, kind
        "code" (Python) or "markdown"; the cells' URIs, as VS Code names them."""
        uris = [f"vscode-notebook-cell:{path.as_posix()}#cell{number}" for number in range(len(cells))]
        self.notify("notebookDocument/didOpen", {
            "notebookDocument": {
                "uri": path.as_uri(), "notebookType": "jupyter-notebook", "version": version,
                "cells": [{"kind": 2 if kind == "code" else 1, "document": uri} for uri, (kind, _) in zip(uris, cells)],
            },
            "cellTextDocuments": [
                {"uri": uri, "languageId": "python" if kind == "code" else "markdown", "version": version, "text": text}
                for uri, (kind, text) in zip(uris, cells)
            ],
        })
        return uris

    def change_cell(self, notebook: Path, version: int, cell_uri: str, text: str) -> None:
        """notebookDocument/didChange: one cell's whole text replaced (cell and notebook at ``version``)."""
        self.notify("notebookDocument/didChange", {
            "notebookDocument": {"uri": notebook.as_uri(), "version": version},
            "change": {"cells": {"textContent": [
                {"document": {"uri": cell_uri, "version": version}, "changes": [{"text": text}]},
            ]}},
        })

    def diagnostics(self, uri: str, version: int | None = None, timeout: float = TIMEOUT) -> dict:
        return self.notification(
            "textDocument/publishDiagnostics",
            lambda params: params["uri"] == uri and (version is None or params.get("version") == version),
            timeout,
        )

    def code_action_request(self, uri: str, start=(0, 0), end=(10**6, 0), only: list[str] | None = None) -> dict:
        context = {"diagnostics": []}
        if only is not None:
            context["only"] = only
        return {"jsonrpc": "2.0", "id": next(self.ids), "method": "textDocument/codeAction", "params": {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": start[0], "character": start[1]}, "end": {"line": end[0], "character": end[1]}},
            "context": context,
        }}

    def code_actions(self, uri: str, start=(0, 0), end=(10**6, 0), only: list[str] | None = None) -> list[dict]:
        response = self.exchange(self.code_action_request(uri, start, end, only))
        assert "error" not in response, response
        return response["result"] or []

    def resolved(self, action: dict | None) -> dict | None:
        """The action with its edit: resolved (``codeAction/resolve``) where the server left it out."""
        if action is None or "edit" in action:
            return action
        response = self.request("codeAction/resolve", action)
        assert "error" not in response, response
        return response["result"]

    def close(self) -> int | None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=TIMEOUT)
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self.log.close()
        return self.process.returncode


# --- applying what the server returns ---------------------------------------------------------

_LINE_END = re.compile(r"\r\n|\r|\n")


def offset(text: str, position: dict, encoding: str = "utf-16") -> int:
    """The index in ``text`` of an LSP position (its character in ``encoding`` code units)."""
    starts = [0] + [match.end() for match in _LINE_END.finditer(text)]
    start = starts[position["line"]]
    end = starts[position["line"] + 1] if position["line"] + 1 < len(starts) else len(text)
    line = text[start:end]
    units = 0
    for index, char in enumerate(line):
        if units >= position["character"]:
            return start + index
        units += len(char.encode("utf-16-le")) // 2 if encoding == "utf-16" else len(char.encode(encoding))
    return start + len(line)


def apply_edits(text: str, edits: list[dict], encoding: str = "utf-16") -> str:
    spans = sorted(((offset(text, e["range"]["start"], encoding), offset(text, e["range"]["end"], encoding), e["newText"])
                    for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def edits_of(action: dict | None, uri: str) -> tuple[list[dict], int | None]:
    """The text edits a code action makes to ``uri``, and the document version they are for (none
    for no action)."""
    if action is None:
        return [], None
    edit = action["edit"]
    if "documentChanges" in edit:
        changes = [change for change in edit["documentChanges"] if change["textDocument"]["uri"] == uri]
        return [e for change in changes for e in change["edits"]], changes[0]["textDocument"].get("version")
    return edit["changes"][uri], None
