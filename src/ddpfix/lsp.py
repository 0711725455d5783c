"""The language server, ``ddpfix lsp``: DDP findings as diagnostics, their fixes as code actions.

A front-end over ``sources.fix_source``, never a second pipeline (see ``lsp_document``). It speaks
LSP over stdin/stdout through pygls (the ``ddpfix[lsp]`` extra):

- Python documents, and the Python cells of Jupyter notebooks (``notebookDocument/*``: the cells go
  to the engine as the notebook the CLI reads, and each cell gets its own diagnostics);
- diagnostics are published on open and save at once, and after edits once typing pauses
  (``DEBOUNCE_SECONDS``; the latest version wins), and cleared on close;
- code actions: a ``quickfix`` per fixable finding in the requested range, whose edit is the engine
  re-run with only that fix allowed and whose title says what it does; "Disable DDPnnn for this
  line" (``# noqa``); and ``source.fixAll.ddpfix`` with the whole run's edit, computed when the
  client resolves the action where it can (``codeAction/resolve``), so that listing actions as the
  cursor moves never runs a fix. All are computed on the document's current version and carry it,
  so a client drops them once stale;
- the engine never runs on the event loop: analyses and fixes run in worker threads (one job per
  document version and kind of work, shared by every request that needs it), so one document's
  "fix all" never holds up another document's diagnostics, and ``$/cancelRequest`` answers a
  pending request at once (RequestCancelled; the thread's work is kept for the next request);
- nothing a client sends can stop it: a malformed message or params get an error response or a log
  line, and a failure of ours while analysing a document is logged, not raised.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import FeatureRequestError, JsonRpcContentModified, JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from ddpfix import __version__
from ddpfix.findings import Finding
from ddpfix.lsp_document import (
    FIX_ALL_KIND,
    FIX_ALL_TITLE,
    NOTEBOOK_FIX_ALL_KIND,
    Cell,
    Change,
    Snapshot,
    TextView,
    analyse,
    analyse_notebook,
    unique_titles,
)

DEBOUNCE_SECONDS = 0.3
PYTHON_SUFFIXES = (".py", ".pyi")
NOTEBOOK_TYPE = "jupyter-notebook"
#: Worker threads: enough that a long "fix all" (or one cancelled, which runs on) leaves others free.
WORKERS = 4

logger = logging.getLogger("ddpfix.lsp")

USAGE = """\
Usage: ddpfix lsp [--stdio]

  Start the ddpfix language server on stdin/stdout (--stdio, accepted for editors that pass it, is
  the only transport). Diagnostics, quick fixes and "Fix all DDP issues" for Python documents and
  Jupyter notebook cells, with the [tool.ddpfix] settings of the nearest pyproject.toml. A folder
  named lsp is checked with 'ddpfix ./lsp'.
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
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[types.NotebookDocumentFilterWithCells(
                    cells=[types.NotebookCellLanguage("python")], notebook=NOTEBOOK_TYPE)],
                save=True,
            ),
            protocol_cls=TolerantProtocol,
        )
        self.debounce = debounce
        self.tracked: set[str] = set()  # open Python documents and notebooks, by URI
        self.snapshots: dict[str, tuple[tuple, Snapshot]] = {}  # the latest analysis of each, by its state
        self.saves: dict[str, int] = {}  # saves of each: a save may change the pyproject.toml that applies
        self.published: dict[str, set[str]] = {}  # the text documents each has diagnostics in
        self.jobs: dict[tuple, asyncio.Future] = {}  # work under way in the worker threads
        self.latest: dict[str, tuple] = {}  # each document's state as last seen (read by the workers)
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.tasks: set[asyncio.Task] = set()
        self.executor = ThreadPoolExecutor(WORKERS, thread_name_prefix="ddpfix")
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

    # --- work off the event loop -------------------------------------------------------------

    async def run(self, key: tuple, work: Callable, *args):
        """``work(*args)`` in a worker thread, once for every caller asking with ``key`` while it
        runs. ``key``: (what, document URI, the document's state, ...): work that a newer version
        of the document superseded before a thread took it up is skipped (None), so a burst of
        edits to a big file leaves no queue of stale analyses for other documents to wait behind.
        A caller cancelled while it waits (``$/cancelRequest``) stops waiting; work under way goes
        on for the others and for the cache it fills."""
        job = self.jobs.get(key)
        if job is None:
            uri, state = key[1], key[2]

            def unless_superseded():
                return work(*args) if self.latest.get(uri) == state else None

            job = asyncio.get_running_loop().run_in_executor(self.executor, unless_superseded)
            self.jobs[key] = job
            job.add_done_callback(lambda done: self.jobs.pop(key) if self.jobs.get(key) is done else None)
        return await asyncio.shield(job)

    # --- documents ---------------------------------------------------------------------------

    def state(self, uri: str) -> tuple | None:
        """What identifies the version of tracked document ``uri`` the client holds now (noted in
        ``latest``, which the worker threads read)."""
        if uri not in self.tracked:
            self.latest.pop(uri, None)
            return None
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        if notebook is None:
            document = self.workspace.get_text_document(uri)
            state = (self.saves.get(uri, 0), document.version)
        else:
            cells = tuple((cell.document, self.workspace.get_text_document(cell.document).version) for cell in notebook.cells)
            state = (self.saves.get(uri, 0), notebook.version, cells)
        self.latest[uri] = state
        return state

    def owner(self, uri: str) -> str | None:
        """The tracked document that text document ``uri`` belongs to: itself, or its notebook."""
        if uri in self.tracked:
            return uri
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        return notebook.uri if notebook is not None and notebook.uri in self.tracked else None

    async def snapshot(self, uri: str) -> Snapshot | None:
        """The analysis of tracked document ``uri`` as the client has it now (None when it is not
        open), from a worker thread."""
        state = self.state(uri)
        if state is None:
            return None
        cached = self.snapshots.get(uri)
        if cached is not None and cached[0] == state:
            return cached[1]
        snapshot = await self.run(("analyse", uri, state), self._analysis(uri))
        if snapshot is not None and self.state(uri) == state:
            self.snapshots[uri] = (state, snapshot)
        return snapshot

    def _analysis(self, uri: str) -> Callable[[], Snapshot]:
        """The analysis of ``uri``'s current text, as a function of nothing the event loop changes."""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        units, root = self.workspace.position_codec.client_num_units, self.workspace.root_path
        elsewhere = self.open_elsewhere(uri)
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        if notebook is None:
            document = self.workspace.get_text_document(uri)
            version, text = document.version, document.source

            def work() -> Snapshot:
                snapshot = analyse(uri, version, text, path, units, root, elsewhere)
                snapshot.diagnostics()  # built here, not on the event loop
                return snapshot

            return work
        cells = [_cell(self.workspace.get_text_document(cell.document), cell.kind) for cell in notebook.cells]
        version = notebook.version

        def work_on_notebook() -> Snapshot | None:
            if not cells:
                return None
            snapshot = analyse_notebook(uri, version, cells, path, units, root, elsewhere)
            snapshot.diagnostics()
            return snapshot

        return work_on_notebook

    def open_elsewhere(self, uri: str) -> dict[str, str | None]:
        """The other open documents with a file behind them: path -> the text the editor holds
        (None for a notebook, whose cells are not compared with its file). Facts read from the
        disk stand for the project only where these are saved (``lsp_document.project_facts``)."""
        found: dict[str, str | None] = {}
        for other in self.tracked:
            if other == uri or not other.startswith("file:"):
                continue
            notebook = self.workspace.get_notebook_document(notebook_uri=other)
            found[to_fs_path(other)] = None if notebook is not None else self.workspace.get_text_document(other).source
        return found

    async def publish(self, uri: str) -> None:
        self.cancel_timer(uri)
        state = self.state(uri)
        try:
            snapshot = await self.snapshot(uri)
        except Exception as err:  # a bug of ours costs this document's diagnostics, never the server
            logger.exception("cannot analyse %s", uri)
            self.report_server_error(err, "analysis")
            return
        if state is None or self.state(uri) != state:
            return  # closed or changed meanwhile: the newer version publishes its own
        by_uri = snapshot.diagnostics() if snapshot is not None else {}
        for gone in self.published.get(uri, set()) - set(by_uri):  # a cell deleted since
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(gone, []))
        self.published[uri] = set(by_uri)
        for text_uri, diagnostics in by_uri.items():
            view = snapshot.view_for(text_uri)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(text_uri, diagnostics, version=view.version))

    def publish_soon(self, uri: str) -> None:
        task = asyncio.ensure_future(self.publish(uri))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def publish_later(self, uri: str) -> None:
        self.cancel_timer(uri)
        self.state(uri)  # work queued for the version before this change is now superseded
        self.timers[uri] = asyncio.get_running_loop().call_later(self.debounce, self.publish_soon, uri)

    def cancel_timer(self, uri: str) -> None:
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()

    def forget(self, uri: str) -> None:
        """Stop tracking ``uri`` and clear every diagnostic it published."""
        self.cancel_timer(uri)
        self.tracked.discard(uri)
        self.snapshots.pop(uri, None)
        self.saves.pop(uri, None)
        self.latest.pop(uri, None)
        for text_uri in self.published.pop(uri, {uri}):
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(text_uri, []))

    # --- code actions ------------------------------------------------------------------------

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        owner = self.owner(uri)
        state = self.state(owner) if owner is not None else None  # what the snapshot below is of
        snapshot = await self.snapshot(owner) if state is not None else None
        view = snapshot.view_for(uri) if snapshot is not None else None
        if view is None:
            return None
        wanted = params.context.only
        actions: list[types.CodeAction] = []
        if _wants(wanted, types.CodeActionKind.QuickFix):
            in_range = [f for f in snapshot.findings_in(uri) if _overlaps(snapshot.finding_range(f), params.range)]
            actions += await self.quick_fixes(owner, state, snapshot, view, in_range)
        kinds = [FIX_ALL_KIND] + ([NOTEBOOK_FIX_ALL_KIND] if snapshot.is_notebook and wanted else [])
        for kind in kinds:
            if _wants(wanted, kind) and snapshot.has_safe_fix():
                action = await self.fix_all_action(owner, state, snapshot, kind)
                if action is not None:
                    actions.append(action)
        return actions

    async def quick_fixes(self, owner: str, state: tuple, snapshot: Snapshot, view: TextView,
                          findings: list[Finding]) -> list[types.CodeAction]:
        """A fix for each fixable finding, then a "Disable DDPnnn for this line" for each line and
        code, every title unique in the menu."""
        titled: list[tuple[str, Finding]] = []
        fixes: list[tuple[list[Change], Finding]] = []
        for finding in findings:
            if finding.fixable:
                changes = await self.run(("fix", owner, state, finding.key), snapshot.single_fix, finding)
                if changes:
                    titled.append((snapshot.fix_title(finding, changes), finding))
                    fixes.append((changes, finding))
        silences: dict[tuple[int, str], tuple[Change, list[Finding]]] = {}
        if findings:
            await self.run(("comments", owner, state, view.uri), view.comment_places)  # tokenizes the text, once
        for finding in findings:
            place = (finding.line, finding.code)
            if place in silences:  # two findings of one rule on one line: one comment silences both
                silences[place][1].append(finding)
                continue
            change = view.noqa_change(finding.line, finding.code)
            if change is not None:
                silences[place] = (change, [finding])
                titled.append((f"Disable {finding.code} for this line", finding))
        titles = iter(unique_titles(titled))
        # An unsafe fix is never the preferred action (editors apply a preferred quick fix on a
        # single key press); its title says it is unsafe.
        actions = [
            types.CodeAction(title=next(titles), kind=types.CodeActionKind.QuickFix,
                             diagnostics=[snapshot.finding_diagnostic(finding)], is_preferred=finding.safe,
                             edit=self.workspace_edit(snapshot, changes))
            for changes, finding in fixes
        ]
        actions += [
            types.CodeAction(title=next(titles), kind=types.CodeActionKind.QuickFix,
                             diagnostics=[snapshot.finding_diagnostic(f) for f in silenced],
                             edit=self.workspace_edit(snapshot, [change]))
            for change, silenced in silences.values()
        ]
        return actions

    async def fix_all_action(self, owner: str, state: tuple, snapshot: Snapshot, kind: str) -> types.CodeAction | None:
        """"Fix all": its edit left to ``codeAction/resolve`` where the client resolves edits (the
        fix runs only when the action is picked), else computed now."""
        if self.resolves_edits():
            return types.CodeAction(title=FIX_ALL_TITLE, kind=kind, data={"uri": owner, "version": snapshot.version})
        changes = await self.run(("fix all", owner, state), snapshot.fix_all)
        if not changes:
            return None
        return types.CodeAction(title=FIX_ALL_TITLE, kind=kind, edit=self.workspace_edit(snapshot, changes))

    async def resolve(self, action: types.CodeAction) -> types.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        owner = data.get("uri")
        state = self.state(owner) if isinstance(owner, str) else None
        snapshot = await self.snapshot(owner) if state is not None else None
        if snapshot is None or snapshot.version != data.get("version") or self.state(owner) != state:
            raise JsonRpcContentModified("the document changed since this action was offered; ask again")
        changes = await self.run(("fix all", owner, state), snapshot.fix_all)
        action.edit = self.workspace_edit(snapshot, changes or [])
        return action

    def resolves_edits(self) -> bool:
        support = get_capability(self.client_capabilities, "text_document.code_action.resolve_support", None)
        return support is not None and "edit" in (support.properties or [])

    def workspace_edit(self, snapshot: Snapshot, changes: Sequence[Change]) -> types.WorkspaceEdit:
        """The edits for the versions they were computed on, where the client can check versions."""
        by_uri = snapshot.text_edits(changes)
        if not by_uri and not snapshot.is_notebook:
            by_uri = {snapshot.uri: []}
        if get_capability(self.client_capabilities, "workspace.workspace_edit.document_changes", False):
            return types.WorkspaceEdit(document_changes=[
                types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri, snapshot.view_for(uri).version), edits)
                for uri, edits in by_uri.items()
            ])
        return types.WorkspaceEdit(changes=by_uri)


