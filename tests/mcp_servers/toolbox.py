"""A real stdio MCP server (the official SDK's FastMCP) for vtcode's tests.

Tools: `echo`, `add`, `boom` (always raises), `slow` (sleeps). Flags shape the failure cases:
`--pid-file PATH` writes the server's pid first thing (orphan checks), `--exit-after N` makes the
process exit without answering on call N+1 (a server dying mid-session), `--fail-on-start`
exits before serving with a message on stderr, `--hang-on-start` never answers `initialize`,
`--odd-names` also lists tools whose names providers would refuse, `--started-file PATH` is
created when `slow` starts (a real signal to interrupt on), `--start-delay SECS` is a server that
takes that long before it serves (a slow start under load).

`--http PORT_FILE` serves MCP over streamable HTTP on 127.0.0.1 instead of stdio (port chosen by
the kernel, written to PORT_FILE once the socket listens); with it, `--require-bearer-env NAME`
answers 401 unless `Authorization: Bearer <value of NAME>` is sent, `--request-log PATH` appends
each request's method, path and headers as a JSON line, and the `whoami` tool returns the
Authorization header it was called with (a server that echoes a secret back). `--resources`
offers the resource `notes://readme`.

`--stall-calls N` adds two tools and makes the first N calls of each, `lookup` (annotated
read-only and idempotent) and `record` (no annotations), never answer in time (they sleep 60 s);
later calls answer at once: a transient failure for the harness's tool retries. `--call-log
PATH` appends one line per call of either (`lookup alpha`), so a test counts the attempts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

parser = argparse.ArgumentParser()
parser.add_argument("--pid-file")
parser.add_argument("--exit-after", type=int)
parser.add_argument("--fail-on-start", action="store_true")
parser.add_argument("--hang-on-start", action="store_true")
parser.add_argument("--odd-names", action="store_true")
parser.add_argument("--started-file", help="`slow` creates this file when it starts")
parser.add_argument("--start-delay", type=float, default=0.0)
parser.add_argument("--http", metavar="PORT_FILE", help="serve streamable HTTP on 127.0.0.1")
parser.add_argument("--require-bearer-env", metavar="NAME")
parser.add_argument("--request-log", metavar="PATH")
parser.add_argument("--resources", action="store_true", help="also offer one resource")
parser.add_argument("--stall-calls", type=int)
parser.add_argument("--call-log")
opts = parser.parse_args()

if opts.pid_file:
    Path(opts.pid_file).write_text(str(os.getpid()))
if opts.fail_on_start:
    sys.stderr.write("toolbox: cannot open the database (simulated start failure)\n")
    sys.stderr.flush()
    sys.exit(3)
if opts.start_delay:
    time.sleep(opts.start_delay)  # the behaviour under test: a server slow to start
if opts.hang_on_start:
    while True:  # never reads stdin, never answers: only a signal ends it
        time.sleep(3600)

server = FastMCP("toolbox", log_level="WARNING")
calls = 0


def _count() -> None:
    global calls
    calls += 1
    if opts.exit_after is not None and calls > opts.exit_after:
        sys.stderr.write(f"toolbox: exiting on call {calls}\n")
        sys.stderr.flush()
        os._exit(7)


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    _count()
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    _count()
    return a + b


@server.tool()
def boom() -> str:
    """Always fails."""
    _count()
    raise ValueError("boom: this tool always fails")


if opts.stall_calls is not None:
    stalled: dict[str, int] = {}

    async def _maybe_stall(tool: str, key: str) -> None:
        if opts.call_log:
            with open(opts.call_log, "a", encoding="utf-8") as log:
                log.write(f"{tool} {key}\n")
        stalled[tool] = stalled.get(tool, 0) + 1
        if stalled[tool] <= opts.stall_calls:
            await asyncio.sleep(60)  # the client's timeout_seconds ends the wait long before

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True, idempotentHint=True))
    async def lookup(key: str) -> str:
        """Look a key up (read-only; may stall, see --stall-calls)."""
        await _maybe_stall("lookup", key)
        return f"value of {key}"

    @server.tool()
    async def record(key: str) -> str:
        """Record a key (not declared idempotent; may stall, see --stall-calls)."""
        await _maybe_stall("record", key)
        return f"recorded {key}"


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    _count()
    if opts.started_file:
        Path(opts.started_file).write_text("slow started")
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


if opts.odd_names:

    @server.tool(name="dotted.name")
    def dotted() -> str:
        """A name with a dot (refused by vtcode)."""
        return "never offered"


if opts.resources:

    @server.resource("notes://readme", mime_type="text/markdown")
    def readme() -> str:
        """The toolbox's notes."""
        return "# Toolbox\nfour tools and this note"


if opts.http:
    from mcp.server.fastmcp import Context

    @server.tool()
    def whoami(ctx: Context) -> str:  # type: ignore[type-arg]
        """The Authorization header this call came with."""
        request = ctx.request_context.request
        return str(request.headers.get("authorization", "") if request is not None else "")


def _serve_http(port_file: str) -> None:
    """Streamable HTTP on a socket bound before uvicorn starts, so the port is known."""
    import json
    import socket

    import uvicorn

    app = server.streamable_http_app()
    expected = os.environ.get(opts.require_bearer_env or "", "")

    async def guarded(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] == "http":
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            if opts.request_log:
                with open(opts.request_log, "a") as f:
                    f.write(
                        json.dumps(
                            {"method": scope["method"], "path": scope["path"], "headers": headers}
                        )
                        + "\n"
                    )
            if opts.require_bearer_env and headers.get("authorization") != f"Bearer {expected}":
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain")],
                    }
                )
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await app(scope, receive, send)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    tmp = port_file + ".tmp"
    Path(tmp).write_text(str(sock.getsockname()[1]))
    os.replace(tmp, port_file)  # readers never see a half-written port
    config = uvicorn.Config(guarded, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    if opts.http:
        _serve_http(opts.http)
    else:
        server.run("stdio")
