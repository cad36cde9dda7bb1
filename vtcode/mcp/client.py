"""One MCP server (a stdio process or a streamable-HTTP URL) and its `ClientSession`, held open
for the whole run.

A holder task enters the transport (`vtcode.mcp.transport.open_streams`) and `ClientSession`
contexts, initializes, lists the tools (and the resources, when the server offers them) and then
waits for `close()`; leaving those contexts is what closes the session and ends the process
(stdin closed, then SIGTERM/SIGKILL of its process group by the SDK) or the HTTP session, so all
of it happens in that one task on the run's `LoopThread`. Calls are separate tasks on the same
loop, each raced against the connection's loss. A server that exits, whose pipe or HTTP
connection breaks, or whose answer stream is cut, is marked dead once: the call in flight and
later calls fail at once with the reason, and `on_dead` tells the run (one warning item). A stdio
server's stderr goes to a pipe whose last few KiB are kept in memory, to explain a failure
without filling a disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from vtcode.config.model import McpServerConfig

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult, ReadResourceResult, Resource, Tool

__all__ = [
    "McpCallError",
    "McpServerConnection",
    "RemoteResource",
    "RemoteTool",
    "ServerUnavailable",
]

STDERR_TAIL_BYTES = 8192
MAX_LIST_PAGES = 100  # a server whose cursor never ends must not hang the start
_CONNECTION_CLOSED = -32000  # mcp.types.CONNECTION_CLOSED (not defined by every 1.x release)
T = TypeVar("T")
_STDIO_CLOSE_GRACE_SECS = 8.0  # the SDK's own teardown: 2 s, SIGTERM, 2 s, SIGKILL
_HTTP_CLOSE_GRACE_SECS = 3.0


class ServerUnavailable(Exception):
    """The server is not running (failed to start, exited, or was closed)."""


class McpCallError(Exception):
    """The server answered a call with a JSON-RPC error."""


@dataclasses.dataclass(frozen=True, slots=True)
class RemoteTool:
    """A tool as the server listed it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    # The server's annotations say a repeat is harmless (readOnlyHint or idempotentHint): the
    # only use vtcode makes of a hint is to retry such a call that got no answer in time.
    idempotent: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class RemoteResource:
    """A resource as the server listed it."""

    uri: str
    name: str
    description: str
    mime_type: str | None


class StderrTail:
    """The read end of the server's stderr pipe, drained on the loop; keeps the last bytes."""

    def __init__(self, limit: int = STDERR_TAIL_BYTES) -> None:
        r, w = os.pipe()
        os.set_blocking(r, False)
        self._r: int | None = r
        self.writer: TextIO = os.fdopen(w, "w", encoding="utf-8", errors="replace")
        self._limit = limit
        self._buf = bytearray()
        self._loop: asyncio.AbstractEventLoop | None = None

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._r is not None:
            loop.add_reader(self._r, self.drain)
            self._loop = loop

    def close_writer(self) -> None:
        """Drop our copy of the write end once the child has its own (so EOF can arrive)."""
        with contextlib.suppress(OSError):
            self.writer.close()

    def drain(self) -> None:
        while self._r is not None:
            try:
                data = os.read(self._r, 65536)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._detach()
                return
            self._buf += data
            if len(self._buf) > self._limit:
                del self._buf[: len(self._buf) - self._limit]

    def _detach(self) -> None:
        if self._r is None:
            return
        if self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_reader(self._r)
        with contextlib.suppress(OSError):
            os.close(self._r)
        self._r = None

    def close(self) -> None:
        self.close_writer()
        self.drain()
        self._detach()

    def summary(self, max_chars: int = 300) -> str:
        """The last non-empty stderr lines, on one line, clipped."""
        lines = [ln.strip() for ln in self._buf.decode("utf-8", "replace").splitlines()]
        text = " | ".join(ln for ln in lines[-4:] if ln)
        return text if len(text) <= max_chars else "…" + text[-(max_chars - 1) :]


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        out: list[BaseException] = []
        for sub in exc.exceptions:
            out.extend(_leaves(sub))
        return out
    return [exc]


def _is_broken_pipe(exc: BaseException) -> bool:
    """The pipe to a server that already exited (which of these the SDK raises is a race)."""
    import anyio

    broken = (
        anyio.ClosedResourceError,
        anyio.BrokenResourceError,
        anyio.EndOfStream,
        BrokenPipeError,
        ConnectionResetError,
    )
    return isinstance(exc, broken)