def _cell(document, kind: types.NotebookCellKind) -> Cell:
    if kind == types.NotebookCellKind.Markup:
        cell_type = "markdown"
    else:  # code in another language (a %%sql cell's, say) is not the engine's
        cell_type = "code" if document.language_id in (None, "", "python") else "raw"
    return Cell(document.uri, document.version, cell_type, document.source)


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
    async def did_open(ls: DdpfixServer, params: types.DidOpenTextDocumentParams) -> None:
        if _is_python(params.text_document) and ls.workspace.get_notebook_document(cell_uri=params.text_document.uri) is None:
            ls.tracked.add(params.text_document.uri)
            await ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DdpfixServer, params: types.DidChangeTextDocumentParams) -> None:
        if params.text_document.uri in ls.tracked:
            ls.publish_later(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def did_save(ls: DdpfixServer, params: types.DidSaveTextDocumentParams) -> None:
        if params.text_document.uri in ls.tracked:
            ls.saves[params.text_document.uri] = ls.saves.get(params.text_document.uri, 0) + 1
            await ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DdpfixServer, params: types.DidCloseTextDocumentParams) -> None:
        if params.text_document.uri in ls.tracked:
            ls.forget(params.text_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    async def notebook_did_open(ls: DdpfixServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.tracked.add(params.notebook_document.uri)
        await ls.publish(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_did_change(ls: DdpfixServer, params: types.DidChangeNotebookDocumentParams) -> None:
        if params.notebook_document.uri in ls.tracked:
            ls.publish_later(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    async def notebook_did_save(ls: DdpfixServer, params: types.DidSaveNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        if uri in ls.tracked:
            ls.saves[uri] = ls.saves.get(uri, 0) + 1
            await ls.publish(uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: DdpfixServer, params: types.DidCloseNotebookDocumentParams) -> None:
        if params.notebook_document.uri in ls.tracked:
            ls.forget(params.notebook_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND, NOTEBOOK_FIX_ALL_KIND],
                                resolve_provider=True),
    )
    async def code_action(ls: DdpfixServer, params: types.CodeActionParams):
        return await ls.code_actions(params)

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: DdpfixServer, params: types.CodeAction) -> types.CodeAction:
        return await ls.resolve(params)

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
