"""The language server, ``ddpfix lsp``: DDP findings as diagnostics, their fixes as code actions.

A front-end over ``sources.fix_source``, never a second pipeline (see ``lsp_document``). It speaks
LSP over stdin/stdout through its own JSON-RPC layer on plain dicts (``lsp_rpc``; the open documents
are ``lsp_workspace``'s), which starts in a fraction of the time a general LSP framework takes:

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
from typing import Any

from ddpfix import __version__, records
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
from ddpfix.lsp_rpc import Connection, ContentModified, InvalidParams, need, optional
from ddpfix.lsp_workspace import MARKUP_CELL, TextDocument, Workspace, capability, choose_encoding, path_of

DEBOUNCE_SECONDS = 0.3
PYTHON_SUFFIXES = (".py", ".pyi")
NOTEBOOK_TYPE = "jupyter-notebook"
QUICK_FIX = "quickfix"
#: Worker threads: enough that a long "fix all" (or one cancelled, which runs on) leaves others free.
WORKERS = 4
INCREMENTAL = 2  # TextDocumentSyncKind.Incremental

logger = logging.getLogger("ddpfix.lsp")

USAGE = """\
Usage: ddpfix lsp [--stdio]

  Start the ddpfix language server on stdin/stdout (--stdio, accepted for editors that pass it, is
  the only transport). Diagnostics, quick fixes and "Fix all DDP issues" for Python documents and
  Jupyter notebook cells, with the [tool.ddpfix] settings of the nearest pyproject.toml. A folder
  named lsp is checked with 'ddpfix ./lsp'.