def _describe(exc: BaseException, config: McpServerConfig) -> str:
    """One line for why a session ended; the SDK wraps causes in exception groups. It names the
    endpoint with its credentials masked and never carries a header value."""
    import httpx

    from vtcode.config.mask import mask_url
    from vtcode.mcp.remote import CredentialError

    leaves = [e for e in _leaves(exc) if not isinstance(e, asyncio.CancelledError)] or [exc]
    e = leaves[0]
    if isinstance(e, FileNotFoundError | PermissionError):
        return f"cannot run {config.command!r}: {e.strerror or e}"
    if isinstance(e, CredentialError):
        return str(e)
    url = mask_url(config.url)
    if isinstance(e, httpx.HTTPStatusError):
        status = e.response.status_code
        return f"{url} answered HTTP {status} {e.response.reason_phrase}".rstrip()
    if isinstance(e, httpx.TimeoutException):
        return f"no answer from {url} in time ({type(e).__name__})"
    if isinstance(e, httpx.TransportError):
        return f"cannot reach {url}: {e or type(e).__name__}"
    if _is_broken_pipe(e):
        return "the server closed the connection"
    error = getattr(e, "error", None)  # McpError carries ErrorData
    if error is not None and getattr(error, "code", None) == _CONNECTION_CLOSED:
        return "the server closed the connection"
    message = getattr(error, "message", None) or str(e) or type(e).__name__
    return f"{type(e).__name__}: {message}" if not error else str(message)


def _resource(resource: Resource) -> RemoteResource:
    return RemoteResource(
        uri=str(resource.uri),
        name=resource.name,
        description=resource.description or getattr(resource, "title", None) or "",
        mime_type=resource.mimeType,
    )


def _remote(tool: Tool) -> RemoteTool:
    schema = tool.inputSchema if isinstance(tool.inputSchema, dict) else {"type": "object"}
    hints = getattr(tool, "annotations", None)
    return RemoteTool(
        name=tool.name,
        description=tool.description or getattr(tool, "title", None) or "",
        input_schema=dict(schema),
        idempotent=bool(
            hints is not None
            and (getattr(hints, "readOnlyHint", None) or getattr(hints, "idempotentHint", None))
        ),
    )


