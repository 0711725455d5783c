"""The documents a language client holds open, kept as it says they change (``textDocument/did*``,
``notebookDocument/did*``), and the arithmetic of its positions.

Positions are 0-based lines (ended by \\r\\n, \\r or \\n, as LSP counts them) and columns in the
client's position encoding: UTF-16 code units unless the client offers another we know
(``choose_encoding``). Params come as plain dicts; a malformed one raises InvalidParams.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from ddpfix.lsp_rpc import InvalidParams, need, optional

#: Counts a string in the client's position units.
Units = Callable[[str], int]

DEFAULT_ENCODING = "utf-16"
MARKUP_CELL = 1  # NotebookCellKind.Markup; 2 is Code


def _utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _utf8_units(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


UNITS: dict[str, Units] = {"utf-8": _utf8_units, "utf-16": _utf16_units, "utf-32": len}

_LINE_END = re.compile(r"\r\n|\r|\n")
_DRIVE = re.compile(r"/[A-Za-z]:")


def choose_encoding(capabilities: Any) -> str:
    """The first position encoding the client offers that we count (``general.positionEncodings``)."""
    offered = capability(capabilities, "general", "positionEncodings")
    for encoding in offered if isinstance(offered, list) else []:
        if encoding in UNITS:
            return encoding
    return DEFAULT_ENCODING


def capability(capabilities: Any, *keys: str) -> Any:
    """A client capability by its path, None where any step is missing."""
    for key in keys:
        if not isinstance(capabilities, dict):
            return None
        capabilities = capabilities.get(key)
    return capabilities


def path_of(uri: str) -> str | None:
    """The file a ``file:`` URI names (a Windows drive letter lower-cased, a UNC host kept), else None."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    if parts.scheme != "file":
        return None
    path = unquote(parts.path)
    if parts.netloc and path:
        path = f"//{parts.netloc}{path}"
    elif _DRIVE.match(path):
        path = path[1].lower() + path[2:]
    return path.replace("/", "\\") if os.name == "nt" else path


# --- text documents ------------------------------------------------------------------------------


@dataclass
class TextDocument:
    uri: str
    language_id: str | None
    version: int | None
    text: str

    def offset(self, position: Any, units: Units) -> int:
        """The index in the text of an LSP position; one past a line's end is its end, one past
        the last line the text's end."""
        line = max(need(position, "line", int, "position"), 0)
        character = need(position, "character", int, "position")
        starts = [0] + [match.end() for match in _LINE_END.finditer(self.text)]
        if line >= len(starts):
            return len(self.text)
        start = starts[line]
        end = starts[line + 1] if line + 1 < len(starts) else len(self.text)
        content = self.text[start:end].rstrip("\r\n")
        if units is len or content.isascii():
            return start + min(max(character, 0), len(content))
        counted = 0
        for index, char in enumerate(content):
            if counted >= character:
                return start + index
            counted += units(char)
        return start + len(content)

    def apply(self, change: Any, units: Units) -> None:
        """One ``TextDocumentContentChangeEvent``: the whole text, or a range of it replaced."""
        new = need(change, "text", str, "contentChange")
        where = optional(change, "range", dict, "contentChange")
        if where is None:
            self.text = new
            return
        start, end = sorted((self.offset(need(where, "start", dict, "range"), units),
                             self.offset(need(where, "end", dict, "range"), units)))
        self.text = self.text[:start] + new + self.text[end:]


def _text_document_item(item: Any) -> TextDocument:
    return TextDocument(need(item, "uri", str, "textDocument"), optional(item, "languageId", str, "textDocument"),
                        optional(item, "version", int, "textDocument"), need(item, "text", str, "textDocument"))


# --- notebooks -----------------------------------------------------------------------------------


@dataclass
class NotebookCell:
    kind: int  # 1 markup, 2 code
    document: str  # its text document's URI


@dataclass
class Notebook:
    uri: str
    version: int | None
    cells: list[NotebookCell] = field(default_factory=list)


def _cells(items: Any, where: str) -> list[NotebookCell]:
    if not isinstance(items, list):
        raise InvalidParams(f"{where} must be an array")
    return [NotebookCell(need(cell, "kind", int, where), need(cell, "document", str, where)) for cell in items]