"""


class DdpfixServer(Connection):
    def __init__(self, debounce: float = DEBOUNCE_SECONDS):
        super().__init__("ddpfix")
        self.debounce = debounce
        self.workspace = Workspace(None)  # replaced on initialize
        self.client_capabilities: dict = {}
        self.tracked: set[str] = set()  # open Python documents and notebooks, by URI
        self.snapshots: dict[str, tuple[tuple, Snapshot]] = {}  # the latest analysis of each, by its state
        self.saves: dict[str, int] = {}  # saves of each: a save may change the pyproject.toml that applies
        self.published: dict[str, set[str]] = {}  # the text documents each has diagnostics in
        self.jobs: dict[tuple, asyncio.Future] = {}  # work under way in the worker threads
        self.latest: dict[str, tuple] = {}  # each document's state as last seen (read by the workers)
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.executor = ThreadPoolExecutor(WORKERS, thread_name_prefix="ddpfix")
        self.on_shutdown.append(self.cancel_timers)

    def initialize(self, params: Any) -> dict:
        """The workspace, and what this server does for this client."""
        capabilities = optional(params, "capabilities", dict) or {}
        root_uri = optional(params, "rootUri", str)
        root_path = path_of(root_uri) if root_uri is not None else optional(params, "rootPath", str)
        encoding = choose_encoding(capabilities)
        self.client_capabilities = capabilities
        self.workspace = Workspace(root_path, encoding)
        found: dict[str, Any] = {
            "positionEncoding": encoding,
            "textDocumentSync": {"openClose": True, "change": INCREMENTAL, "save": {"includeText": False}},
            "codeActionProvider": {"codeActionKinds": [QUICK_FIX, FIX_ALL_KIND, NOTEBOOK_FIX_ALL_KIND], "resolveProvider": True},
            # Folders are accepted and need nothing: each file's settings come from its own path.
            "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True}},
        }
        if capabilities.get("notebookDocument") is not None:
            found["notebookDocumentSync"] = {
                "notebookSelector": [{"notebook": NOTEBOOK_TYPE, "cells": [{"language": "python"}]}], "save": True}
        return {"capabilities": found, "serverInfo": {"name": "ddpfix", "version": __version__}}

    def report_server_error(self, error: Exception, source: str) -> None:
        """A failure of ours while analysing a document: a line in the client's log, never a pop-up."""
        self.log_to_client(f"{source}: {error}")

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
        notebook = self.workspace.notebook(uri)
        if notebook is None:
            state = (self.saves.get(uri, 0), self.workspace.document(uri).version)
        else:
            cells = tuple((cell.document, self._cell_document(cell.document).version) for cell in notebook.cells)
            state = (self.saves.get(uri, 0), notebook.version, cells)
        self.latest[uri] = state
        return state

    def _cell_document(self, uri: str) -> TextDocument:
        # A cell the client listed without sending its text is an empty one.
        return self.workspace.document(uri) or TextDocument(uri, None, None, "")

    def owner(self, uri: str) -> str | None:
        """The tracked document that text document ``uri`` belongs to: itself, or its notebook."""
        if uri in self.tracked:
            return uri
        notebook = self.workspace.notebook_of_cell(uri)
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
        path = path_of(uri)
        units, root = self.workspace.units, self.workspace.root_path
        elsewhere = self.open_elsewhere(uri)
        notebook = self.workspace.notebook(uri)
        if notebook is None:
            document = self.workspace.document(uri)
            version, text = document.version, document.text

            def work() -> Snapshot:
                snapshot = analyse(uri, version, text, path, units, root, elsewhere)
                snapshot.diagnostics()  # built here, not on the event loop
                return snapshot

            return work
        cells = [_cell(self._cell_document(cell.document), cell.kind) for cell in notebook.cells]
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
            path = path_of(other) if other != uri else None
            if path is not None:
                found[path] = None if self.workspace.notebook(other) is not None else self.workspace.document(other).text
        return found

    def publish_diagnostics(self, uri: str, diagnostics: list[dict], version: int | None = None) -> None:
        params: dict[str, Any] = {"uri": uri, "diagnostics": diagnostics}
        if version is not None:
            params["version"] = version
        self.notify("textDocument/publishDiagnostics", params)

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
            self.publish_diagnostics(gone, [])
        self.published[uri] = set(by_uri)
        for text_uri, diagnostics in by_uri.items():
            self.publish_diagnostics(text_uri, diagnostics, snapshot.view_for(text_uri).version)

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

    def cancel_timers(self) -> None:
        for uri in list(self.timers):
            self.cancel_timer(uri)

    # What a text document's or a notebook's open, change, save and close mean, once both are
    # known to the workspace (``uri``: the document or notebook, as the workspace answers it).
    def opened(self, uri: str) -> None:
        self.tracked.add(uri)
        self.publish_soon(uri)

    def changed(self, uri: str) -> None:
        if uri in self.tracked:
            self.publish_later(uri)

    def saved(self, uri: str) -> None:
        if uri in self.tracked:
            self.saves[uri] = self.saves.get(uri, 0) + 1
            self.publish_soon(uri)

    def closed(self, uri: str) -> None:
        if uri in self.tracked:
            self.forget(uri)

    def forget(self, uri: str) -> None:
        """Stop tracking ``uri`` and clear every diagnostic it published."""
        self.cancel_timer(uri)
        self.tracked.discard(uri)
        self.snapshots.pop(uri, None)
        self.saves.pop(uri, None)
        self.latest.pop(uri, None)
        for text_uri in self.published.pop(uri, {uri}):
            self.publish_diagnostics(text_uri, [])

    # --- code actions ------------------------------------------------------------------------

    async def code_actions(self, params: Any) -> list[dict] | None:
        uri = need(need(params, "textDocument", dict), "uri", str, "textDocument")
        wanted_range = _range(need(params, "range", dict))
        wanted = optional(need(params, "context", dict), "only", list, "context")
        if wanted is not None and not all(isinstance(kind, str) for kind in wanted):
            raise InvalidParams("context.only must be an array of strings")
        owner = self.owner(uri)
        state = self.state(owner) if owner is not None else None  # what the snapshot below is of
        snapshot = await self.snapshot(owner) if state is not None else None
        view = snapshot.view_for(uri) if snapshot is not None else None
        if view is None:
            return None
        actions: list[dict] = []
        if _wants(wanted, QUICK_FIX):
            in_range = [f for f in snapshot.findings_in(uri) if _overlaps(snapshot.finding_range(f), wanted_range)]
            actions += await self.quick_fixes(owner, state, snapshot, view, in_range)
        kinds = [FIX_ALL_KIND] + ([NOTEBOOK_FIX_ALL_KIND] if snapshot.is_notebook and wanted else [])
        for kind in kinds:
            if _wants(wanted, kind) and snapshot.has_safe_fix():
                action = await self.fix_all_action(owner, state, snapshot, kind)
                if action is not None:
                    actions.append(action)
        return actions

    async def quick_fixes(self, owner: str, state: tuple, snapshot: Snapshot, view: TextView,
                          findings: list[Finding]) -> list[dict]:
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
            {"title": next(titles), "kind": QUICK_FIX, "diagnostics": [snapshot.finding_diagnostic(finding)],
             "isPreferred": finding.safe, "edit": self.workspace_edit(snapshot, changes)}
            for changes, finding in fixes
        ]
        actions += [
            {"title": next(titles), "kind": QUICK_FIX, "diagnostics": [snapshot.finding_diagnostic(f) for f in silenced],
             "edit": self.workspace_edit(snapshot, [change])}
            for change, silenced in silences.values()
        ]
        return actions

    async def fix_all_action(self, owner: str, state: tuple, snapshot: Snapshot, kind: str) -> dict | None:
        """"Fix all": its edit left to ``codeAction/resolve`` where the client resolves edits (the
        fix runs only when the action is picked), else computed now."""
        if self.resolves_edits():
            return {"title": FIX_ALL_TITLE, "kind": kind, "data": {"uri": owner, "version": snapshot.version}}
        changes = await self.run(("fix all", owner, state), snapshot.fix_all)
        if not changes:
            return None
        return {"title": FIX_ALL_TITLE, "kind": kind, "edit": self.workspace_edit(snapshot, changes)}

    async def resolve(self, action: Any) -> dict:
        need(action, "title", str)  # a CodeAction, as this server sent it
        data = action.get("data") if isinstance(action.get("data"), dict) else {}
        owner = data.get("uri")
        state = self.state(owner) if isinstance(owner, str) else None
        snapshot = await self.snapshot(owner) if state is not None else None
        if snapshot is None or snapshot.version != data.get("version") or self.state(owner) != state:
            raise ContentModified("the document changed since this action was offered; ask again")
        changes = await self.run(("fix all", owner, state), snapshot.fix_all)
        return {**action, "edit": self.workspace_edit(snapshot, changes or [])}

    def resolves_edits(self) -> bool:
        properties = capability(self.client_capabilities, "textDocument", "codeAction", "resolveSupport", "properties")
        return isinstance(properties, list) and "edit" in properties

    def workspace_edit(self, snapshot: Snapshot, changes: Sequence[Change]) -> dict:
        """The edits for the versions they were computed on, where the client can check versions."""
        by_uri = snapshot.text_edits(changes)
        if not by_uri and not snapshot.is_notebook:
            by_uri = {snapshot.uri: []}
        if capability(self.client_capabilities, "workspace", "workspaceEdit", "documentChanges"):
            return {"documentChanges": [
                {"textDocument": {"uri": uri, "version": snapshot.view_for(uri).version}, "edits": edits}
                for uri, edits in by_uri.items()
            ]}
        return {"changes": by_uri}


