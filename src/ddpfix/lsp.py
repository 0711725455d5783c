"""The language server, ``ddpfix lsp``: DDP findings as diagnostics, their fixes as code actions.

A front-end over ``sources.fix_source``, never a second pipeline (see ``lsp_document``). It speaks
LSP over stdin/stdout through pygls (the ``ddpfix[lsp]`` extra):

- diagnostics are published on open and save at once, and after edits once typing pauses
  (``DEBOUNCE_SECONDS``; the latest version wins), and cleared on close;
- code actions: a ``quickfix`` per fixable finding in the requested range, whose edit is the engine
  re-run with only that fix allowed, and ``source.fixAll.ddpfix`` with the whole run's edit. Both are
  computed on the document's current version and carry it, so a client drops them once stale;
- nothing a client sends can stop it: a malformed message or params get an error response or a log
  line, and a failure of ours while analysing a document is logged, not raised.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from dataclasses import dataclass

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import FeatureRequestError, JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from ddpfix import __version__
from ddpfix.lsp_document import FIX_ALL_KIND, FIX_ALL_TITLE, Snapshot, analyse, rule_for

DEBOUNCE_SECONDS = 0.3
PYTHON_SUFFIXES = (".py", ".pyi")

logger = logging.getLogger("ddpfix.lsp")

USAGE = """\
Usage: ddpfix lsp [--stdio]

  Start the ddpfix language server on stdin/stdout (--stdio, accepted for editors that pass it, is
  the only transport). Diagnostics, quick fixes and "Fix all DDP issues" for Python documents,
  with the [tool.ddpfix] settings of the nearest pyproject.toml. A folder named lsp is checked with
  'ddpfix ./lsp'.
"""


@dataclass
class _Unreadable:
    """A request whose params did not fit its method: answered with the error instead of dropped."""

    id: int | str
    method: str
    error: JsonRpcException
    jsonrpc: str = "2.0"


class TolerantProtocol(LanguageServerProtocol):
    """pygls logs and drops a request it cannot deserialize, which leaves the client waiting for
    its response forever; this one answers it with the JSON-RPC error (Invalid params)."""

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException as err:
            if isinstance(data, dict) and "id" in data and isinstance(data.get("method"), str):
                return _Unreadable(data["id"], data["method"], err)
            raise

    def handle_message(self, message):
        if isinstance(message, _Unreadable):
            logger.warning("malformed %s request (id %r): %s", message.method, message.id, message.error.message)
            self._send_response(message.id, None, message.error.to_response_error())
            return
        super().handle_message(message)


class DdpfixServer(LanguageServer):
    def __init__(self, debounce: float = DEBOUNCE_SECONDS):
        super().__init__(
            "ddpfix", __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=TolerantProtocol,
        )
        self.debounce = debounce
        self.tracked: set[str] = set()  # open Python documents
        self.snapshots: dict[str, Snapshot] = {}  # the latest analysis of each
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.shutdown_requested = False

    def report_server_error(self, error: Exception, source) -> None:
        # pygls pops up a message for every unreadable message or failed notification (and has
        # logged it to stderr); a line in the client's log is enough for what is the client's
        # mistake or ours, and keeps the editor quiet. A failed request has its error response.
        if source is FeatureRequestError:
            return
        try:
            self.window_log_message(types.LogMessageParams(types.MessageType.Error, f"ddpfix: {error}"))
        except Exception:  # the transport itself may be what failed
            logger.exception("cannot send a log message to the client")

    # --- documents ---------------------------------------------------------------------------

    def current(self, uri: str) -> Snapshot | None:
        """The analysis of the document as the client has it now (None when it is not open)."""
        if uri not in self.tracked:
            return None
        document = self.workspace.get_text_document(uri)
        cached = self.snapshots.get(uri)
        if cached is not None and cached.version == document.version and cached.text == document.source:
            return cached
        snapshot = analyse(
            uri, document.version, document.source, to_fs_path(uri) if uri.startswith("file:") else None,
            self.workspace.position_codec.client_num_units, self.workspace.root_path,
        )
        self.snapshots[uri] = snapshot
        return snapshot

    def publish(self, uri: str) -> None:
        self.cancel_timer(uri)
        try:
            snapshot = self.current(uri)
        except Exception as err:  # a bug of ours costs this document's diagnostics, never the server
            logger.exception("cannot analyse %s", uri)
            self.report_server_error(err, "analysis")
            return
        if snapshot is not None:
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri, snapshot.diagnostics(), version=snapshot.version)
            )

    def publish_later(self, uri: str) -> None:
        self.cancel_timer(uri)
        self.timers[uri] = asyncio.get_running_loop().call_later(self.debounce, self.publish, uri)

    def cancel_timer(self, uri: str) -> None:
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()

    def forget(self, uri: str) -> None:
        self.cancel_timer(uri)
        self.tracked.discard(uri)
        self.snapshots.pop(uri, None)

    # --- code actions ------------------------------------------------------------------------

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        snapshot = self.current(params.text_document.uri)
        if snapshot is None:
            return None
        wanted = params.context.only
        actions: list[types.CodeAction] = []
        if _wants(wanted, types.CodeActionKind.QuickFix):
            for finding in snapshot.fixable_findings():
                where = snapshot.finding_range(finding)
                if not _overlaps(where, params.range):
                    continue
                edits = snapshot.single_fix(finding)
                if not edits:
                    continue
                rule = rule_for(finding.code)
                what = rule.summary if rule else finding.message
                # An unsafe fix says so in its title and is never the preferred action (editors apply
                # a preferred quick fix on a single key press).
                title = f"Fix {finding.code}: {what}" if finding.safe else f"Unsafe fix {finding.code} (review it): {what}"
                actions.append(types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[snapshot.finding_diagnostic(finding)],
                    is_preferred=finding.safe,
                    edit=self.workspace_edit(snapshot, edits),
                ))
        if _wants(wanted, FIX_ALL_KIND):
            edits = snapshot.fix_all()
            if edits:
                actions.append(types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL_KIND, edit=self.workspace_edit(snapshot, edits)))
        return actions

    def workspace_edit(self, snapshot: Snapshot, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        """The edits for the version they were computed on, where the client can check the version."""
        if get_capability(self.client_capabilities, "workspace.workspace_edit.document_changes", False):
            document = types.OptionalVersionedTextDocumentIdentifier(snapshot.uri, snapshot.version)
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(document, edits)])
        return types.WorkspaceEdit(changes={snapshot.uri: edits})


def _wants(only: list[str] | None, kind: str) -> bool:
    """Whether a request's ``context.only`` asks for ``kind`` (kinds are dotted; a prefix covers it)."""
    return only is None or any(kind == want or kind.startswith(want + ".") for want in only)


