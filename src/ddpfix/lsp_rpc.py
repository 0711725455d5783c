"""JSON-RPC 2.0 over stdin/stdout as the Language Server Protocol uses it: ``ddpfix lsp``'s transport.

Our own small layer on plain dicts (as Ruff's server has its own), because the protocol-types
library a general LSP framework needs costs most of a second to import, and an editor waits for the
server's first diagnostics on every start. What it does:

- framing: ``Content-Length: N`` headers (others, such as Content-Type, are skipped), a blank
  line, N bytes of UTF-8 JSON. A header block without a usable length is answered with a parse
  error, and reading starts again at the next ``Content-Length`` header, even one that follows
  the unread body on its line (what a client's wrong length leaves behind);
- dispatch: requests (answered by their ``id`` with a result or an error, never left waiting),
  notifications (never answered) and responses (we send no requests, so they are logged);
  JSON-RPC's error codes, and LSP's RequestCancelled and ContentModified;
- each request runs as an asyncio task, so a slow one holds up no other; ``$/cancelRequest``
  answers a pending one at once with RequestCancelled (an unknown id is ignored);
- the LSP lifecycle: requests before ``initialize`` get ServerNotInitialized and notifications
  are dropped; ``shutdown`` cancels what is pending and refuses later requests; ``exit`` ends the
  process at once, 0 after a shutdown request and 1 without; end of input (the client gone) ends
  the loop, with the same codes.

Everything runs on one asyncio loop, so handlers need no locks; stdin is read in a thread of its
own and its messages are handled in the order they came.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import re
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002
REQUEST_CANCELLED = -32800
CONTENT_MODIFIED = -32801

LOG_ERROR = 1  # window/logMessage's MessageType.Error

logger = logging.getLogger("ddpfix.lsp")

Handler = Callable[[Any], Any]


class RpcError(Exception):
    """An error response: raised by a request handler, sent to the client as ``{code, message}``."""

    code = INTERNAL_ERROR

    def __init__(self, message: str, code: int | None = None):
        super().__init__(message)
        if code is not None:
            self.code = code

    def to_json(self) -> dict:
        return {"code": self.code, "message": str(self)}


class InvalidParams(RpcError):
    code = INVALID_PARAMS


class ContentModified(RpcError):
    code = CONTENT_MODIFIED


# --- reading params ------------------------------------------------------------------------------


def need(params: Any, key: str, kind: type | tuple[type, ...], where: str = "params") -> Any:
    """``params[key]``, which must be a ``kind``; InvalidParams (-32602) otherwise."""
    if not isinstance(params, dict):
        raise InvalidParams(f"{where} must be an object")
    value = params.get(key)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):  # True is an int
        raise InvalidParams(f"{where}.{key} is missing or not {_kind_name(kind)}")
    return value


def optional(params: Any, key: str, kind: type | tuple[type, ...], where: str = "params") -> Any:
    """``params[key]`` if given (and not null), which must then be a ``kind``; else None."""
    if isinstance(params, dict) and params.get(key) is None:
        return None
    return need(params, key, kind, where)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {dict: "an object", list: "an array", str: "a string", int: "an integer", bool: "a boolean"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


# --- framing -------------------------------------------------------------------------------------


class FrameError(Exception):
    """A message whose header block gives no usable Content-Length: its body cannot be found."""


# At the end of a header line; bytes before it are the rest of a body whose length was wrong.
_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)[ \t]*\r?\n\Z", re.IGNORECASE)
_HEADER = re.compile(rb"[A-Za-z0-9-]+[ \t]*:.*\r?\n\Z", re.DOTALL)
_CHUNK = 1 << 20  # a body is read a chunk at a time: a huge bogus length allocates nothing up front


def read_frame(stream: BinaryIO) -> bytes | None:
    """The body of the next message, or None at the end of the input (mid-message included)."""
    length = None
    headers = False
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            if length is not None:
                break
            if headers:
                raise FrameError("a message without a valid Content-Length header")
            continue  # a stray blank line between messages
        headers = True
        match = _CONTENT_LENGTH.search(line)
        if match is not None:
            if match.start():
                logger.warning("skipped %d bytes of unreadable input before a message", match.start())
            length = int(match.group(1))
        elif not _HEADER.match(line):
            logger.warning("skipped %d bytes of unreadable input", len(line))
            headers = length is not None
    parts, left = [], length
    while left:
        part = stream.read(min(left, _CHUNK))
        if not part:
            return None
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def frame(message: dict) -> bytes:
    """``message`` framed for the wire (TypeError or ValueError where it is no JSON)."""
    try:
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (an editor's text mid-edit): escaped, so still UTF-8
        body = json.dumps(message, separators=(",", ":")).encode("ascii")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


# --- the connection ------------------------------------------------------------------------------


def _is_id(value: Any) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


class Connection:
    """One client's connection: its handlers by method, the requests under way, the lifecycle."""

    def __init__(self, name: str):
        self.name = name  # prefixes what it tells the client's log
        self.requests: dict[str, Handler] = {}
        self.notifications: dict[str, Handler] = {}
        self.pending: dict[int | str, asyncio.Task] = {}
        self.tasks: set[asyncio.Task] = set()  # work under way that answers no request (notifications')
        self.initialized = False
        self.shutdown_requested = False
        self.on_shutdown: list[Callable[[], None]] = []
        self.output: BinaryIO | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._done: asyncio.Future | None = None
        self.requests["shutdown"] = self._shutdown

    def request(self, method: str) -> Callable[[Handler], Handler]:
        """Register ``handler(params)`` (a function or a coroutine function) for requests ``method``."""
        def register(handler: Handler) -> Handler:
            self.requests[method] = handler
            return handler
        return register

    def notification(self, method: str) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            self.notifications[method] = handler
            return handler
        return register

    # --- sending ---------------------------------------------------------------------------------

    def send(self, message: dict) -> None:
        message = {"jsonrpc": "2.0", **message}
        try:
            data = frame(message)
        except (TypeError, ValueError) as err:  # a bug of ours; a request still gets its answer
            logger.error("cannot send %s: %s", message.get("method") or f"the answer to {message.get('id')!r}", err)
            if "method" in message or "error" in message:
                return
            data = frame({"jsonrpc": "2.0", "id": message["id"], "error": RpcError(f"internal error: {err}").to_json()})
        try:
            self.output.write(data)
            self.output.flush()
        except (OSError, ValueError):  # the pipe is gone (or closed): so is the client
            logger.error("cannot write to the client; stopping")
            self._stop()

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def respond(self, request_id: int | str | None, result: Any = None, error: RpcError | None = None) -> None:
        self.send({"id": request_id, "error": error.to_json()} if error is not None else {"id": request_id, "result": result})

    def log_to_client(self, message: str) -> None:
        """A line in the client's log (``window/logMessage``, as an error)."""
        self.notify("window/logMessage", {"type": LOG_ERROR, "message": f"{self.name}: {message}"})

    # --- serving ---------------------------------------------------------------------------------

    def serve(self, stdin: BinaryIO, stdout: BinaryIO) -> int:
        """Answer the client until it goes (end of input): 0 where it asked for a shutdown first,
        else 1 (an ``exit`` notification ends the process from within, with the same codes)."""
        self.output = stdout
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self._done = self.loop.create_future()
        threading.Thread(target=self._read, args=(stdin,), name="ddpfix-stdin", daemon=True).start()
        try:
            self.loop.run_until_complete(self._done)
        finally:
            for task in [*self.pending.values(), *self.tasks]:
                task.cancel()
        return self.exit_code()

    def exit_code(self) -> int:
        return 0 if self.shutdown_requested else 1

    def _read(self, stdin: BinaryIO) -> None:
        """The reader thread: each message parsed here, handled on the loop in arrival order."""
        post = self.loop.call_soon_threadsafe
        while True:
            try:
                body = read_frame(stdin)
            except FrameError as err:
                post(self._unreadable, str(err))
                continue
            except (OSError, ValueError):
                body = None
            if body is None:
                post(self._stop)
                return
            try:
                message = json.loads(body.decode("utf-8"))  # LSP's one encoding (bytes would be sniffed)
            except (ValueError, RecursionError) as err:  # bad UTF-8 is a ValueError too
                post(self._unreadable, f"a message that is not JSON: {err}")
                continue
            post(self._dispatch, message)

    def _stop(self) -> None:
        if self._done is not None and not self._done.done():
            self._done.set_result(None)

    def _unreadable(self, why: str) -> None:
        logger.warning("unreadable message: %s", why)
        self.respond(None, error=RpcError(f"Parse error: {why}", PARSE_ERROR))

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):  # LSP sends no batches
            self._invalid(None, "a message must be a JSON object")
            return
        method, has_id, request_id = message.get("method"), "id" in message, message.get("id")
        if message.get("jsonrpc") != "2.0":
            self._invalid(request_id if _is_id(request_id) else None, 'not a JSON-RPC 2.0 message ("jsonrpc": "2.0" missing)')
        elif method is None and has_id and ("result" in message or "error" in message):
            logger.info("ignored a response to id %r: this server sends no requests", request_id)
        elif not isinstance(method, str):
            self._invalid(request_id if _is_id(request_id) else None, "a message needs a method (a string)")
        elif has_id and not _is_id(request_id):
            self._invalid(None, "a request's id must be an integer or a string")
        elif has_id:
            self._request(request_id, method, message.get("params"))
        else:
            self._notification(method, message.get("params"))

    def _invalid(self, request_id, why: str) -> None:
        logger.warning("invalid message: %s", why)
        self.respond(request_id, error=RpcError(f"Invalid request: {why}", INVALID_REQUEST))

    # --- requests --------------------------------------------------------------------------------

    def _request(self, request_id: int | str, method: str, params: Any) -> None:
        handler = self.requests.get(method)
        if request_id in self.pending:
            error = RpcError(f"id {request_id!r} is in use by a request still under way", INVALID_REQUEST)
        elif method == "initialize" and self.initialized:
            error = RpcError("initialize was already sent", INVALID_REQUEST)
        elif method != "initialize" and not self.initialized:
            error = RpcError("the server is not initialized yet", SERVER_NOT_INITIALIZED)
        elif self.shutdown_requested:
            error = RpcError("the server is shutting down", INVALID_REQUEST)
        elif handler is None:
            error = RpcError(f"Method not found: {method}", METHOD_NOT_FOUND)
        elif method == "initialize":
            self._initialize(request_id, handler, params)
            return
        else:
            task = self.loop.create_task(self._run(handler, params))
            self.pending[request_id] = task
            task.add_done_callback(lambda done: self._answer(request_id, method, done))
            return
        logger.warning("request %r (%s) refused: %s", request_id, method, error)
        self.respond(request_id, error=error)

    def _initialize(self, request_id: int | str, handler: Handler, params: Any) -> None:
        """Answered at once, not in a task: the messages after it are then handled as initialized."""
        try:
            result = handler(params)
        except RpcError as err:
            logger.warning("initialize: %s", err)
            self.respond(request_id, error=err)
            return
        except Exception as err:
            logger.error("initialize failed", exc_info=err)
            self.respond(request_id, error=RpcError(f"internal error: {type(err).__name__}: {err}"))
            return
        self.initialized = True
        self.respond(request_id, result)

    async def _run(self, handler: Handler, params: Any) -> Any:
        result = handler(params)
        return await result if inspect.isawaitable(result) else result

    def _answer(self, request_id: int | str, method: str, task: asyncio.Task) -> None:
        if self.pending.get(request_id) is task:
            del self.pending[request_id]
        if task.cancelled():
            self.respond(request_id, error=RpcError(f"request {request_id!r} was cancelled", REQUEST_CANCELLED))
            return
        error = task.exception()
        if error is None:
            self.respond(request_id, task.result())
            return
        if isinstance(error, RpcError):
            logger.warning("%s request %r: %s", method, request_id, error)
        else:  # a bug of ours: the client gets an error response, the log the traceback
            logger.error("%s request %r failed", method, request_id, exc_info=error)
            error = RpcError(f"internal error: {type(error).__name__}: {error}", INTERNAL_ERROR)
        self.respond(request_id, error=error)

    def _shutdown(self, params: Any) -> None:
        """The ``shutdown`` request: what is pending is cancelled, later requests refused."""
        for task in list(self.pending.values()):
            if task is not asyncio.current_task():
                task.cancel()
        self.shutdown_requested = True
        for hook in self.on_shutdown:
            hook()

    # --- notifications ---------------------------------------------------------------------------

    def _notification(self, method: str, params: Any) -> None:
        if method == "exit":
            # Nothing is buffered (each message is flushed as sent); the workers' threads may be
            # busy with a fix nobody waits for any more, so the process does not wait for them.
            logging.shutdown()
            os._exit(self.exit_code())
        if not self.initialized or self.shutdown_requested:
            logger.info("dropped %s: %s", method, "not initialized yet" if not self.initialized else "shutting down")
            return
        if method == "$/cancelRequest":
            self._cancel(params)
            return
        handler = self.notifications.get(method)
        if handler is None:
            # "$/" notifications are optional by the protocol's rules: no need to say so.
            (logger.debug if method.startswith("$/") else logger.warning)("ignored notification %s: not handled", method)
            return
        try:
            result = handler(params)
        except Exception as err:
            self._notification_failed(method, err)
            return
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            self.tasks.add(task)
            task.add_done_callback(lambda done: self._notification_done(method, done))

    def _notification_done(self, method: str, task: asyncio.Task) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._notification_failed(method, task.exception())

    def _notification_failed(self, method: str, error: BaseException) -> None:
        """Logged, and said in the client's log; no notification is ever answered."""
        if isinstance(error, RpcError):
            logger.warning("malformed %s notification: %s", method, error)
        else:
            logger.error("%s notification failed", method, exc_info=error)
        self.log_to_client(f"{method}: {error}")

    def _cancel(self, params: Any) -> None:
        request_id = params.get("id") if isinstance(params, dict) else None
        task = self.pending.get(request_id) if _is_id(request_id) else None
        if task is None:
            logger.debug("cancel for %r ignored: no such request under way", request_id)
        else:
            task.cancel()
