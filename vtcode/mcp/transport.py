"""The two ways to reach an MCP server: a child process over stdio, or a URL over streamable HTTP.

`open_streams` yields the (read, write) stream pair a `ClientSession` runs on, whichever the
server's config names; leaving it closes the transport (ends the process, or sends the session's
DELETE and closes the HTTP client).

Over HTTP, a server that dies while it streams a call's answer leaves the SDK waiting forever: it
treats a POST response stream that ends early as "no answer yet" and only reconnects when the
server had numbered its events (mcp 1.30, `_handle_sse_response`). So the HTTP client's transport
wraps each POST response body, and a body that breaks (connection reset, incomplete chunked read)
is reported through `on_broken`, which the connection turns into "the server is unavailable".
Redirects are the SDK's: followed only within the endpoint's origin, keeping the method.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import httpx

from vtcode import __version__
from vtcode.config.model import McpServerConfig
from vtcode.mcp.remote import request_headers

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

    Streams = tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]

__all__ = ["HTTP_READ_FLOOR_SECS", "open_streams"]

HTTP_READ_FLOOR_SECS = 300.0  # the SDK's own read timeout: an idle event stream stays open

OnBroken = Callable[[BaseException], None]


class _WatchedBody(httpx.AsyncByteStream):
    """A response body that reports a transport failure before re-raising it."""

    def __init__(self, inner: httpx.AsyncByteStream, on_broken: OnBroken) -> None:
        self._inner = inner
        self._on_broken = on_broken

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                yield chunk
        except httpx.TransportError as e:
            self._on_broken(e)
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


class _WatchedTransport(httpx.AsyncBaseTransport):
    """httpx's own transport, with the body of every POST answer watched (`_WatchedBody`)."""

    def __init__(self, on_broken: OnBroken) -> None:
        self._inner = httpx.AsyncHTTPTransport(retries=0)
        self._on_broken = on_broken

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        if request.method == "POST":
            assert isinstance(response.stream, httpx.AsyncByteStream)
            response.stream = _WatchedBody(response.stream, self._on_broken)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def http_client(
    config: McpServerConfig, environ: Mapping[str, str], on_broken: OnBroken
) -> httpx.AsyncClient:
    """The HTTP client of one URL server (raises CredentialError for a missing token)."""
    connect = config.startup_timeout_seconds
    timeout = httpx.Timeout(
        connect, read=max(HTTP_READ_FLOOR_SECS, config.timeout_seconds + connect)
    )
    return httpx.AsyncClient(
        headers={"user-agent": f"vtcode/{__version__}", **request_headers(config, environ)},
        timeout=timeout,
        transport=_WatchedTransport(on_broken),
    )


@contextlib.asynccontextmanager
async def open_streams(
    config: McpServerConfig,
    workspace: Path,
    *,
    errlog: TextIO,
    on_started: Callable[[], None],
    on_broken: OnBroken,
) -> AsyncIterator[Streams]:
    """The server's stream pair for as long as the context is open; `on_started` runs once the
    process exists (stdio) or the HTTP client is made."""
    if config.url:
        from mcp.client.streamable_http import streamable_http_client

        async with (
            http_client(config, os.environ, on_broken) as client,
            streamable_http_client(config.url, http_client=client) as (read, write, _),
        ):
            on_started()
            yield read, write
        return

    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    command, args = _orphan_proof(config, workspace)
    params = StdioServerParameters(
        command=command,
        args=args,
        env=dict(config.env),  # over the SDK's minimal default (PATH, HOME, ...)
        cwd=str(workspace),
    )
    async with stdio_client(params, errlog=errlog) as (read, write):
        on_started()
        yield read, write


def _orphan_proof(config: McpServerConfig, workspace: Path) -> tuple[str, list[str]]:
    """The server's command behind `setpriv --pdeathsig KILL`, so that a vtcode killed outright
    (SIGKILL, the eval's timeout, the OOM killer) takes it along. A server that reads its stdin
    ends when that closes; one that never reads it (hung at start, or busy) lived on. The
    signal follows the thread that started it, the MCP loop thread, which ends only after
    `McpManager.close`.

    And behind `env --default-signal=INT,TERM`: the MCP loop thread blocks SIGINT and SIGTERM
    (vtcode/threads.py) and a child inherits that mask, so the server was born deaf to SIGTERM,
    the SDK's own way of ending it, and to a user's `kill`: only SIGKILL, 2 s later, ended it.
    (GNU env's --default-signal also unblocks; where env lacks it, the mask stays.)

    A command that cannot be found is left unwrapped, so its error stays the SDK's "cannot
    run" instead of the wrapper's exit 127."""
    command, args = config.command, list(config.args)
    if "/" in command:
        target = workspace / command  # an absolute command stays itself
        found = target.is_file() and os.access(target, os.X_OK)
    else:
        path = config.env.get("PATH", os.environ.get("PATH"))
        found = shutil.which(command, path=path) is not None
    prefix = [*(_pdeathsig() or []), *_unblocking_env()] if found else []
    return (prefix[0], [*prefix[1:], command, *args]) if prefix else (command, args)


def _pdeathsig() -> list[str] | None:
    from vtcode.sandbox.launch import pdeathsig_prefix

    return pdeathsig_prefix()


@functools.cache
def _unblocking_env() -> list[str]:
    """`env --default-signal=INT,TERM --` where this env supports it (GNU coreutils 8.31+)."""
    exe = shutil.which("env")
    if exe is None:
        return []
    wrapper = [exe, "--default-signal=INT,TERM", "--"]
    try:
        probe = subprocess.run([*wrapper, "true"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    return wrapper if probe.returncode == 0 else []