class Workspace:
    """The open text documents and notebooks (a notebook's cells are text documents of their own)."""

    def __init__(self, root_path: str | None, encoding: str = DEFAULT_ENCODING):
        self.root_path = root_path
        self.encoding = encoding
        self.units: Units = UNITS[encoding]
        self.documents: dict[str, TextDocument] = {}
        self.notebooks: dict[str, Notebook] = {}
        self.cell_owner: dict[str, str] = {}  # a cell's text document URI -> its notebook's URI

    def document(self, uri: str) -> TextDocument | None:
        return self.documents.get(uri)

    def notebook(self, uri: str) -> Notebook | None:
        return self.notebooks.get(uri)

    def notebook_of_cell(self, cell_uri: str) -> Notebook | None:
        owner = self.cell_owner.get(cell_uri)
        return self.notebooks.get(owner) if owner is not None else None

    # --- text documents --------------------------------------------------------------------------

    def open_text(self, params: Any) -> TextDocument:
        document = _text_document_item(need(params, "textDocument", dict))
        self.documents[document.uri] = document
        return document

    def change_text(self, params: Any) -> str:
        """Apply a didChange's changes in order; the document's URI."""
        identifier = need(params, "textDocument", dict)
        uri = need(identifier, "uri", str, "textDocument")
        changes = need(params, "contentChanges", list)
        self._change(uri, optional(identifier, "version", int, "textDocument"), changes)
        return uri

    def _change(self, uri: str, version: int | None, changes: list) -> None:
        document = self.documents.get(uri)
        if document is None:
            raise InvalidParams(f"{uri} is not open")
        for change in changes:
            document.apply(change, self.units)
        document.version = version

    def close_text(self, params: Any) -> str:
        uri = need(need(params, "textDocument", dict), "uri", str, "textDocument")
        self.documents.pop(uri, None)
        self.cell_owner.pop(uri, None)
        return uri

    # --- notebooks -------------------------------------------------------------------------------

    def open_notebook(self, params: Any) -> Notebook:
        item = need(params, "notebookDocument", dict)
        notebook = Notebook(need(item, "uri", str, "notebookDocument"), optional(item, "version", int, "notebookDocument"),
                            _cells(item.get("cells"), "notebookDocument.cells"))
        documents = [_text_document_item(cell) for cell in need(params, "cellTextDocuments", list)]
        self.notebooks[notebook.uri] = notebook
        for document in documents:
            self._open_cell(notebook.uri, document)
        return notebook

    def _open_cell(self, notebook_uri: str, document: TextDocument) -> None:
        self.documents[document.uri] = document
        self.cell_owner[document.uri] = notebook_uri

    def change_notebook(self, params: Any) -> str:
        """Apply a notebook didChange: its version, cell kinds, cells added or removed (the
        ``structure``), and the cells' text changes; the notebook's URI."""
        identifier = need(params, "notebookDocument", dict)
        uri = need(identifier, "uri", str, "notebookDocument")
        notebook = self.notebooks.get(uri)
        if notebook is None:
            raise InvalidParams(f"{uri} is not open")
        notebook.version = optional(identifier, "version", int, "notebookDocument")
        cells = optional(need(params, "change", dict), "cells", dict, "change")
        if cells is None:
            return uri
        by_document = {cell.document: cell for cell in notebook.cells}
        for changed in _cells(cells.get("data") or [], "change.cells.data"):
            if changed.document in by_document:
                by_document[changed.document].kind = changed.kind
        structure = optional(cells, "structure", dict, "change.cells")
        if structure is not None:
            array = need(structure, "array", dict, "change.cells.structure")
            start = need(array, "start", int, "structure.array")
            deleted = need(array, "deleteCount", int, "structure.array")
            notebook.cells[start:start + deleted] = _cells(array.get("cells") or [], "structure.array.cells")
            for item in structure.get("didOpen") or []:
                self._open_cell(uri, _text_document_item(item))
            for item in structure.get("didClose") or []:
                closed = need(item, "uri", str, "structure.didClose")
                self.documents.pop(closed, None)
                self.cell_owner.pop(closed, None)
        for text in cells.get("textContent") or []:
            identifier = need(text, "document", dict, "textContent")
            self._change(need(identifier, "uri", str, "textContent.document"),
                         optional(identifier, "version", int, "textContent.document"), need(text, "changes", list, "textContent"))
        return uri

    def close_notebook(self, params: Any) -> str:
        uri = need(need(params, "notebookDocument", dict), "uri", str, "notebookDocument")
        notebook = self.notebooks.pop(uri, None)
        cells = [cell.document for cell in notebook.cells] if notebook is not None else []
        for item in params.get("cellTextDocuments") or []:
            if isinstance(item, dict) and isinstance(item.get("uri"), str):
                cells.append(item["uri"])
        for cell in cells:
            if self.cell_owner.get(cell) == uri:
                self.documents.pop(cell, None)
                self.cell_owner.pop(cell, None)
        return uri