class McpServerConnection:
    """The session with one server; all coroutines run on the run's loop thread."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        workspace: Path,
        *,
        on_dead: Callable[[McpServerConnection], None] | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.workspace = workspace
        self.on_dead = on_dead
        self.reason: str | None = None  # why it is unavailable (None while alive)
        self.tools: list[RemoteTool] = []
        self.resources: list[RemoteResource] = []
        self._lost: asyncio.Event | None = None  # set when the server becomes unavailable
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Event | None = None
        self._closing: asyncio.Event | None = None
        self._tail: StderrTail | None = None
        self._stopping = False
        self._cancel_sent = False  # `_stop_task` cancels `_task` once, ever

    @property
    def alive(self) -> bool:
        return self._session is not None and self.reason is None

    def _with_stderr(self, reason: str) -> str:
        if self._tail is not None:
            self._tail.drain()
            tail = self._tail.summary()
            if tail:
                return f"{reason}; its stderr said: {tail}"
        return reason

    def _mark_dead(self, reason: str) -> None:
        if self.reason is not None:
            return
        self.reason = self._with_stderr(reason)
        self._session = None
        if self._lost is not None:
            self._lost.set()
        if self.on_dead is not None:
            self.on_dead(self)

    def _on_broken(self, exc: BaseException) -> None:
        """An HTTP answer stream broke: the server went away mid-answer."""
        if self._ready is not None and self._ready.is_set() and not self._stopping:
            self._mark_dead(f"the connection broke during an answer: {exc or type(exc).__name__}")

    async def _hold(self) -> None:
        from mcp import ClientSession

        from vtcode.mcp.transport import open_streams

        assert self._ready is not None and self._closing is not None and self._tail is not None
        try:
            async with (
                open_streams(
                    self.config,
                    self.workspace,
                    errlog=self._tail.writer,
                    on_started=self._tail.close_writer,
                    on_broken=self._on_broken,
                ) as (read, write),
                ClientSession(read, write) as session,
            ):
                init = await session.initialize()
                self.tools = await self._list_tools(session)
                if init.capabilities.resources is not None:
                    self.resources = await self._list_resources(session)
                self._session = session
                self._ready.set()
                await self._closing.wait()
                self._session = None
        except asyncio.CancelledError:
            if self.reason is None:
                self.reason = "stopped"
            raise
        except Exception as e:
            if self._stopping:
                self.reason = self.reason or "closed"
            elif self.reason is None:
                reason = self._with_stderr(_describe(e, self.config))
                if self._ready.is_set():
                    self._mark_dead(reason)
                else:
                    self.reason = reason
        finally:
            self._session = None
            if self.reason is None:
                self.reason = "closed"
            self._tail.close()

    @staticmethod
    async def _list_tools(session: ClientSession) -> list[RemoteTool]:
        tools: list[RemoteTool] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            page = await session.list_tools(cursor) if cursor else await session.list_tools()
            tools.extend(_remote(t) for t in page.tools)
            cursor = page.nextCursor
            if not cursor:
                break
        return tools

    @staticmethod
    async def _list_resources(session: ClientSession) -> list[RemoteResource]:
        out: list[RemoteResource] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            listing = session.list_resources(cursor) if cursor else session.list_resources()
            page = await listing
            out.extend(_resource(r) for r in page.resources)
            cursor = page.nextCursor
            if not cursor:
                break
        return out

    async def start(self) -> list[RemoteTool]:
        """Spawn, initialize and list; raises ServerUnavailable (timeout:
        `startup_timeout_seconds`, its own clock, so a short per-call `timeout_seconds` never
        races a slow start under load)."""
        self._ready = asyncio.Event()
        self._closing = asyncio.Event()
        self._lost = asyncio.Event()
        self._tail = StderrTail()
        self._tail.attach(asyncio.get_running_loop())
        self._task = asyncio.create_task(self._hold(), name=f"mcp:{self.name}")
        waiter = asyncio.create_task(self._ready.wait())
        timeout = self.config.startup_timeout_seconds
        first = asyncio.FIRST_COMPLETED
        try:
            await asyncio.wait({waiter, self._task}, timeout=timeout, return_when=first)
        except asyncio.CancelledError:  # the run was cancelled while the server started
            waiter.cancel()
            self.reason = self.reason or "start cancelled"
            await self._stop_task()
            raise
        if self._ready.is_set():
            return self.tools
        waiter.cancel()
        if not self._task.done():
            self.reason = self._with_stderr(f"no answer to initialize within {timeout:g}s")
            await self._stop_task()
        raise ServerUnavailable(self.reason or "failed to start")

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """One `tools/call`; a closed connection marks the server dead (ServerUnavailable)."""
        session = self._live()
        return await self._request(session.call_tool(tool, arguments))

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """One `resources/read` (errors as for `call`)."""
        from pydantic import AnyUrl, ValidationError

        session = self._live()
        try:
            url = AnyUrl(uri)
        except ValidationError as e:
            raise McpCallError(f"{uri!r} is not a valid URI") from e
        return await self._request(session.read_resource(url))

    def _live(self) -> ClientSession:
        session = self._session
        if session is None or self.reason is not None:
            raise ServerUnavailable(self.reason or "not started")
        return session

    async def _raced(self, request: Coroutine[Any, Any, T]) -> T:
        """`request`'s answer, unless the server is lost first (then ServerUnavailable)."""
        assert self._lost is not None
        task = asyncio.ensure_future(request)
        lost = asyncio.ensure_future(self._lost.wait())
        try:
            await asyncio.wait({task, lost}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # cancelled: the caller's deadline or the run's cancel
            task.cancel()
            raise
        finally:
            lost.cancel()
        if not task.done():  # the server was lost first
            task.cancel()
            raise ServerUnavailable(self.reason or "unavailable")
        return task.result()

    async def _request(self, request: Coroutine[Any, Any, T]) -> T:
        try:
            return await self._raced(request)
        except ServerUnavailable:
            raise
        except Exception as e:
            if _is_broken_pipe(e):
                self._mark_dead("the server closed the connection")
                raise ServerUnavailable(self.reason or "unavailable") from e
            error = getattr(e, "error", None)
            if error is None:
                raise McpCallError(f"{type(e).__name__}: {e}") from e
            if getattr(error, "code", None) == _CONNECTION_CLOSED:
                self._mark_dead("the server closed the connection")
            else:
                raise McpCallError(str(getattr(error, "message", e))) from e
        raise ServerUnavailable(self.reason or "unavailable")

    async def _stop_task(self) -> None:
        task = self._task
        if task is None or task.done():
            return
        # Once: the SDK's teardown (close stdin, wait 2 s, SIGTERM, 2 s, SIGKILL) runs inside the
        # cancelled task, and a second cancel lands in that wait, skipping the signals; anyio's
        # process close then waits forever on a server that never reads its stdin. A cancelled
        # start and the close that follows both stop the task, so the second caller only waits.
        if not self._cancel_sent:
            self._cancel_sent = True
            task.cancel()
        await asyncio.wait({task}, timeout=10.0)

    async def aclose(self) -> None:
        """Close the session and end the server process (bounded). A URL server gets less time:
        there is no process to wait for, only the session's DELETE, which a hung server would
        hold for the whole grace."""
        self._stopping = True
        if self._closing is not None:
            self._closing.set()
        task = self._task
        if task is not None and not task.done() and not (self._ready and self._ready.is_set()):
            await self._stop_task()  # still starting: no session to close politely
        elif task is not None and not task.done():
            grace = _HTTP_CLOSE_GRACE_SECS if self.config.url else _STDIO_CLOSE_GRACE_SECS
            done, _ = await asyncio.wait({task}, timeout=grace)
            if not done:
                await self._stop_task()
        if self.reason is None:
            self.reason = "closed"