def _overlaps(a: types.Range, b: types.Range) -> bool:
    # Touching counts: a cursor at either end of a finding asks for its fix.
    def key(position: types.Position) -> tuple[int, int]:
        return position.line, position.character

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def _is_python(document: types.TextDocumentItem) -> bool:
    return document.language_id == "python" or document.uri.endswith(PYTHON_SUFFIXES)


def build_server(debounce: float = DEBOUNCE_SECONDS) -> DdpfixServer:
    server = DdpfixServer(debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DdpfixServer, params: types.DidOpenTextDocumentParams) -> None:
        if _is_python(params.text_document):
            ls.tracked.add(params.text_document.uri)
            ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DdpfixServer, params: types.DidChangeTextDocumentParams) -> None:
        if params.text_document.uri in ls.tracked:
            ls.publish_later(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: DdpfixServer, params: types.DidSaveTextDocumentParams) -> None:
        if params.text_document.uri in ls.tracked:
            ls.snapshots.pop(params.text_document.uri, None)  # a saved pyproject.toml may have changed too
            ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DdpfixServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in ls.tracked:
            ls.forget(uri)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    def code_action(ls: DdpfixServer, params: types.CodeActionParams):
        return ls.code_actions(params)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: DdpfixServer, params) -> None:
        ls.shutdown_requested = True
        for uri in list(ls.timers):
            ls.cancel_timer(uri)

    @server.feature(types.EXIT)
    def exit_(ls: DdpfixServer, params) -> None:
        # pygls would wait for its stdin reader thread, which only returns when the client closes
        # the pipe; the protocol says to exit now (0 after a shutdown request, 1 without one).
        logging.shutdown()
        os._exit(0 if ls.shutdown_requested else 1)

    return server


def main(args: list[str]) -> int:
    if any(arg in ("-h", "--help") for arg in args):
        sys.stdout.write(USAGE)
        return 0
    unknown = [arg for arg in args if arg != "--stdio"]
    if unknown:
        sys.stderr.write(f"{USAGE}\nError: unexpected argument {unknown[0]!r}\n")
        return 2
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="ddpfix lsp: %(levelname)s %(name)s: %(message)s")
    server = build_server()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must never corrupt the protocol stream
    server.start_io(stdin, stdout)
    return 0 if server.shutdown_requested else 1