def _cell(document: TextDocument, kind: int) -> Cell:
    if kind == MARKUP_CELL:
        cell_type = "markdown"
    else:  # code in another language (a %%sql cell's, say) is not the engine's
        cell_type = "code" if document.language_id in (None, "", "python") else "raw"
    return Cell(document.uri, document.version, cell_type, document.text)


def _wants(only: list[str] | None, kind: str) -> bool:
    """Whether a request's ``context.only`` asks for ``kind`` (kinds are dotted; a prefix covers it)."""
    return only is None or any(kind == want or kind.startswith(want + ".") for want in only)


def _range(value: dict) -> dict:
    """A Range from the client, checked: its start and end are positions."""
    for end in ("start", "end"):
        position = need(value, end, dict, "range")
        need(position, "line", int, f"range.{end}")
        need(position, "character", int, f"range.{end}")
    return value


def _overlaps(a: dict, b: dict) -> bool:
    # Touching counts: a cursor at either end of a finding asks for its fix.
    def key(position: dict) -> tuple[int, int]:
        return position["line"], position["character"]

    return key(a["start"]) <= key(b["end"]) and key(b["start"]) <= key(a["end"])


def _is_python(document: TextDocument) -> bool:
    return document.language_id == "python" or document.uri.endswith(PYTHON_SUFFIXES)


def _uri(params: Any, document: str) -> str:
    """``params[document].uri``: the text document or notebook a notification is about."""
    return need(need(params, document, dict), "uri", str, document)


def build_server(debounce: float = DEBOUNCE_SECONDS) -> DdpfixServer:
    server = DdpfixServer(debounce)
    server.request("initialize")(server.initialize)

    @server.request("textDocument/codeAction")
    async def code_action(params):
        return await server.code_actions(params)

    @server.request("codeAction/resolve")
    async def code_action_resolve(params):
        return await server.resolve(params)

    @server.notification("textDocument/didOpen")
    def did_open(params) -> None:
        document = server.workspace.open_text(params)
        if _is_python(document) and server.workspace.notebook_of_cell(document.uri) is None:
            server.opened(document.uri)

    @server.notification("notebookDocument/didOpen")
    def notebook_did_open(params) -> None:
        server.opened(server.workspace.open_notebook(params).uri)

    # The workspace applies each change and answers the document's or the notebook's URI.
    server.notification("textDocument/didChange")(lambda params: server.changed(server.workspace.change_text(params)))
    server.notification("notebookDocument/didChange")(lambda params: server.changed(server.workspace.change_notebook(params)))
    server.notification("textDocument/didSave")(lambda params: server.saved(_uri(params, "textDocument")))
    server.notification("notebookDocument/didSave")(lambda params: server.saved(_uri(params, "notebookDocument")))
    server.notification("textDocument/didClose")(lambda params: server.closed(server.workspace.close_text(params)))
    server.notification("notebookDocument/didClose")(lambda params: server.closed(server.workspace.close_notebook(params)))

    # Nothing to do: settings come from each file's pyproject.toml, folders need no bookkeeping.
    for method in ("initialized", "workspace/didChangeConfiguration", "workspace/didChangeWorkspaceFolders"):
        server.notification(method)(lambda params: None)

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
    records.make_all()  # before the worker threads first build them (records.py, Threads)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must never corrupt the protocol stream
    code = server.serve(stdin, stdout)
    # The client is gone: a fix still running in a worker thread has nobody to answer, so the
    # process ends now instead of waiting for it.
    logging.shutdown()
    sys.stderr.flush()
    os._exit(code)
